"""Light constants of the agents, importable without loading a model client (openai, langchain).

The CLI's option declarations and ``--help`` read their defaults from here, so showing help
loads no model client. The modules that use them import them from here.
"""

from typing import Literal

BASELINE = "baseline"  # the offline model spec: deterministic agents, no API key (agents/seam/models.py)
DEFAULT_MAX_NUGGETS = 10  # nuggets written per question (agents/nuggets.py)
# How replies are asked for (agents/seam/structured_output.py): the context's field and the seam share it.
StructuredOutput = Literal["auto", "json_schema", "function_calling", "json_mode"]
