"""Structured output against servers that do it differently (agents/seam/structured_output.py):
the fallback order and its memory per endpoint, JSON found in fences and prose, and the
corrective turn after an invalid reply. Real openai SDK client, loopback server."""

from __future__ import annotations

import json
import logging
import threading

import pytest

from benchsmith.agents.seam.backends import ModelSettings, OpenAIBackend
from benchsmith.agents.seam.models import InvalidOutput, ModelEndpointError, ModelSeam
from benchsmith.agents.seam.structured_output import CORRECTION_PREFIX, extract_json_object
from benchsmith.stores.persistence.llm_cache import LLMCache
from tests.openai_server import (
    CONTEXT_OVERFLOW_MESSAGE,
    LEGACY_LLAMA_CPP,
    PLAIN_COMPLETIONS,
    FakeOpenAIServer,
    fenced,
)
from tests.seam_fixtures import GOOD, SECRET, Judge, RecordingSleep, Verdict

FAST = ModelSettings(timeout_s=2.0, backoff_initial_s=0.01, backoff_max_s=0.05)


@pytest.fixture
def environment(monkeypatch):
    """Point the seam at whichever server a test starts: ``environment(server)``."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.delenv("OPENAI_API_BASE", raising=False)

    def point_at(server: FakeOpenAIServer) -> FakeOpenAIServer:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        return server

    return point_at


def seam_for(model: str = "m1", settings: ModelSettings = FAST, **options) -> ModelSeam:
    return ModelSeam(OpenAIBackend(model, settings), settings=settings, sleep=RecordingSleep(), **options)


def format_of(request: dict) -> str:
    """Which structured-output method a request used."""
    if request.get("tools"):
        return "function_calling"
    return {"json_schema": "json_schema", "json_object": "json_mode"}.get(
        (request.get("response_format") or {}).get("type"), "prompt"
    )


def schema_in_prompt(request: dict) -> bool:
    return "JSON schema (named Verdict)" in request["messages"][0]["content"]


# 1. JSON found in fences and prose.


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(GOOD),
        fenced(GOOD),
        f"I think this is right: {json.dumps(GOOD)} -- hope that helps {{not json}}",
        f"```\n{json.dumps(GOOD)}\n```",
        f"{json.dumps(GOOD)}\n\nTo repeat: {json.dumps(GOOD, indent=2)}",  # the same object twice is one
        'Use {braces} sparingly. {"rationale": "nested {\\"a\\": 1} in a string", "score": 4, "meta": {"x": 1}}',
    ],
    ids=["bare", "fenced", "prose", "plain-fence", "repeated", "braces-and-nesting"],
)
def test_one_json_object_in_fences_or_prose_is_found(text):
    found = extract_json_object(text)

    assert found["score"] == 4
    assert found == GOOD or found["meta"] == {"x": 1}  # the nested case keeps its inner object inside


def test_two_different_json_objects_are_invalid_output():
    text = f"Either {json.dumps(GOOD)} or {json.dumps({**GOOD, 'score': 2})}."

    with pytest.raises(InvalidOutput, match="2 different JSON objects") as caught:
        extract_json_object(text)

    assert caught.value.reply == text


@pytest.mark.parametrize("text", ["", "no JSON at all", "[1, 2, 3]", '{"rationale": "cut off'])
def test_a_reply_without_a_json_object_is_invalid_output(text):
    with pytest.raises(InvalidOutput, match="no JSON object"):
        extract_json_object(text)


@pytest.mark.parametrize(
    ("rejects", "method"),
    [(frozenset(), "json_schema"), (LEGACY_LLAMA_CPP, "function_calling"), (PLAIN_COMPLETIONS, "prompt")],
)
def test_every_reply_fenced_in_prose_is_accepted_at_once(environment, rejects, method):
    server = environment(FakeOpenAIServer(rejects=rejects, reply_style="fenced", replier=lambda request: GOOD).start())
    try:
        seam = seam_for()
        results = [seam.run(Judge(), question=f"q{i}") for i in range(3)]
    finally:
        server.stop()

    assert results == [Verdict(**GOOD)] * 3
    assert seam.stats.retries == 0
    # Function calling too: the server answers with fenced content instead of a tool call.
    assert [format_of(request) for request in server.requests][-3:] == [method] * 3


# 2. The fallback order, remembered per endpoint.


def test_fallback_order_ends_in_the_prompt_and_the_endpoint_remembers_it(environment, caplog):
    server = environment(FakeOpenAIServer(rejects=PLAIN_COMPLETIONS, replier=lambda request: GOOD).start())
    base_url = server.base_url
    try:
        with caplog.at_level(logging.WARNING, logger="benchsmith"):
            first = seam_for("m1")
            assert first.run(Judge(), question="q") == Verdict(**GOOD)
            tried = [format_of(request) for request in server.requests]
            other_model = seam_for("m2")  # another seam, another model, the same endpoint
            assert other_model.run(Judge(), question="q") == Verdict(**GOOD)
    finally:
        server.stop()

    assert tried == ["json_schema", "function_calling", "json_mode", "prompt"]
    assert [schema_in_prompt(request) for request in server.requests[:4]] == [False, False, True, True]
    assert [format_of(request) for request in server.requests[4:]] == ["prompt"]
    assert schema_in_prompt(server.requests[4])
    assert first.stats.retries == 0  # a fallback is no retry
    assert first.stats_dict()["structured_output"] == other_model.stats_dict()["structured_output"] == "prompt"
    # Logged once per step, by the first seam only.
    warnings = [record.getMessage() for record in caplog.records if record.name == "benchsmith"]
    assert len(warnings) == 3
    assert all(base_url in warning for warning in warnings)
    assert "using function_calling" in warnings[0] and "using prompt" in warnings[2]


@pytest.mark.parametrize("status", [400, 422])
def test_json_schema_rejected_falls_back_to_function_calling_and_the_next_seam_starts_there(environment, status):
    server = environment(
        FakeOpenAIServer(rejects=LEGACY_LLAMA_CPP, rejection_status=status, replier=lambda request: GOOD).start()
    )
    try:
        assert seam_for("m1").run(Judge(), question="q") == Verdict(**GOOD)
        second = seam_for("m1")
        assert second.run(Judge(), question="another question") == Verdict(**GOOD)
    finally:
        server.stop()

    assert [format_of(request) for request in server.requests] == [
        "json_schema",
        "function_calling",
        "function_calling",
    ]
    assert second.stats.structured_output == "function_calling"


@pytest.mark.parametrize(
    "wording",
    [
        {},  # the words of llama.cpp: "response_format type must be ...", "tools param requires --jinja flag"
        {"json_schema": "Bad Request", "tools": "invalid request"},  # refusals that name nothing
        {"json_schema": "Unsupported parameter: strict", "tools": "Unrecognized request argument: tool_choice"},
    ],
    ids=["named", "unexplained", "parameter-named"],
)
def test_auto_reaches_json_mode_when_json_schema_and_function_calling_are_rejected(environment, wording):
    server = environment(
        FakeOpenAIServer(
            rejects={"json_schema", "tools"}, rejection_messages=wording, replier=lambda request: GOOD
        ).start()
    )
    try:
        seam = seam_for("m1")
        assert seam.run(Judge(), question="q") == Verdict(**GOOD)
    finally:
        server.stop()

    assert [format_of(request) for request in server.requests] == ["json_schema", "function_calling", "json_mode"]
    assert schema_in_prompt(server.requests[-1])
    assert seam.stats_dict()["structured_output"] == "json_mode"


def test_concurrent_first_calls_step_down_one_method_at_a_time(environment, caplog):
    server = environment(
        FakeOpenAIServer(rejects=LEGACY_LLAMA_CPP, replier=lambda request: GOOD, latency_s=0.05).start()
    )
    seam = seam_for()
    try:
        with caplog.at_level(logging.WARNING, logger="benchsmith"):
            threads = [
                threading.Thread(target=seam.run, args=(Judge(),), kwargs={"question": f"q{i}"}) for i in range(6)
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=10)
    finally:
        server.stop()

    assert seam.stats.calls == 6
    assert seam.stats.structured_output == "function_calling"  # not skipped on to JSON mode
    assert format_of(server.requests[-1]) == "function_calling"
    assert len([r for r in caplog.records if r.name == "benchsmith"]) == 1


def test_an_explicit_method_never_falls_back(environment):
    server = environment(FakeOpenAIServer(rejects=LEGACY_LLAMA_CPP, replier=lambda request: GOOD).start())
    try:
        seam = seam_for(settings=ModelSettings(timeout_s=2.0, structured_output="json_schema"))
        with pytest.raises(ModelEndpointError, match=r"rejected json_schema .*or auto"):
            seam.run(Judge(), question="q")
    finally:
        server.stop()

    assert [format_of(request) for request in server.requests] == ["json_schema"]


@pytest.mark.parametrize("method", ["function_calling", "json_mode"])
def test_an_explicit_method_is_used_from_the_first_call(environment, method):
    server = environment(FakeOpenAIServer(replier=lambda request: GOOD).start())
    try:
        seam = seam_for(settings=ModelSettings(timeout_s=2.0, structured_output=method))
        assert seam.run(Judge(), question="q") == Verdict(**GOOD)
    finally:
        server.stop()

    assert [format_of(request) for request in server.requests] == [method]
    assert schema_in_prompt(server.requests[0]) == (method == "json_mode")


def test_a_bad_request_that_is_not_about_the_format_does_not_fall_back(environment):
    """A prompt too long for the model names the functions too; it is no reason to change method."""
    server = environment(FakeOpenAIServer(rejects=LEGACY_LLAMA_CPP, replier=lambda request: GOOD).start())
    try:
        seam_for().run(Judge(), question="q")  # now on function calling
        server.inject("400")
        with pytest.raises(ModelEndpointError, match="maximum context length"):
            seam_for().run(Judge(), question="a very long question")
    finally:
        server.stop()

    assert CONTEXT_OVERFLOW_MESSAGE.startswith("This model's maximum context length")
    assert [format_of(request) for request in server.requests] == [
        "json_schema",
        "function_calling",
        "function_calling",
    ]


def test_unknown_structured_output_setting_is_refused():
    with pytest.raises(ValueError, match="auto, json_schema, function_calling, json_mode"):
        ModelSettings(structured_output="xml")


# 3. The corrective turn.


@pytest.mark.parametrize("rejects", [frozenset(), LEGACY_LLAMA_CPP], ids=["json_schema", "function_calling"])
def test_an_invalid_reply_is_retried_with_the_error_fed_back_once(environment, rejects, tmp_path):
    server = environment(FakeOpenAIServer(rejects=rejects).start())
    bad = {"rationale": "off the scale", "score": 9}
    cache = LLMCache(tmp_path / "cache.sqlite")
    try:
        server.script(GOOD)
        seam_for().run(Judge(), question="warm up: find the method the endpoint takes")
        server.requests.clear()
        server.script(bad, GOOD)
        seam = seam_for(cache=cache)
        assert seam.run(Judge(), question="q") == Verdict(**GOOD)
        # The reply is cached under the original messages: asking again costs nothing.
        again = seam_for(cache=cache)
        assert again.run(Judge(), question="q") == Verdict(**GOOD)
    finally:
        server.stop()
        cache.close()

    first, second = server.requests
    assert second["messages"][:2] == first["messages"]
    assistant, correction = second["messages"][2:]
    assert assistant["role"] == "assistant" and json.loads(assistant["content"]) == bad
    assert correction["role"] == "user" and correction["content"].startswith(CORRECTION_PREFIX)
    assert "score: Input should be less than or equal to 5" in correction["content"]
    assert format_of(second) == format_of(first)
    assert seam.stats.retried_errors == {"InvalidOutput": 1}
    assert again.stats.cache_hits == 1


def test_each_retry_carries_one_corrective_turn_for_the_latest_reply(environment):
    server = environment(FakeOpenAIServer().start())
    two_objects = f"{json.dumps(GOOD)} or {json.dumps({**GOOD, 'score': 1})}"
    server.script("no JSON here", two_objects, '```json\n{"rationale":', GOOD)
    try:
        seam = seam_for()
        assert seam.run(Judge(), question="q") == Verdict(**GOOD)
    finally:
        server.stop()

    corrections = [request["messages"][2:] for request in server.requests]
    assert corrections[0] == []
    assert [len(turn) for turn in corrections[1:]] == [2, 2, 2]  # replaced, never piled up
    assert corrections[1][0]["content"] == "no JSON here" and "no JSON object" in corrections[1][1]["content"]
    assert "2 different JSON objects" in corrections[2][1]["content"]
    assert corrections[3][0]["content"].startswith("```json")
    assert seam.stats.retries == 3


def test_a_truncated_reply_is_fed_back_as_cut_off(environment):
    server = environment(FakeOpenAIServer().start())
    server.inject("truncated")
    server.script(GOOD)
    try:
        assert seam_for().run(Judge(), question="q") == Verdict(**GOOD)
    finally:
        server.stop()

    correction = server.requests[1]["messages"][-1]["content"]
    assert correction.startswith(CORRECTION_PREFIX) and "cut off at the token limit" in correction
    assert server.requests[1]["messages"][-2]["content"].startswith('{"rationale"')


def test_invalid_on_every_attempt_raises_invalid_output_naming_the_problem(environment):
    server = environment(FakeOpenAIServer(replier=lambda request: "I cannot answer that.").start())
    try:
        seam = seam_for(settings=ModelSettings(timeout_s=2.0, max_attempts=3, backoff_initial_s=0.01))
        with pytest.raises(InvalidOutput, match=r"no valid Verdict in 3 attempt.*no JSON object.*I cannot answer"):
            seam.run(Judge(), question="q")
    finally:
        server.stop()

    assert len(server.requests) == 3
