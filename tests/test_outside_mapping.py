"""The pieces of outside retrieval and replay that hold without a server: results mapped to corpus
ids (their own id, else their exact text; the rest named), specs and names, the retry rule, the
rate limit, and how a reply on a turn without gold is read."""

from __future__ import annotations

import time

import pytest
from langchain_core.documents import Document

from benchsmith.evals.measures.replies import abstained, asked_back
from benchsmith.stores.errors import InputError
from benchsmith.tools.benchmark.assistants import _turn_of
from benchsmith.tools.retrieval.outside_retrieval import rate_limiter
from benchsmith.tools.retrieval.outside_retrievers import (
    CorpusIds,
    Found,
    TransientFailure,
    clear_retrievers,
    map_to_corpus,
    register_retriever,
    spec_for,
    with_retries,
)
from benchsmith.tools.retrieval.retriever_specs import parse_retriever

CORPUS = CorpusIds(
    {"a": ("Guide", "Install with pip."), "b": ("", "Configure the cache."), "c": ("Ref", "The API.")},
    lambda title, text: f"{title} {text}".strip(),
)


def test_results_map_by_id_then_by_exact_text_and_the_rest_are_named():
    found = [
        Found("b", 3.0),
        Found(None, 2.5, "Guide Install with pip."),  # title and text, as retrievers read a passage
        Found("elsewhere-7", 2.0, "The API."),  # an id the corpus lacks, but a text it holds
        Found("ghost", 1.5, "Nothing like it."),
        Found(None, 1.0, "An id-less stranger " + "x" * 80),
        Found("b", 0.5),  # a repeat keeps its first score
    ]
    ranking, unmapped = map_to_corpus(found, CORPUS)
    assert ranking == [("b", 3.0), ("a", 2.5), ("c", 2.0)]
    assert unmapped == ["ghost", "text:An id-less stranger " + "x" * 40]  # its first 60 characters


def test_specs_kinds_and_names():
    try:
        assert parse_retriever("http://127.0.0.1:1/search").kind == "outside"
        assert parse_retriever("py:pkg.mod:obj").label == "py:pkg.mod:obj"
        fused = parse_retriever("hybrid:rrf(bm25,http://127.0.0.1:1/search)")
        assert [part.kind for part in fused.components] == ["bm25", "outside"]

        def mine(query, history, k):
            return []

        assert spec_for(mine) == "mine" == spec_for(mine)  # the same object, the same name
        assert parse_retriever("mine").kind == "outside"

        def other(query, history, k):
            return []

        other.__name__ = "mine"
        with pytest.raises(InputError, match="register this one under its own name"):
            spec_for(other)
        for taken in ("bm25", "dense:x", "a@b", "http://x"):
            with pytest.raises(InputError):
                register_retriever(taken, mine)
        with pytest.raises(InputError, match="neither a LangChain BaseRetriever nor a callable"):
            register_retriever("thing", 42)
    finally:
        clear_retrievers()


def test_transient_failures_are_retried_and_others_are_not():
    calls = []

    def flaky():
        calls.append(1)
        if len(calls) < 3:
            raise TransientFailure("HTTP 503")
        return [Found("a", 1.0)]

    assert with_retries(flaky, max_attempts=5, backoff_initial_s=0.001) == [Found("a", 1.0)] and len(calls) == 3
    broken = []

    def wrong():
        broken.append(1)
        raise KeyError("off the contract")

    with pytest.raises(KeyError):
        with_retries(wrong, max_attempts=5, backoff_initial_s=0.001)
    assert len(broken) == 1


def test_the_rate_limit_spaces_the_calls():
    wait = rate_limiter(20.0)
    started = time.monotonic()
    for _ in range(6):
        wait()
    assert time.monotonic() - started >= 5 / 20 * 0.8  # never faster than 20 a second (a slow machine is slower)


def test_replies_on_turns_without_gold():
    assert abstained("I cannot find that in the documents.")
    assert abstained("The notes do not mention a timeout.")
    assert not abstained("Set the timeout to 30 seconds.")
    assert asked_back("Which cache do you mean, the disk or the memory one?")
    assert asked_back("Could you clarify which version you use.")
    assert not asked_back("Set the timeout to 30 seconds.")


def test_an_assistant_turn_reads_dicts_pairs_and_documents():
    turn = _turn_of({"answer": "Yes.", "passages": ["a", Document("The API.", metadata={"id": "c"})]})
    assert turn.reply == "Yes." and [(f.id, f.score) for f in turn.passages] == [("a", 2.0), ("c", 1.0)]
    assert _turn_of(("No.", [])).passages == []
    with pytest.raises(Exception, match="reply"):
        _turn_of(42)
