"""What the seam shares per endpoint and how it fails (agents/seam/endpoints.py, pricing.py,
redaction.py): the latch, the shared rate limiter, settings that reach the client, the key
a local server does without, prices per endpoint, and secrets kept out of every error."""

from __future__ import annotations

import email.utils
import json
import pickle
import threading
import time
import traceback

import httpx
import openai
import pytest

from benchsmith.agents.seam.backends import ModelSettings, OpenAIBackend
from benchsmith.agents.seam.endpoints import LOCAL_PLACEHOLDER_KEY, is_local_base_url
from benchsmith.agents.seam.models import (
    MAX_RETRY_AFTER_S,
    MissingAPIKeyError,
    ModelEndpointError,
    ModelSeam,
    ModelUnavailableError,
    build_seam,
    retry_after_seconds,
)
from benchsmith.agents.seam.pricing import PRICES_ENV, PriceTable
from benchsmith.agents.seam.redaction import MASK, redact, register_secret
from benchsmith.stores.persistence.usage import UsageLedger
from tests.openai_server import RETRY_AFTER_MS, FakeOpenAIServer
from tests.seam_fixtures import GOOD, SECRET, Judge, RecordingSleep, Verdict


@pytest.fixture
def environment(monkeypatch):
    """Point the seam at whichever server a test starts: ``environment(server)``."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.delenv("OPENAI_API_BASE", raising=False)
    monkeypatch.delenv(PRICES_ENV, raising=False)

    def point_at(server: FakeOpenAIServer) -> FakeOpenAIServer:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        return server

    return point_at


@pytest.fixture
def server(environment):
    with FakeOpenAIServer(replier=lambda request: GOOD) as started:
        yield environment(started)


def seam_for(model: str = "m1", settings: ModelSettings | None = None, **options) -> ModelSeam:
    settings = settings or ModelSettings(timeout_s=2.0, backoff_initial_s=0.01, backoff_max_s=0.05)
    return ModelSeam(OpenAIBackend(model, settings), settings=settings, **options)


# 1. Retry-After in milliseconds, timeouts and attempts.


def test_retry_after_ms_is_honoured_before_retry_after(server):
    server.inject("429-ms")
    sleep = RecordingSleep()

    assert seam_for(sleep=sleep).run(Judge(), question="q") == Verdict(**GOOD)

    assert sleep.waits == [RETRY_AFTER_MS / 1000]  # the header also says Retry-After: 5
    assert len(server.requests) == 2


def headers_error(headers: dict[str, str]) -> openai.RateLimitError:
    response = httpx.Response(429, headers=headers, request=httpx.Request("POST", "http://x"))
    return openai.RateLimitError("slow down", response=response, body=None)


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after-ms": "1500"}, 1.5),
        ({"retry-after": "2"}, 2.0),
        ({"retry-after": "3600"}, MAX_RETRY_AFTER_S),
        ({"retry-after-ms": "900000"}, MAX_RETRY_AFTER_S),
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_retry_after_seconds_reads_both_headers_and_caps_them(headers, seconds):
    assert retry_after_seconds(headers_error(headers)) == seconds


def test_retry_after_as_an_http_date():
    later = email.utils.formatdate(time.time() + 30, usegmt=True)

    assert 25 <= retry_after_seconds(headers_error({"retry-after": later})) <= 31


def test_timeout_and_max_attempts_reach_the_client_and_the_retry_loop(server):
    server.latency_s = 0.5
    settings = ModelSettings(timeout_s=0.2, max_attempts=3, backoff_initial_s=0.01, backoff_max_s=0.02)
    started = time.monotonic()

    with pytest.raises(ModelUnavailableError, match="after 3 attempt") as caught:
        seam_for(settings=settings, sleep=RecordingSleep()).run(Judge(), question="q")

    assert caught.value.last_error == "APITimeoutError"
    assert time.monotonic() - started < 1.5  # three 0.2 s timeouts, not three 0.5 s replies
    deadline = time.monotonic() + 2
    while len(server.requests) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(server.requests) == 3

    patient = seam_for(settings=ModelSettings(timeout_s=2.0, max_attempts=1))
    assert patient.run(Judge(), question="q") == Verdict(**GOOD)


@pytest.mark.parametrize("values", [{"timeout_s": 0}, {"max_attempts": 0}, {"requests_per_second": -1}])
def test_impossible_settings_are_refused(values):
    with pytest.raises(ValueError, match="must be"):
        ModelSettings(**values)


# 2. A fatal error latches the endpoint.


def test_after_a_401_no_request_reaches_the_server_from_any_seam(environment):
    with FakeOpenAIServer(replier=lambda request: GOOD, api_key="sk-the-servers-own-key") as keyed:
        environment(keyed)
        judge_a, judge_b = seam_for("judge-a"), seam_for("judge-b")

        with pytest.raises(ModelEndpointError, match="Check OPENAI_API_KEY") as first:
            judge_a.run(Judge(), question="q")
        assert len(keyed.requests) == 1
        for seam, question in ((judge_a, "another"), (judge_b, "q"), (seam_for("judge-c"), "q")):
            started = time.monotonic()
            with pytest.raises(ModelEndpointError) as later:
                seam.run(Judge(), question=question)
            assert time.monotonic() - started < 0.1
            assert str(later.value) == str(first.value)
        assert len(keyed.requests) == 1
        assert first.value.status_code == 401


def test_parallel_calls_stop_after_the_first_fatal_error(environment):
    """Threads of a fan-out, each going on with its next call after a failure (as other tasks of a
    run do): only the calls in flight when the key was refused reach the server, then none."""
    revoke_after = 6

    def replier(request: dict) -> dict:
        if len(keyed.requests) >= revoke_after:
            keyed.api_key = "sk-a-new-key-nobody-has"  # the key is revoked mid-run
        return GOOD

    with FakeOpenAIServer(replier=replier, latency_s=0.05) as keyed:
        environment(keyed)
        seam = seam_for()
        failures = []

        def worker(index: int) -> None:
            for call in range(10):
                try:
                    seam.run(Judge(), question=f"worker {index} call {call}")
                except ModelEndpointError as error:
                    failures.append(error)

        threads = [threading.Thread(target=worker, args=(index,)) for index in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=20)
        first_401 = keyed.first_response_at(401)

    assert seam.stats.calls >= revoke_after - 4 and len(failures) == 40 - seam.stats.calls
    # At most one call per worker was on its way when the first 401 came back; without the latch
    # every later call of every worker would reach the server (about 30).
    after_first_401 = [arrival for arrival in keyed.arrivals if arrival > first_401]
    assert len(after_first_401) <= 3
    assert len(keyed.requests) <= seam.stats.calls + 4


def test_an_unknown_model_latches_the_endpoint_too(environment):
    with FakeOpenAIServer(replier=lambda request: GOOD, models={"judge-a"}) as vllm:
        environment(vllm)
        with pytest.raises(ModelEndpointError, match=r"no model 'judge-x'.*Check the model name"):
            seam_for("judge-x").run(Judge(), question="q")
        with pytest.raises(ModelEndpointError, match="judge-x"):
            seam_for("judge-a").run(Judge(), question="q")  # the run is failing: no call starts

    assert [request["model"] for request in vllm.requests] == ["judge-x"]


def test_transient_faults_do_not_latch(server):
    server.inject("503", "503")
    settings = ModelSettings(timeout_s=2.0, max_attempts=2, backoff_initial_s=0.01, backoff_max_s=0.02)

    with pytest.raises(ModelUnavailableError, match=r"InternalServerError|APIStatusError|503"):
        seam_for(settings=settings, sleep=RecordingSleep()).run(Judge(), question="q")

    assert seam_for().run(Judge(), question="q") == Verdict(**GOOD)


# 3. One rate limiter per endpoint.


def test_seams_on_one_endpoint_share_one_rate_budget(server):
    rate, calls_each = 20.0, 6
    first = seam_for("judge-a", ModelSettings(timeout_s=2.0, requests_per_second=rate))
    second = seam_for("judge-b", ModelSettings(timeout_s=2.0, requests_per_second=rate))

    def ask(seam: ModelSeam, name: str) -> None:
        for index in range(calls_each):
            seam.run(Judge(), question=f"{name} {index}")

    started = time.monotonic()
    threads = [threading.Thread(target=ask, args=(first, "a")), threading.Thread(target=ask, args=(second, "b"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=20)
    elapsed = time.monotonic() - started

    assert first.stats.calls == second.stats.calls == calls_each
    # 12 requests from a bucket of one that refills at 20/s: at least 11 intervals of 50 ms, where
    # two limiters of their own would have let both seams go in about 6 intervals.
    assert elapsed >= (2 * calls_each - 1) / rate * 0.9


def test_a_seam_without_a_rate_still_waits_its_turn_on_a_limited_endpoint(server):
    seam_for("limited", ModelSettings(timeout_s=2.0, requests_per_second=10.0))
    unlimited = seam_for("unlimited", ModelSettings(timeout_s=2.0))
    started = time.monotonic()

    for index in range(4):
        unlimited.run(Judge(), question=f"q{index}")

    assert time.monotonic() - started >= 3 * 0.1 * 0.9


# 4. The key: optional for local servers, never written anywhere.


@pytest.mark.parametrize(
    ("base_url", "local"),
    [
        ("http://localhost:11434/v1", True),
        ("http://127.0.0.1:8000/v1", True),
        ("http://[::1]:8000/v1", True),
        ("http://10.0.3.7:8000/v1", True),
        ("http://192.168.1.20/v1", True),
        ("http://172.20.0.5:8080/v1", True),
        ("http://100.101.102.103:8000/v1", True),  # carrier-grade NAT, e.g. Tailscale
        ("https://api.openai.com/v1", False),
        ("https://llm.example.com/v1", False),
        ("http://8.8.8.8/v1", False),
        (None, False),
    ],
)
def test_local_base_urls(base_url, local):
    assert is_local_base_url(base_url) is local


def test_a_loopback_server_needs_no_key(server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")

    assert build_seam("openai:m1").run(Judge(), question="q") == Verdict(**GOOD)

    assert server.authorizations == [f"Bearer {LOCAL_PLACEHOLDER_KEY}"]


@pytest.mark.parametrize("base_url", [None, "https://llm.example.com/v1"])
def test_a_remote_endpoint_without_a_key_is_a_clear_error(monkeypatch, base_url):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_BASE", raising=False)
    if base_url:
        monkeypatch.setenv("OPENAI_BASE_URL", base_url)
    else:
        monkeypatch.delenv("OPENAI_BASE_URL", raising=False)

    with pytest.raises(MissingAPIKeyError, match="need OPENAI_API_KEY"):
        build_seam("openai:m1")


def test_a_key_echoed_by_the_server_is_in_no_error_stat_or_record(environment, tmp_path):
    with FakeOpenAIServer(replier=lambda request: GOOD) as echoing:
        environment(echoing)
        echoing.inject("401")
        ledger = UsageLedger(tmp_path / "usage.jsonl")
        seam = seam_for(usage=ledger)
        with pytest.raises(ModelEndpointError) as caught:
            seam.run(Judge(), question="q")

    error = caught.value
    assert SECRET not in str(error) and MASK in str(error)
    assert error.__cause__ is None and error.__context__ is None and error.__suppress_context__
    assert SECRET not in "".join(traceback.format_exception(error))
    assert SECRET.encode() not in pickle.dumps(error)  # as a checkpoint would store it
    assert SECRET not in json.dumps(seam.stats_dict())
    assert not (tmp_path / "usage.jsonl").exists() or SECRET not in (tmp_path / "usage.jsonl").read_text()


def test_a_secret_in_any_other_error_is_redacted_and_unchained():
    from benchsmith.agents.seam.backends import ScriptedBackend
    from benchsmith.agents.seam.models import ModelSeamError

    register_secret("sk-registered-by-a-seam-123")
    backend = ScriptedBackend([RuntimeError("proxy said: bad key sk-registered-by-a-seam-123")])

    with pytest.raises(ModelSeamError) as caught:
        ModelSeam(backend).run(Judge(), question="q")

    assert "sk-registered-by-a-seam-123" not in str(caught.value)
    assert caught.value.__context__ is None


# 5. redact().


def test_redact_masks_keys_headers_tokens_and_url_credentials(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "local-proxy-key-7f3a9")
    register_secret("another-known-key-2b1c")
    text = (
        "key local-proxy-key-7f3a9 and another-known-key-2b1c; Authorization: Basic dXNlcjpwYXNz\n"
        "sent 'Bearer eyJhbGciOi.J9.x_y' with sk-proj-AbC123_def-456 to https://user:hunter2@proxy.example/v1 "
        '{"api_key": "abc123secret"} ?api-key=qwerty123&model=m'
    )

    masked = redact(text)

    for secret in (
        "local-proxy-key-7f3a9",
        "another-known-key-2b1c",
        "dXNlcjpwYXNz",
        "eyJhbGciOi",
        "AbC123",
        "hunter2",
        "abc123secret",
        "qwerty123",
    ):
        assert secret not in masked
    assert "https://[REDACTED]@proxy.example/v1" in masked and "&model=m" in masked


def test_redact_leaves_ordinary_text_and_short_placeholders_alone(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "x")  # a placeholder for a local server
    text = "The server at http://127.0.0.1:8000/v1 has no model 'llama3' (x marks the spot; skip-5 tasks)."

    assert redact(text) == text


# 6. Prices per (endpoint, model).


def write_prices(tmp_path, monkeypatch, table: dict) -> None:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps(table), encoding="utf-8")
    monkeypatch.setenv(PRICES_ENV, str(path))


def test_builtin_prices_hold_on_openais_endpoint_only(monkeypatch):
    monkeypatch.delenv(PRICES_ENV, raising=False)
    prices = PriceTable.load()

    assert prices.cost("gpt-4o-mini", 1_000_000, 1_000_000) == pytest.approx(0.75)
    official = "https://api.openai.com/v1/"
    assert prices.cost("gpt-4o-mini", 1_000_000, 1_000_000, base_url=official) == pytest.approx(0.75)
    assert prices.cost("gpt-4o-mini", 1_000_000, 1_000_000, base_url="http://127.0.0.1:8000/v1") == 0.0
    assert not prices.is_priced("gpt-4o-mini", base_url="http://127.0.0.1:8000/v1")


def test_prices_file_prices_models_per_endpoint_and_keeps_the_old_form(tmp_path, monkeypatch):
    write_prices(
        tmp_path,
        monkeypatch,
        {
            "gpt-4o-mini": {"input": 1.0, "output": 2.0},  # the old form: OpenAI's endpoint
            "https://llm.example.com/v1/": {"llama-3.1-70b": {"input": 0.5, "output": 1.5}},
            "http://127.0.0.1:8000/v1": {"*": {"input": 0.1, "output": 0.1}},
        },
    )
    prices = PriceTable.load()

    assert prices.cost("gpt-4o-mini", 1_000_000, 0) == pytest.approx(1.0)
    assert prices.cost("gpt-4o", 1_000_000, 0) == pytest.approx(2.5)  # built-ins stay
    remote = "https://llm.example.com/v1"
    assert prices.cost("llama-3.1-70b", 1_000_000, 1_000_000, base_url=remote) == pytest.approx(2.0)
    assert prices.cost("llama-3.1-70b", 1_000_000, 0) == 0.0  # not on OpenAI's endpoint
    assert prices.cost("other", 1_000_000, 0, base_url=remote) == 0.0
    assert prices.cost("anything", 1_000_000, 0, base_url="http://127.0.0.1:8000/v1/") == pytest.approx(0.1)


def test_a_seam_charges_the_price_of_its_endpoint(server, tmp_path, monkeypatch):
    write_prices(
        tmp_path,
        monkeypatch,
        {"m1": {"input": 1000.0, "output": 1000.0}, server.base_url: {"m2": {"input": 1.0, "output": 1.0}}},
    )
    unpriced, priced = build_seam("openai:m1"), build_seam("openai:m2")

    unpriced.run(Judge(), question="q")
    priced.run(Judge(), question="q")

    assert unpriced.stats.cost_usd == 0.0
    tokens = priced.stats.input_tokens + priced.stats.output_tokens
    assert priced.stats.cost_usd == pytest.approx(tokens / 1e6)


@pytest.mark.parametrize("table", [{"m": {"input": 1}}, {"http://host/v1": {"input": 1, "output": 2}}, []])
def test_a_malformed_prices_file_names_the_file(tmp_path, monkeypatch, table):
    write_prices(tmp_path, monkeypatch, table)

    with pytest.raises(ValueError, match=r"prices.json: not a price table"):
        PriceTable.load()
