"""The one seam between the roles and a model: the chat-model seam (models.py), its backends and
call settings (backends.py), the embeddings client (embeddings.py), and what they share: the HTTP
transport, each endpoint's state, the retry policy, structured output, prices, redaction and the
errors raised.

Empty on purpose: importing one module (errors.py, say) loads no model client.
"""
