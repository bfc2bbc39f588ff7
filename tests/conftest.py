"""Test-session setup: everything offline, nothing written outside tmp dirs."""

import os

# Set before any test imports sentence-transformers or chromadb: no hub, no telemetry.
for name, value in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("HF_HUB_DISABLE_PROGRESS_BARS", "1"),
                    ("TOKENIZERS_PARALLELISM", "false"), ("ANONYMIZED_TELEMETRY", "False")):
    os.environ.setdefault(name, value)
os.environ.pop("BENCHSMITH_WORKSPACE", None)

from tests.openai_server import openai_server  # noqa: E402,F401  (the loopback model server fixture)


import pytest  # noqa: E402

from benchsmith.graphs.runtime.resources import clear_registry  # noqa: E402


@pytest.fixture(autouse=True)
def forget_registered_objects():
    """A model or embedder a test registers by name must not answer for that name in the next test."""
    yield
    clear_registry()
