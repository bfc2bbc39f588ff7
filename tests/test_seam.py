"""Transport tests of the model seam (agents/seam/models.py).

Every test that talks to a model goes through the real openai SDK client
(``OpenAIBackend``) against ``FakeOpenAIServer`` on 127.0.0.1, so request
building, timeouts, response parsing, retries, caching and accounting are all
exercised end to end. Backoff sleeps are recorded instead of slept.
"""

from __future__ import annotations

import json
import threading

import httpx
import openai
import pytest

from benchsmith.agents.seam.backends import ModelSettings, ScriptedBackend
from benchsmith.agents.seam.models import (
    Agent,
    InvalidOutput,
    ModelEndpointError,
    ModelSeam,
    ModelUnavailableError,
    NoBaselineError,
    build_seam,
    parse_model_spec,
)
from benchsmith.agents.seam.pricing import PRICES_ENV, PriceTable
from benchsmith.stores.persistence.llm_cache import LLMCache
from benchsmith.stores.persistence.usage import UsageLedger
from benchsmith.stores.persistence.workspace import Workspace
from tests.openai_server import ALL_FAULTS
from tests.seam_fixtures import (
    FAST,
    GOOD,
    SECRET,
    Judge,
    RecordingSleep,
    Verdict,
    assert_secret_not_persisted,
    openai_seam,
)

METHODS = ("json_schema", "function_calling")


# The ``retried_errors`` key each fault is counted under: openai's class names;
# OpenAIBackend maps bad or truncated output to InvalidOutput.
RETRIED_ERROR = {
    "429": "RateLimitError",
    "500": "InternalServerError",
    "slow": "APITimeoutError",
    "malformed": "InvalidOutput",
    "truncated": "InvalidOutput",
}


class NoBaselineJudge(Judge):
    name = "strict-judge"

    baseline = Agent.baseline  # back to the base class: no offline baseline


