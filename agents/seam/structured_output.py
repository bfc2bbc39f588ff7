"""Asking an OpenAI-compatible server for a pydantic object, and reading what it answers.

Methods, in the order ``auto`` tries them:

* ``json_schema``: ``response_format: {type: json_schema, strict: true}`` (OpenAI, vLLM, recent
  llama.cpp and Ollama);
* ``function_calling``: the schema as the one tool, forced with ``tool_choice``;
* ``json_mode``: ``response_format: {type: json_object}`` and the schema written into the prompt;
* ``prompt``: the schema in the prompt only, for servers that reject every format parameter.

An endpoint moves to the next method when it answers 400 or 422 with an error about the format
(``response_format``, ``json_schema``, ``tools``...), or with one that names no part of the request
at all ("Bad Request", "invalid request"): servers word their refusals of tools and formats in many
ways, and the next method, which sends fewer format parameters, is the test of whether the format was
the problem (the last, ``prompt``, sends none, so a request that is bad for another reason still
fails there, with the server's words). An error that names another part of the request (the model,
the messages, a sampling parameter) or a prompt too long is no format problem. An explicit method
never falls back.

Whatever the method, a reply is accepted when it holds exactly one JSON object, bare, in code
fences or among prose, that validates against the schema. An invalid reply is retried with the
error fed back as one corrective turn (:func:`corrective_turn`).
"""

from __future__ import annotations

import json
from typing import Any

import openai
from pydantic import BaseModel, ValidationError

from benchsmith.agents.seam.errors import InvalidOutput

STRUCTURED_OUTPUT_CHOICES: tuple[str, ...] = ("auto", "json_schema", "function_calling", "json_mode")
FALLBACK_ORDER: tuple[str, ...] = ("json_schema", "function_calling", "json_mode", "prompt")

# The corrective turn starts with this; tests' scripted models recognise it by it.
CORRECTION_PREFIX = "Your previous reply was not valid"

# Words that tie a 400/422 to the way we asked for structured output, per method.
_FORMAT_WORDS = {
    "json_schema": (
        "response_format",
        "response format",
        "json_schema",
        "json schema",
        "structured output",
        "schema",
        "strict",
    ),
    "function_calling": ("tool", "function"),
    "json_mode": ("response_format", "response format", "json_object", "json mode", "json_mode"),
}
# Words that tie a 400/422 to some other part of the request: not the format's fault.
_OTHER_PARAMETER_WORDS = (
    "model",
    "messages",
    "temperature",
    "seed",
    "max_tokens",
    "max_completion_tokens",
    "top_p",
    "api key",
    "api_key",
    "role",
    "content",
)
# A prompt too long for the model mentions "functions" or "tools" too: never a format problem.
_OVERFLOW_WORDS = (
    "context length",
    "context_length",
    "context window",
    "maximum context",
    "too long",
    "too many tokens",
    "reduce the length",
)

_decoder = json.JSONDecoder()


def check_structured_output(value: str) -> str:
    if value not in STRUCTURED_OUTPUT_CHOICES:
        raise ValueError(f"structured output {value!r} is not one of {', '.join(STRUCTURED_OUTPUT_CHOICES)}")
    return value


def first_method(setting: str) -> str:
    return FALLBACK_ORDER[0] if setting == "auto" else setting


def next_method(method: str) -> str | None:
    """The method ``auto`` tries after ``method`` was rejected; ``None`` after the last."""
    position = FALLBACK_ORDER.index(method)
    return FALLBACK_ORDER[position + 1] if position + 1 < len(FALLBACK_ORDER) else None


def request_options(method: str, schema: type[BaseModel]) -> dict[str, Any]:
    """The request parameters of ``method`` for ``schema`` (bound to the chat model)."""
    if method == "json_schema":
        function = openai.pydantic_function_tool(schema)["function"]  # the SDK's strict schema
        return {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": function["name"], "schema": function["parameters"], "strict": True},
            }
        }
    if method == "function_calling":
        # Deferred: langchain_core is needed only for function calling.
        from langchain_core.utils.function_calling import convert_to_openai_tool

        tool = convert_to_openai_tool(schema)
        return {"tools": [tool], "tool_choice": {"type": "function", "function": {"name": tool["function"]["name"]}}}
    if method == "json_mode":
        return {"response_format": {"type": "json_object"}}
    return {}


def needs_schema_in_prompt(method: str) -> bool:
    return method in ("json_mode", "prompt")


def schema_instructions(schema: type[BaseModel]) -> str:
    return (
        f"Answer with one JSON object, and nothing else, that follows this JSON schema "
        f"(named {schema.__name__}):\n{json.dumps(schema.model_json_schema(), ensure_ascii=False)}"
    )


def with_schema_instructions(messages: list[dict[str, str]], schema: type[BaseModel]) -> list[dict[str, str]]:
    """The messages with the schema appended to the system message (one is added if there is none);
    the last message, the request itself, stays as it is."""
    instructions = schema_instructions(schema)
    if messages and messages[0]["role"] == "system":
        return [{**messages[0], "content": f"{messages[0]['content']}\n\n{instructions}"}, *messages[1:]]
    return [{"role": "system", "content": instructions}, *messages]


