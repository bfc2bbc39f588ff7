"""Self-tests for the fake OpenAI server, driven through the real ChatOpenAI client.

Going through ``langchain_openai`` rather than raw HTTP is the point: the
fake is only useful if the client's request building and response parsing
accept what it sends, and these tests pin down how each fault surfaces.
"""

from __future__ import annotations

import json
import time

import openai
import pydantic
import pytest
from langchain_core.exceptions import OutputParserException
from langchain_openai import ChatOpenAI
from pydantic import BaseModel

from tests.openai_server import (
    LEGACY_LLAMA_CPP,
    PLAIN_COMPLETIONS,
    RETRY_AFTER_MS,
    FakeOpenAIServer,
    conversation_messages,
    fenced,
    requested_schema_name,
)

REPLY = {"rationale": "clear and correct", "score": 4}


class Answer(BaseModel):
    rationale: str
    score: int


def make_llm(server: FakeOpenAIServer, model: str = "m1") -> ChatOpenAI:
    """A client that fails fast: no retries and a timeout below a slow fault."""
    return ChatOpenAI(model=model, base_url=server.base_url, api_key="sk-test", max_retries=0, timeout=0.5)


def structured(server: FakeOpenAIServer, method: str, include_raw: bool = False):
    return make_llm(server).with_structured_output(Answer, method=method, include_raw=include_raw)


def test_json_schema_sends_response_format_and_parses_scripted_dict(openai_server):
    openai_server.script(REPLY)

    assert structured(openai_server, "json_schema").invoke("grade this") == Answer(**REPLY)

    request = openai_server.requests[-1]
    assert request["response_format"]["type"] == "json_schema"
    assert request["response_format"]["json_schema"]["name"] == "Answer"
    assert "tools" not in request


def test_function_calling_sends_tools_and_parses_tool_call(openai_server):
    openai_server.script(REPLY)

    assert structured(openai_server, "function_calling").invoke("grade this") == Answer(**REPLY)

    request = openai_server.requests[-1]
    assert request["tools"][0]["function"]["name"] == "Answer"
    assert request["tool_choice"] == {"type": "function", "function": {"name": "Answer"}}
    assert "response_format" not in request


def test_string_reply_is_sent_verbatim_and_model_is_echoed(openai_server):
    openai_server.script("plain text, not JSON")

    message = make_llm(openai_server, model="judge-x").invoke("hello")

    assert message.content == "plain text, not JSON"
    assert message.response_metadata["model_name"] == "judge-x"


@pytest.mark.parametrize("method", ["json_schema", "function_calling"])
def test_usage_metadata_carries_server_token_counts(openai_server, method):
    openai_server.script(REPLY)
    prompt = "x" * 40  # 40 characters -> 10 prompt tokens

    raw = structured(openai_server, method, include_raw=True).invoke(prompt)["raw"]

    completion_tokens = len('{"rationale": "clear and correct", "score": 4}') // 4
    assert raw.usage_metadata["input_tokens"] == 10
    assert raw.usage_metadata["output_tokens"] == completion_tokens
    assert raw.usage_metadata["total_tokens"] == 10 + completion_tokens


def test_missing_reply_is_a_server_error(openai_server):
    with pytest.raises(openai.InternalServerError, match="no reply was scripted"):
        make_llm(openai_server).invoke("hello")


def test_rate_limit_fault_has_retry_after_and_keeps_scripted_reply(openai_server):
    openai_server.script(REPLY)
    openai_server.inject("429")

    with pytest.raises(openai.RateLimitError) as caught:
        structured(openai_server, "json_schema").invoke("grade this")

    assert caught.value.response.headers["retry-after"] == "1"
    assert caught.value.code == "rate_limit_exceeded"
    assert openai_server.faults_served == 1
    assert structured(openai_server, "json_schema").invoke("again") == Answer(**REPLY)


def test_server_error_fault(openai_server):
    openai_server.inject("500")

    with pytest.raises(openai.InternalServerError):
        make_llm(openai_server).invoke("hello")


def test_slow_fault_times_out_client_and_server_keeps_serving(openai_server):
    openai_server.set_fault_rate(0.0, slow_s=1.5)  # only to shorten injected "slow"
    openai_server.inject("slow")
    openai_server.script(REPLY)

    with pytest.raises(openai.APITimeoutError):
        structured(openai_server, "json_schema").invoke("grade this")

    assert structured(openai_server, "json_schema").invoke("again") == Answer(**REPLY)


