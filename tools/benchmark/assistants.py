"""The user's own assistant, as `benchsmith replay` talks to it: one turn at a time, the question
and the conversation so far in, its reply and the passages it used out.

Three kinds (an assistant spec):

* a Python callable ``(question, history) -> reply``, where ``history`` is the conversation so far
  as ``[{"user": ..., "agent": ...}]`` (the agent's words are the assistant's own earlier replies)
  and the reply is a dict ``{"reply": str, "passages": [...]}`` or a pair ``(reply, passages)``;
* a LangGraph graph (compiled, or a ``RemoteGraph`` to a running server): invoked with
  ``{"question": ..., "history": [...]}``; its final state's ``reply`` (else ``answer``, else the
  last of ``messages``) and ``passages``;
* ``http://HOST/…/chat/completions``: an OpenAI-compatible chat endpoint, sent the conversation as
  ``messages`` (``model``: the text after ``#`` in the spec, default ``assistant``); the reply is
  ``choices[0].message.content`` and the passages it used are the documented extra field
  ``choices[0].message.passage_ids`` (else a top-level ``passage_ids``); ``$BENCHSMITH_ASSISTANT_API_KEY``,
  when set, is sent as ``Authorization: Bearer``.

``passages`` are corpus ids in the order the assistant ranks them, or LangChain Documents mapped
to corpus ids as outside retrievers' are (tools/retrieval/outside_retrievers.py: metadata ``id``, ``Document.id``,
exact text). ``py:package.module:object`` names an importable callable or graph; a registered name
(:func:`register_assistant`) or an object given to the Python API works too.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from benchsmith.stores.errors import InputError
from benchsmith.tools.retrieval.named_objects import NamedObjects
from benchsmith.tools.retrieval.outside_retrievers import (
    DEFAULT_ID_KEY,
    HTTP_PREFIXES,
    PY_PREFIX,
    Found,
    OutsideRetrieverError,
    endpoint_client,
    import_object,
    post_json,
)

DEFAULT_CHAT_MODEL = "assistant"
ASSISTANT_KEY_VARIABLE = "BENCHSMITH_ASSISTANT_API_KEY"  # sent as a bearer token to a chat endpoint


@dataclass(frozen=True)
class AssistantTurn:
    """What the assistant said and used on one turn: its reply, and its passages in its order."""

    reply: str
    passages: list[Found]


Assistant = Callable[[str, list[dict[str, str]]], AssistantTurn]


def _passages(items: Sequence[Any], id_key: str = DEFAULT_ID_KEY) -> list[Found]:
    """Ids or LangChain Documents as :class:`Found`, scored by rank (first: highest)."""
    found = []
    for rank, item in enumerate(items):
        score = float(len(items) - rank)
        if isinstance(item, str):
            found.append(Found(item, score))
        elif hasattr(item, "page_content"):
            value = (item.metadata or {}).get(id_key)
            value = value if value is not None else getattr(item, "id", None)
            found.append(Found(None if value is None else str(value), score, item.page_content))
        else:
            raise OutsideRetrieverError(
                f"a passage must be a corpus id or a LangChain Document, got {type(item).__name__}"
            )
    return found


def _turn_of(value: Any) -> AssistantTurn:
    if isinstance(value, AssistantTurn):
        return value
    if isinstance(value, tuple) and len(value) == 2:
        reply, passages = value
    elif isinstance(value, dict):
        reply = value.get("reply", value.get("answer"))
        if reply is None and value.get("messages"):
            last = value["messages"][-1]
            reply = getattr(last, "content", None) if not isinstance(last, dict) else last.get("content")
        passages = value.get("passages") or []
    else:
        raise OutsideRetrieverError(
            f"an assistant's turn must be {{'reply': ..., 'passages': [...]}} or (reply, passages), got {type(value).__name__}"
        )
    return AssistantTurn(str(reply or ""), _passages(list(passages)))


def callable_assistant(function: Callable[..., Any]) -> Assistant:
    return lambda question, history: _turn_of(function(question, history))


def graph_assistant(graph: Any) -> Assistant:
    """Each turn a run of its own: invoked in a fresh context, so that LangGraph does not take it for a
    subgraph of the replay's node (whose checkpoints would then answer a resumed turn from the killed
    run's, and carry one turn's state into the next). A graph that keeps a conversation in its own
    checkpointer is wrapped in a callable that passes its thread."""

    def ask(question: str, history: list[dict[str, str]]) -> AssistantTurn:
        state = {"question": question, "history": history}
        return _turn_of(contextvars.Context().run(graph.invoke, state))

    return ask


def chat_assistant(spec: str, timeout_s: float = 60.0) -> Assistant:
    url, _, model = spec.partition("#")
    client = endpoint_client(url, ASSISTANT_KEY_VARIABLE, timeout_s)

    def ask(question: str, history: list[dict[str, str]]) -> AssistantTurn:
        messages = [
            message
            for turn in history
            for message in ({"role": "user", "content": turn["user"]}, {"role": "assistant", "content": turn["agent"]})
        ] + [{"role": "user", "content": question}]
        response = post_json(client, url, {"model": model or DEFAULT_CHAT_MODEL, "messages": messages})
        try:
            payload = response.json()
            message = payload["choices"][0]["message"]
            ids = message.get("passage_ids", payload.get("passage_ids")) or []
            return AssistantTurn(str(message.get("content") or ""), _passages([str(i) for i in ids]))
        except (ValueError, KeyError, IndexError, TypeError) as error:
            raise OutsideRetrieverError(
                f"{url} replied off the contract (choices[0].message.content and passage_ids): {error}"
            ) from None

    return ask


def assistant_of(value: Any) -> Assistant:
    """An object as an assistant: a LangGraph graph (anything with ``invoke`` taking a state), else a callable."""
    if (hasattr(value, "invoke") and hasattr(value, "get_graph")) or type(value).__name__ == "RemoteGraph":
        return graph_assistant(value)
    if callable(value):
        return callable_assistant(value)
    raise InputError(
        f"assistant {type(value).__name__} is neither a LangGraph graph nor a callable (question, history)"
    )


_assistants: NamedObjects[Assistant] = NamedObjects()


def register_assistant(name: str, assistant: Any) -> str:
    """Make ``name`` an assistant spec (``--assistant NAME``, ``assistant=NAME``) for ``assistant``."""
    if not name or name.startswith((*HTTP_PREFIXES, PY_PREFIX)):
        raise InputError(f"assistant name {name!r} is malformed: choose another")
    return _assistants.register(name, assistant, assistant_of(assistant))


def assistant_spec_for(value: Any) -> str:
    """A spec as it is; an object registered under its own name (``.name``, its function or class name)."""
    return _assistants.spec_of(
        value, register_assistant, "another assistant is registered as {name}: register this one under its own name"
    )


def resolve_assistant(spec: str, timeout_s: float = 60.0) -> Assistant:
    if (found := _assistants.find(spec)) is not None:
        return found
    if spec.startswith(HTTP_PREFIXES):
        built = chat_assistant(spec, timeout_s)
    elif spec.startswith(PY_PREFIX):
        built = assistant_of(import_object(spec, "--assistant"))
    else:
        raise InputError(
            f"unknown assistant {spec!r}: give http://HOST/v1/chat/completions, py:module:object or a registered name"
        )
    return _assistants.built_once(spec, built)


def clear_assistants() -> None:
    _assistants.clear()