@pytest.fixture
def env(monkeypatch, openai_server):
    """Point the seam at the fake server with a distinctive secret key."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    monkeypatch.delenv("OPENAI_API_BASE", raising=False)  # would win over OPENAI_BASE_URL
    monkeypatch.delenv(PRICES_ENV, raising=False)
    return openai_server


@pytest.fixture
def workspace(tmp_path) -> Workspace:
    return Workspace.resolve(tmp_path / "ws")


@pytest.fixture
def cache(workspace):
    llm_cache = LLMCache(workspace.llm_cache_path)
    yield llm_cache
    llm_cache.close()


@pytest.fixture
def ledger(workspace) -> UsageLedger:
    return UsageLedger(workspace.run_dir("run-1") / "usage.jsonl")


# 1. Each fault is retried once, then the reply is cached.


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("fault", ALL_FAULTS)
def test_fault_is_retried_once_then_reply_is_cached(env, tmp_path, cache, ledger, fault, method):
    server = env
    server.set_fault_rate(0.0, slow_s=1.0)  # only shortens an injected "slow"
    server.inject(fault)
    server.script(GOOD)
    sleep = RecordingSleep()
    seam = openai_seam(
        settings=ModelSettings(timeout_s=0.5, backoff_initial_s=0.01, backoff_max_s=0.05, structured_output=method),
        cache=cache,
        usage=ledger,
        sleep=sleep,
    )

    result = seam.run(Judge(), question="What is RAG?")

    assert result == Verdict(**GOOD)
    assert seam.stats.retries == 1
    assert seam.stats.retried_errors == {RETRIED_ERROR[fault]: 1}
    assert len(server.requests) == 2
    assert server.faults_served == 1
    assert len(sleep.waits) == 1
    if fault == "429":
        assert sleep.waits == [1.0]  # Retry-After: 1 honoured
    else:
        assert 0 < sleep.waits[0] <= 0.05  # exponential backoff, capped

    again = seam.run(Judge(), question="What is RAG?")

    assert again == result
    assert len(server.requests) == 2
    assert seam.stats.cache_hits == 1
    assert seam.stats.calls == 2
    assert ledger.totals()["retries"] == 1
    assert_secret_not_persisted(tmp_path)


# 2. Output that violates the schema is retried, never defaulted.


@pytest.mark.parametrize("method", METHODS)
def test_out_of_range_score_is_retried_not_accepted(env, method):
    server = env
    server.script({"rationale": "off the scale", "score": 9}, GOOD)
    sleep = RecordingSleep()
    seam = openai_seam(
        settings=ModelSettings(timeout_s=0.5, backoff_initial_s=0.01, backoff_max_s=0.05, structured_output=method),
        sleep=sleep,
    )

    result = seam.run(Judge(), question="q")

    assert result == Verdict(**GOOD)
    assert seam.stats.retries == 1
    assert seam.stats.retried_errors == {"InvalidOutput": 1}
    assert len(server.requests) == 2


@pytest.mark.parametrize("method", METHODS)
def test_schema_violation_on_every_attempt_raises_invalid_output(env, method):
    server = env
    server.replier = lambda request: {"rationale": "always 9", "score": 9}
    seam = openai_seam(
        settings=ModelSettings(timeout_s=0.5, max_attempts=2, structured_output=method), sleep=RecordingSleep()
    )

    with pytest.raises(InvalidOutput):
        seam.run(Judge(), question="q")

    assert len(server.requests) == 2


# 3. Non-retryable errors stop after one attempt, as our error saying what to fix.


def status_error(cls: type[openai.APIStatusError], status: int, message: str) -> openai.APIStatusError:
    return cls(message, response=httpx.Response(status, request=httpx.Request("POST", "http://x")), body=None)


@pytest.mark.parametrize(
    ("error", "says"),
    [
        (status_error(openai.AuthenticationError, 401, "invalid api key"), "Check OPENAI_API_KEY"),
        (status_error(openai.PermissionDeniedError, 403, "no access"), "has permission"),
        (status_error(openai.BadRequestError, 400, "bad request"), "bad request"),
    ],
    ids=["401", "403", "400"],
)
def test_non_retryable_error_is_raised_after_one_attempt(error, says):
    backend = ScriptedBackend([error, Verdict(**GOOD)])
    sleep = RecordingSleep()
    seam = ModelSeam(backend, settings=FAST, sleep=sleep)

    with pytest.raises(ModelEndpointError, match=says) as caught:
        seam.run(Judge(), question="q")

    assert caught.value.status_code == error.status_code
    assert caught.value.__cause__ is None and caught.value.__context__ is None
    assert len(backend.calls) == 1
    assert seam.stats.retries == 0
    assert sleep.waits == []


def test_a_bug_in_an_agent_or_backend_propagates_unchanged():
    error = ValueError("a bug, not a transport fault")
    backend = ScriptedBackend([error, Verdict(**GOOD)])
    seam = ModelSeam(backend, settings=FAST, sleep=RecordingSleep())

    with pytest.raises(ValueError) as caught:
        seam.run(Judge(), question="q")

    assert caught.value is error
    assert len(backend.calls) == 1


def test_http_404_from_the_server_is_not_retried(env, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", env.base_url + "/no-such-route")
    sleep = RecordingSleep()
    seam = openai_seam(sleep=sleep)

    with pytest.raises(ModelEndpointError, match=r"404.*Check the model name .*and OPENAI_BASE_URL"):
        seam.run(Judge(), question="q")

    assert seam.stats.retries == 0
    assert sleep.waits == []


# 4. Retries stop after max_attempts, and a failure is not cached.


def test_retries_stop_after_max_attempts_and_nothing_is_cached(env, cache):
    server = env
    server.inject("500", "500", "500")
    sleep = RecordingSleep()
    seam = openai_seam(
        settings=ModelSettings(timeout_s=0.5, max_attempts=3, backoff_initial_s=0.01, backoff_max_s=0.05),
        cache=cache,
        sleep=sleep,
    )

    with pytest.raises(ModelUnavailableError, match="after 3 attempt") as caught:
        seam.run(Judge(), question="q")

    assert caught.value.last_error == "InternalServerError"
    assert len(server.requests) == 3
    assert seam.stats.retries == 2
    assert len(sleep.waits) == 2
    assert len(cache) == 0

    server.script(GOOD)
    assert seam.run(Judge(), question="q") == Verdict(**GOOD)
    assert len(server.requests) == 4
    assert seam.stats.cache_hits == 0


# 5. Token usage, cost and the usage ledger.


def test_cost_uses_server_token_counts_and_ledger_matches_stats(env, tmp_path, cache, ledger):
    server = env
    server.script(GOOD)
    # m1 is priced on this endpoint only: the built-in and top-level prices are OpenAI's endpoint's.
    prices = PriceTable({"m1": (9.0, 9.0)}, {server.base_url: {"m1": (1.0, 2.0)}})
    seam = openai_seam(cache=cache, usage=ledger, prices=prices)

    seam.run(Judge(), question="How are tokens counted?")
    seam.run(Judge(), question="How are tokens counted?")  # cached: no tokens, no cost

    # FakeOpenAIServer counts 4 characters per token, of the prompt and of the reply.
    prompt_chars = sum(len(message["content"]) for message in server.requests[0]["messages"])
    input_tokens = max(1, prompt_chars // 4)
    output_tokens = max(1, len(json.dumps(GOOD)) // 4)
    stats = seam.stats
    assert (stats.input_tokens, stats.output_tokens) == (input_tokens, output_tokens)
    assert stats.cost_usd == pytest.approx((input_tokens * 1.0 + output_tokens * 2.0) / 1e6)

    totals = ledger.totals()
    assert totals["calls"] == stats.calls == 2
    assert totals["cached_calls"] == stats.cache_hits == 1
    assert totals["input_tokens"] == stats.input_tokens
    assert totals["output_tokens"] == stats.output_tokens
    assert totals["cost_usd"] == pytest.approx(stats.cost_usd)
    assert totals["retries"] == stats.retries == 0
    assert_secret_not_persisted(tmp_path)


# 6. Two models on one server.


def test_two_models_get_their_own_replies_and_cache_entries(env, cache):
    server = env
    server.replier = lambda request: {"rationale": f"from {request['model']}", "score": 2}
    seams = {model: openai_seam(model, cache=cache) for model in ("m1", "m2")}

    first = {model: seam.run(Judge(), question="q") for model, seam in seams.items()}

    assert first == {"m1": Verdict(rationale="from m1", score=2), "m2": Verdict(rationale="from m2", score=2)}
    assert [request["model"] for request in server.requests] == ["m1", "m2"]
    assert len(cache) == 2

    again = {model: seam.run(Judge(), question="q") for model, seam in seams.items()}

    assert again == first
    assert len(server.requests) == 2
    assert [seam.stats.cache_hits for seam in seams.values()] == [1, 1]


# 7. The cache key.


def test_cache_key_covers_sampling_and_messages_and_survives_reopening(env, workspace):
    server = env
    server.replier = lambda request: {"rationale": request["messages"][-1]["content"], "score": 1}
    first_cache = LLMCache(workspace.llm_cache_path)
    openai_seam(cache=first_cache).run(Judge(), question="a")
    first_cache.close()
    assert len(server.requests) == 1

    reopened = LLMCache(workspace.llm_cache_path)
    same = openai_seam(cache=reopened)
    warmer = openai_seam(settings=ModelSettings(timeout_s=0.5, temperature=0.7), cache=reopened)
    try:
        assert same.run(Judge(), question="a").rationale == "Question: a"
        assert (len(server.requests), same.stats.cache_hits) == (1, 1)

        warmer.run(Judge(), question="a")
        assert (len(server.requests), warmer.stats.cache_hits) == (2, 0)
        assert server.requests[-1]["temperature"] == 0.7

        assert same.run(Judge(), question="b").rationale == "Question: b"
        assert len(server.requests) == 3
        assert same.stats.cache_hits == 1
        assert len(reopened) == 3
    finally:
        reopened.close()


# 8. Baseline and model specs.


def test_baseline_spec_runs_the_agents_baseline(monkeypatch, ledger):
    monkeypatch.delenv(PRICES_ENV, raising=False)
    seam = build_seam("baseline", usage=ledger)

    assert seam.is_baseline and seam.model == "baseline"
    assert seam.run(Judge(), question="q") == Verdict(rationale="baseline for q", score=3)
    assert seam.stats.calls == 1
    assert ledger.totals()["calls"] == 1


def test_agent_without_baseline_raises_naming_the_agent(monkeypatch):
    monkeypatch.delenv(PRICES_ENV, raising=False)
    seam = build_seam("baseline")

    with pytest.raises(NoBaselineError, match="strict-judge"):
        seam.run(NoBaselineJudge(), question="q")


@pytest.mark.parametrize("spec", ["foo:bar", "openai:", "gpt-4o-mini"])
def test_unknown_spec_is_rejected_with_the_accepted_forms(spec):
    with pytest.raises(ValueError, match=r"unknown model spec .*'baseline' or 'openai:<model>'"):
        parse_model_spec(spec)


def test_parse_model_spec_accepts_baseline_and_openai():
    assert parse_model_spec("baseline") == ("baseline", "baseline")
    assert parse_model_spec("openai:gpt-4o-mini") == ("openai", "gpt-4o-mini")


def test_openai_spec_without_api_key_names_the_variable(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_BASE", raising=False)

    with pytest.raises(ValueError, match="OPENAI_API_KEY"):
        build_seam("openai:m1")


# 9. One seam shared by threads.


def test_threads_share_one_seam_and_requests_overlap(env):
    server = env
    server.latency_s = 0.2
    lock = threading.Lock()
    overlapped = threading.Event()
    in_flight = {"now": 0, "max": 0}

    def replier(request: dict) -> dict:
        with lock:
            in_flight["now"] += 1
            in_flight["max"] = max(in_flight["max"], in_flight["now"])
            if in_flight["now"] > 1:
                overlapped.set()
        overlapped.wait(timeout=1.0)  # holds the first request until a second arrives
        with lock:
            in_flight["now"] -= 1
        return {"rationale": request["messages"][-1]["content"], "score": 5}

    server.replier = replier
    seam = openai_seam(settings=ModelSettings(timeout_s=5.0))
    questions = [f"question {i}" for i in range(8)]
    results: dict[str, Verdict] = {}

    def ask(question: str) -> None:
        results[question] = seam.run(Judge(), question=question)

    threads = [threading.Thread(target=ask, args=(question,)) for question in questions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)

    assert in_flight["max"] > 1
    assert {q: r.rationale for q, r in results.items()} == {q: f"Question: {q}" for q in questions}
    assert seam.stats.calls == 8
    assert seam.stats.retries == 0
    assert len(server.requests) == 8