# With method="json_schema" langchain-openai calls the SDK's
# chat.completions.parse(), which validates the content itself, so bad output
# raises from the model call instead of landing in include_raw's parsing_error.
def test_json_schema_malformed_output_raises_pydantic_validation_error(openai_server):
    openai_server.inject("malformed")

    with pytest.raises(pydantic.ValidationError, match="Invalid JSON"):
        structured(openai_server, "json_schema", include_raw=True).invoke("grade this")


def test_json_schema_truncated_output_raises_length_finish_reason_error(openai_server):
    openai_server.inject("truncated")

    with pytest.raises(openai.LengthFinishReasonError):
        structured(openai_server, "json_schema", include_raw=True).invoke("grade this")


# With method="function_calling" langchain moves unparseable tool arguments to
# raw.invalid_tool_calls; PydanticToolsParser then finds no tool call and
# returns None without an error, so parsing_error stays None.
@pytest.mark.parametrize(("fault", "finish_reason"), [("malformed", "tool_calls"), ("truncated", "length")])
def test_function_calling_bad_arguments_parse_to_none(openai_server, fault, finish_reason):
    openai_server.inject(fault)

    result = structured(openai_server, "function_calling", include_raw=True).invoke("grade")

    assert result["parsed"] is None
    assert result["parsing_error"] is None
    assert result["raw"].tool_calls == []
    assert result["raw"].invalid_tool_calls[0]["name"] == "Answer"
    assert result["raw"].response_metadata["finish_reason"] == finish_reason


def test_json_mode_malformed_output_is_a_parsing_error(openai_server):
    openai_server.inject("malformed")

    result = structured(openai_server, "json_mode", include_raw=True).invoke("grade as JSON")

    assert result["parsed"] is None
    assert isinstance(result["parsing_error"], OutputParserException)


def test_replier_routes_by_model():
    def by_model(request: dict) -> dict:
        return {"rationale": request["model"], "score": len(request["model"])}

    with FakeOpenAIServer(replier=by_model) as server:
        answers = [
            make_llm(server, model).with_structured_output(Answer).invoke("grade this")
            for model in ("judge-a", "judge-bb")
        ]

    assert answers == [Answer(rationale="judge-a", score=7), Answer(rationale="judge-bb", score=8)]


def fault_decisions(seed: int, requests: int = 40) -> tuple[list[bool], int]:
    """Which of ``requests`` sequential calls failed, and the server's fault count."""
    with FakeOpenAIServer(replier=lambda request: "ok") as server:
        server.set_fault_rate(0.5, seed=seed, kinds=["500"])
        llm = make_llm(server)
        decisions = []
        for _ in range(requests):
            try:
                llm.invoke("hello")
                decisions.append(False)
            except openai.InternalServerError:
                decisions.append(True)
        return decisions, server.faults_served


def test_fault_rate_is_about_half_and_reproducible_per_seed():
    decisions, faults_served = fault_decisions(seed=1)

    assert faults_served == sum(decisions)
    assert 12 <= faults_served <= 28
    assert fault_decisions(seed=1)[0] == decisions
    assert fault_decisions(seed=2)[0] != decisions


def test_concurrent_requests_are_served_in_parallel():
    with FakeOpenAIServer(replier=lambda request: "ok", latency_s=0.2) as server:
        llm = make_llm(server).with_config(max_concurrency=16)
        started = time.monotonic()
        replies = llm.batch(["hello"] * 16)
        elapsed = time.monotonic() - started

    assert [reply.content for reply in replies] == ["ok"] * 16
    assert elapsed < 1.5  # serially this would take 16 * 0.2 = 3.2 s


def test_models_lists_the_models_requested_so_far(openai_server):
    openai_server.script("one", "two")
    make_llm(openai_server, "judge-a").invoke("hello")
    make_llm(openai_server, "judge-b").invoke("hello")

    client = openai.OpenAI(base_url=openai_server.base_url, api_key="sk-test")

    assert [model.id for model in client.models.list()] == ["judge-a", "judge-b"]


# Behaving like the servers users meet.


