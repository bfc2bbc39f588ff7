"""The roles that think: prompts, pydantic output schemas and the chat-model seam.

No I/O besides the model. Stores (cache, usage ledger) are handed in by the caller, so
this package imports none of graphs/, tools/, stores/ or evals/.
"""