def is_format_rejection(error: BaseException, method: str) -> bool:
    """Did the server refuse the format parameters of ``method`` (not the request as a whole)?"""
    if method not in _FORMAT_WORDS or not isinstance(error, openai.APIStatusError):
        return False
    if error.status_code not in (400, 422):
        return False
    text = f"{getattr(error, 'message', '')} {error.body if isinstance(error.body, str | dict) else ''}".lower()
    if any(word in text for word in _OVERFLOW_WORDS):
        return False
    if any(word in text for word in _FORMAT_WORDS[method]):
        return True
    # An unexplained refusal ("Bad Request"): only the format parameters are new to the request.
    return not any(word in text for words in _FORMAT_WORDS.values() for word in words) and not any(
        word in text for word in _OTHER_PARAMETER_WORDS
    )


def json_objects_in(text: str) -> list[dict[str, Any]]:
    """The top-level JSON objects in ``text``, wherever they stand (fences, prose), in order."""
    objects, index = [], 0
    while (start := text.find("{", index)) != -1:
        try:
            value, end = _decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            index = start + 1
            continue
        if isinstance(value, dict):
            objects.append(value)
        index = end
    return objects


def extract_json_object(text: str) -> dict[str, Any]:
    """The one JSON object ``text`` holds: bare, in ```json fences or among prose. The same object
    twice counts once; two different objects, or none, are invalid output."""
    try:
        value = json.loads(text)
        if isinstance(value, dict):
            return value
    except (json.JSONDecodeError, TypeError):
        pass
    distinct = {json.dumps(value, sort_keys=True): value for value in json_objects_in(text or "")}
    if not distinct:
        raise InvalidOutput("the reply holds no JSON object", reply=text)
    if len(distinct) > 1:
        raise InvalidOutput(
            f"the reply holds {len(distinct)} different JSON objects; exactly one is expected", reply=text
        )
    return next(iter(distinct.values()))


def describe_validation_error(error: ValidationError) -> str:
    """``field: problem`` for each problem (at most five), without pydantic's links."""
    problems = [
        f"{'.'.join(str(part) for part in problem['loc']) or '(the object)'}: {problem['msg']}"
        for problem in error.errors()[:5]
    ]
    more = f" (and {error.error_count() - 5} more)" if error.error_count() > 5 else ""
    return "; ".join(problems) + more


def validate_object(value: dict[str, Any], schema: type[BaseModel], reply: str) -> BaseModel:
    try:
        return schema.model_validate(value)
    except ValidationError as error:
        raise InvalidOutput(
            f"the reply does not match {schema.__name__}: {describe_validation_error(error)}", reply=reply
        ) from None


def message_text(content: Any) -> str:
    """A message's content as text (a list of parts keeps its text parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part if isinstance(part, str) else str(part.get("text", "")) for part in content)
    return ""


def parse_completion(completion: dict[str, Any], method: str, schema: type[BaseModel]) -> BaseModel:
    """The schema instance in a chat completion (the server's JSON), or :class:`InvalidOutput`.

    A function-calling reply is read from its tool call, else from its content: some servers
    answer with the JSON as text.
    """
    if not isinstance(completion, dict):
        raise InvalidOutput(f"the reply is a JSON {type(completion).__name__}, not a chat completion")
    choices = completion.get("choices") or []
    if not choices or not isinstance(choices[0], dict):
        raise InvalidOutput("the reply has no choices")
    message = choices[0].get("message") or {}
    text = message_text(message.get("content"))
    arguments = _tool_arguments(message)
    finish_reason = choices[0].get("finish_reason")
    if finish_reason == "length":
        raise InvalidOutput("the reply was cut off at the token limit (finish_reason=length)", reply=text or arguments)
    if finish_reason == "content_filter":
        raise InvalidOutput("the reply was stopped by the server's content filter")
    if method == "function_calling" and arguments:
        return validate_object(extract_json_object(arguments), schema, arguments)
    return validate_object(extract_json_object(text), schema, text)


def _tool_arguments(message: dict[str, Any]) -> str:
    """The arguments (JSON text) of the message's first tool call; empty without one."""
    for call in message.get("tool_calls") or ():
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict) and isinstance(arguments := function.get("arguments"), str):
            return arguments
    return ""


def corrective_turn(reply: str | None, problem: str, schema: type[BaseModel]) -> list[dict[str, str]]:
    """The bad reply as the assistant's turn, then the user naming the problem and asking again."""
    return [
        {"role": "assistant", "content": reply if reply else "(an empty reply)"},
        {
            "role": "user",
            "content": f"{CORRECTION_PREFIX}: {problem}. Answer the previous request again with "
            f"exactly one JSON object that follows the {schema.__name__} schema, "
            "and nothing else.",
        },
    ]