@pytest.mark.parametrize(
    ("rejects", "method", "refused"),
    [
        (LEGACY_LLAMA_CPP, "json_schema", True),
        (LEGACY_LLAMA_CPP, "function_calling", False),
        (LEGACY_LLAMA_CPP, "json_mode", False),
        (PLAIN_COMPLETIONS, "function_calling", True),
        (PLAIN_COMPLETIONS, "json_mode", True),
    ],
)
def test_rejects_answers_400_to_the_refused_format_only(rejects, method, refused):
    with FakeOpenAIServer(replier=lambda request: REPLY, rejects=rejects) as server:
        call = structured(server, method)
        if refused:
            with pytest.raises(openai.BadRequestError, match=r"json_schema|tools|response_format"):
                call.invoke("grade this as JSON")
        else:
            assert call.invoke("grade this as JSON") == Answer(**REPLY)


def test_rejection_status_can_be_422():
    with (
        FakeOpenAIServer(replier=lambda request: REPLY, rejects=LEGACY_LLAMA_CPP, rejection_status=422) as server,
        pytest.raises(openai.UnprocessableEntityError),
    ):
        structured(server, "json_schema").invoke("grade this")


def test_fenced_style_answers_with_prose_and_a_json_fence_even_for_a_tool_call(openai_server):
    openai_server.reply_style = "fenced"
    openai_server.script(REPLY, REPLY)

    plain = make_llm(openai_server).invoke("grade this")
    tool = make_llm(openai_server).bind_tools([Answer], tool_choice="Answer").invoke("grade this")

    for message in (plain, tool):
        assert message.content == fenced(REPLY) and message.tool_calls == []
        assert message.content.startswith("Sure!") and "```json\n{" in message.content
        assert json.loads(message.content.split("```json\n")[1].split("\n```")[0]) == REPLY


def test_api_key_refuses_other_keys_echoing_them():
    with FakeOpenAIServer(replier=lambda request: "ok", api_key="sk-right-key") as server:
        right = ChatOpenAI(model="m", base_url=server.base_url, api_key="sk-right-key", max_retries=0)
        wrong = ChatOpenAI(model="m", base_url=server.base_url, api_key="sk-wrong-key-123", max_retries=0)

        assert right.invoke("hello").content == "ok"
        with pytest.raises(openai.AuthenticationError, match="Incorrect API key provided: sk-wrong-key-123"):
            wrong.invoke("hello")

    assert server.authorizations == ["Bearer sk-right-key", "Bearer sk-wrong-key-123"]
    assert [status for _, status in server.responses] == [200, 401]
    assert server.first_response_at(401) >= server.arrivals[1]


def test_models_answers_404_to_other_model_names():
    with FakeOpenAIServer(replier=lambda request: "ok", models={"served"}) as server:
        assert make_llm(server, "served").invoke("hello").content == "ok"
        with pytest.raises(openai.NotFoundError, match="`other` does not exist"):
            make_llm(server, "other").invoke("hello")


@pytest.mark.parametrize(
    ("fault", "error", "status"),
    [
        ("429-ms", openai.RateLimitError, 429),
        ("503", openai.InternalServerError, 503),
        ("401", openai.AuthenticationError, 401),
        ("400", openai.BadRequestError, 400),
    ],
)
def test_extra_faults(openai_server, fault, error, status):
    openai_server.inject(fault)

    with pytest.raises(error) as caught:
        make_llm(openai_server).invoke("hello")

    assert caught.value.status_code == status
    if fault == "429-ms":
        assert caught.value.response.headers["retry-after-ms"] == str(RETRY_AFTER_MS)
    if fault == "401":
        assert "sk-test" in caught.value.message  # the key the client sent, echoed
    if fault == "400":
        assert "maximum context length" in caught.value.message


@pytest.mark.parametrize("method", ["json_schema", "function_calling", "json_mode"])
def test_requested_schema_name_reads_every_method(openai_server, method):
    from benchsmith.agents.seam.structured_output import request_options, with_schema_instructions

    openai_server.script(REPLY)
    messages = [{"role": "system", "content": "Grade."}, {"role": "user", "content": "this"}]
    if method == "json_mode":
        messages = with_schema_instructions(messages, Answer)
    make_llm(openai_server).bind(**request_options(method, Answer)).invoke(messages)

    assert requested_schema_name(openai_server.requests[-1]) == "Answer"


def test_conversation_messages_drop_a_trailing_corrective_turn():
    from benchsmith.agents.seam.structured_output import corrective_turn

    original = [{"role": "system", "content": "Grade."}, {"role": "user", "content": "this"}]
    corrected = {"messages": original + corrective_turn("{bad", "no JSON object", Answer)}

    assert conversation_messages(corrected) == original
    assert conversation_messages({"messages": original}) == original
