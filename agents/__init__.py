"""The roles that think: prompts and pydantic output schemas; seam/ is the one seam between them and a model.

No I/O besides the model. Stores (cache, usage ledger) are handed in by the caller, so
this package imports none of graphs/, tools/, stores/ or evals/.
"""
