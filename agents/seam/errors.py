"""The errors the model seam raises.

Each carries a redacted message (see :mod:`benchsmith.agents.seam.redaction`) and is raised
without the transport exception chained to it: run records and LangGraph checkpoints store
task errors, and the openai exceptions hold the request, its headers and the server's text.
"""

from __future__ import annotations


class ModelSeamError(RuntimeError):
    """A model call failed; the message says why and what to do about it."""


class InvalidOutput(ModelSeamError):
    """The model answered, but not with a valid instance of the schema (retried, with the
    error fed back). ``reply`` is the text it answered, when there was one."""

    def __init__(self, message: str, reply: str | None = None):
        super().__init__(message)
        self.reply = reply


class ModelEndpointError(ModelSeamError):
    """The endpoint refused in a way no retry fixes (bad key, unknown model, bad request).

    The endpoint is latched: every later call to it fails at once with the same message.
    """

    def __init__(self, message: str, *, base_url: str | None = None, status_code: int | None = None):
        super().__init__(message)
        self.base_url = base_url
        self.status_code = status_code


class ModelUnavailableError(ModelSeamError):
    """Transient faults (429, 5xx, timeouts, connection errors) outlasted every attempt."""

    def __init__(self, message: str, *, last_error: str = ""):
        super().__init__(message)
        self.last_error = last_error  # the name of the last fault, e.g. "InternalServerError"


class MissingAPIKeyError(ModelSeamError, ValueError):
    """No ``OPENAI_API_KEY`` for an endpoint that is not on this machine or network."""


class StructuredOutputUnsupported(Exception):
    """The endpoint rejected this way of asking for structured output (internal: the backend
    falls back to the next method)."""

    def __init__(self, method: str, server_message: str, status_code: int):
        super().__init__(f"{method}: {server_message}")
        self.method = method
        self.server_message = server_message
        self.status_code = status_code
