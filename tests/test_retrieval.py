"""Retrieval pieces: BM25, exact dense search, fusion, reranking, query building, retriever
specs and the offline query rewriter.

Scores are checked against the formulas worked by hand (BM25, RRF, min-max sums), against a
brute-force numpy search (dense) and against ranx itself (fusion).
"""

from __future__ import annotations

import math
import threading

import bm25s
import numpy as np
import pytest
import Stemmer
from ranx import Run as RanxRun
from ranx import fuse

from benchsmith.agents.rewriter import Rewriter
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.beir import BenchmarkQuery
from benchsmith.stores.persistence.files import exclusive_lock
from benchsmith.stores.persistence.vectors import VectorStore, open_client
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.retrieval import bm25 as bm25_module
from benchsmith.tools.retrieval.bm25 import BM25Index
from benchsmith.tools.retrieval.dense_retrieval import DenseIndex
from benchsmith.tools.retrieval.embedding import ChromaEmbeddingFunction
from benchsmith.tools.retrieval.fusion import fuse_runs, sort_run
from benchsmith.tools.retrieval.query_building import HistoryMode, build_query, parse_history_mode
from benchsmith.tools.retrieval.rerank import rerank_run
from benchsmith.tools.retrieval.retriever_specs import (
    Configuration,
    RetrieverSpec,
    expand_configurations,
    parse_retriever,
)
from tests.embedders import HashingEmbedder

# --- BM25 ------------------------------------------------------------------------------------
CORPUS = {
    "d1": "Running shoes for trail runners",  # → run shoe trail runner              |d| = 4
    "d2": "She runs every morning before work",  # → she run everi morn befor work     |d| = 6
    "d3": "Leather shoes and leather boots",  # → leather shoe leather boot            |d| = 4
    "d4": "A library of books about the sea",  # → librari book about sea              |d| = 4
    "d5": "Shoes, shoes, shoes: a running joke",  # → shoe shoe shoe run joke          |d| = 5
}


@pytest.fixture(scope="module")
def bm25() -> BM25Index:
    return BM25Index(list(CORPUS), list(CORPUS.values()))


def analyzed(text: str) -> list[str]:
    return bm25s.tokenize(
        [text], lower=True, stopwords="en", stemmer=Stemmer.Stemmer("english"), return_ids=False, show_progress=False
    )[0]


def test_bm25_ranks_the_matching_document_first(bm25):
    run = bm25.search({"boots": "leather boots", "sea": "books about the sea"}, depth=3)
    assert next(iter(run["boots"])) == "d3"
    assert next(iter(run["sea"])) == "d4"
    assert all(list(scores.values()) == sorted(scores.values(), reverse=True) for scores in run.values())


def test_bm25_stems_queries_and_documents_alike(bm25):
    assert analyzed("running") == analyzed("runs") == ["run"]
    run = bm25.search({"q": "running"}, depth=10)
    # d2 says only "runs", d1 and d5 "Running": all three match; "runners" (d1) stems to runner.
    assert set(run["q"]) == {"d1", "d2", "d5"}


@pytest.mark.parametrize("text", ["the of and", "zebra", "", "a b c"])
def test_bm25_returns_no_zero_score_documents(bm25, text):
    assert bm25.search({"q": text}, depth=10) == {"q": {}}


def test_bm25_depth_beyond_the_corpus_and_below_it(bm25):
    everything = bm25.search({"q": "running shoes"}, depth=1000)["q"]
    assert list(everything) == ["d5", "d1", "d3", "d2"]  # d4 shares no term: not returned
    assert list(bm25.search({"q": "running shoes"}, depth=2)["q"]) == ["d5", "d1"]


def test_bm25_batches_queries_and_reports_progress(bm25, monkeypatch):
    queries = {f"q{i}": text for i, text in enumerate(["shoes", "leather", "sea", "running", "work"])}
    whole = bm25.search(queries, depth=5)
    monkeypatch.setattr(bm25_module, "QUERY_BATCH", 2)
    progress = []
    assert bm25.search(queries, depth=5, on_progress=lambda done, total: progress.append((done, total))) == whole
    assert progress == [(2, 5), (4, 5), (5, 5)]


def lucene_terms(query: str, doc_id: str, k1: float = 1.5, b: float = 0.75) -> list[tuple[float, float, float]]:
    """(IDF, tf, length norm) per query term, from the analyzed documents."""
    documents = {d: analyzed(text) for d, text in CORPUS.items()}
    avgdl = sum(map(len, documents.values())) / len(documents)
    terms = []
    for term in analyzed(query):
        df = sum(term in tokens for tokens in documents.values())
        idf = math.log(1 + (len(documents) - df + 0.5) / (df + 0.5))
        tf = documents[doc_id].count(term)
        terms.append((idf, tf, k1 * (1 - b + b * len(documents[doc_id]) / avgdl)))
    return terms


def test_bm25_score_is_lucene_bm25_worked_by_hand(bm25):
    # Query "running shoes" → [run, shoe]; d5 → [shoe, shoe, shoe, run, joke], |d5| = 5.
    # N = 5, |d| = 4, 6, 4, 4, 5 → avgdl = 23 / 5 = 4.6; df(run) = 3 (d1 d2 d5), df(shoe) = 3 (d1 d3 d5)
    # IDF = ln(1 + (5 − 3 + 0.5) / (3 + 0.5)) = ln(1.714286) = 0.538997 for both terms
    # K = k1 · (1 − b + b · |d| / avgdl) = 1.5 · (0.25 + 0.75 · 5 / 4.6) = 1.597826
    # Lucene ≥ 8 (what bm25s "lucene" computes): Σ IDF · tf / (tf + K)
    #   = 0.538997 · (1 / 2.597826 + 3 / 4.597826) = 0.538997 · (0.384937 + 0.652482) = 0.559165
    assert analyzed(CORPUS["d5"]) == ["shoe", "shoe", "shoe", "run", "joke"]
    score = bm25.search({"q": "running shoes"}, depth=5)["q"]["d5"]
    assert score == pytest.approx(0.559165, abs=1e-6)
    assert score == pytest.approx(
        sum(idf * tf / (tf + norm) for idf, tf, norm in lucene_terms("running shoes", "d5")), rel=1e-6
    )
    # d1 → [run, shoe, trail, runner]: K = 1.5 · (0.25 + 0.75 · 4 / 4.6) = 1.353261
    #   0.538997 · 2 · 1 / 2.353261 = 0.458085
    assert bm25.search({"q": "running shoes"}, depth=5)["q"]["d1"] == pytest.approx(0.458085, abs=1e-6)


# --- Dense -----------------------------------------------------------------------------------


def normalized(rng: np.random.Generator, rows: int, dimension: int) -> np.ndarray:
    vectors = rng.normal(size=(rows, dimension)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


@pytest.mark.parametrize("depth", [1, 10, 49, 50, 80])
def test_dense_search_is_exact(depth):
    rng = np.random.default_rng(depth)
    documents, queries = normalized(rng, 50, 16), normalized(rng, 300, 16)  # 300 queries: two batches of 256
    doc_ids = [f"doc{i}" for i in range(50)]
    query_ids = [f"q{i}" for i in range(300)]
    progress = []
    run = DenseIndex(doc_ids, documents).search(
        query_ids, queries, depth, on_progress=lambda done, total: progress.append((done, total))
    )
    assert progress == [(256, 300), (300, 300)]
    assert list(run) == query_ids
    scores = queries @ documents.T
    for row, query_id in enumerate(query_ids):
        expected = np.argsort(-scores[row], kind="stable")[: min(depth, 50)]
        assert list(run[query_id]) == [doc_ids[i] for i in expected]  # best first
        assert list(run[query_id].values()) == pytest.approx(scores[row, expected].tolist(), abs=1e-6)


def test_dense_index_checks_ids_against_vectors():
    with pytest.raises(ValueError, match="2 ids for 3 vectors"):
        DenseIndex(["a", "b"], np.zeros((3, 4)))


def test_dense_index_reads_the_vectors_of_a_chroma_collection(tmp_path, monkeypatch):
    embedder = HashingEmbedder(dimension=16)
    client = open_client(Workspace.resolve(tmp_path / "ws"))
    store = VectorStore(client, "dense-test", ChromaEmbeddingFunction(embedder), embedder.name)
    rng = np.random.default_rng(0)
    ids = [f"chunk-{i:02d}" for i in range(23)]
    vectors = normalized(rng, 23, 16)
    store.upsert(ids, vectors.tolist(), [f"text {i}" for i in range(23)], [{"source": "s"}] * 23)
    monkeypatch.setattr(store, "iter_all", lambda include, page=10: VectorStore.iter_all(store, include, page=10))

    index = DenseIndex.from_store(store)  # three pages of at most 10

    assert embedder.calls == 0  # the stored vectors are read, nothing re-embedded
    assert sorted(index.doc_ids.tolist()) == ids
    read = dict(zip(index.doc_ids.tolist(), index.vectors))
    for i, chunk_id in enumerate(ids):
        np.testing.assert_allclose(read[chunk_id], vectors[i], atol=1e-7)
    query = vectors[7:8]
    assert next(iter(index.search(["q"], query, depth=3)["q"])) == "chunk-07"


def test_opening_a_new_workspaces_chroma_waits_for_the_process_opening_it(tmp_path):
    """Two processes opening one new workspace at once both ran Chroma's schema migrations and
    one failed ("table collections already exists", seen in CI): the first open is serialized
    on the workspace's lock."""
    workspace = Workspace.resolve(tmp_path / "ws")
    opened = threading.Event()

    def open_it() -> None:
        open_client(workspace)
        opened.set()

    with exclusive_lock(workspace.root / "chroma.lock"):  # another process opening it
        opener = threading.Thread(target=open_it, daemon=True)
        opener.start()
        assert not opened.wait(timeout=1.0)
    assert opened.wait(timeout=60)
    opener.join()


# --- Fusion ----------------------------------------------------------------------------------
# Run A has both queries, run B only q1.
RUN_A = {"q1": {"d1": 9.0, "d2": 7.0, "d3": 5.0}, "q2": {"d4": 2.0, "d5": 1.0}}
RUN_B = {"q1": {"d3": 0.9, "d1": 0.8, "d4": 0.1}}


def ascending(run):
    return {q: dict(sorted(docs.items(), key=lambda item: item[1])) for q, docs in run.items()}


def test_rrf_worked_by_hand():
    fused = fuse_runs([RUN_A, RUN_B], "rrf")
    # q1 ranks: A d1 1, d2 2, d3 3;  B d3 1, d1 2, d4 3
    assert fused["q1"] == pytest.approx(
        {
            "d1": 1 / 61 + 1 / 62,  # 0.032522
            "d3": 1 / 63 + 1 / 61,  # 0.032266
            "d2": 1 / 62,  # 0.016129
            "d4": 1 / 63,  # 0.015873
        }
    )
    assert list(fused["q1"]) == ["d1", "d3", "d2", "d4"]
    # q2 is in A only: still fused
    assert fused["q2"] == pytest.approx({"d4": 1 / 61, "d5": 1 / 62})


def test_fusion_sorts_runs_before_fusing():
    for method, weights in (("rrf", None), ("combsum", None), ("wsum", [0.25, 0.75])):
        sorted_result = fuse_runs([RUN_A, RUN_B], method, weights)
        assert fuse_runs([ascending(RUN_A), ascending(RUN_B)], method, weights) == sorted_result
        alphabetical = [{q: dict(sorted(docs.items())) for q, docs in run.items()} for run in (RUN_B, RUN_A)]
        assert fuse_runs(alphabetical[::-1], method, weights) == sorted_result


def test_sorting_makes_tied_scores_independent_of_dict_order():
    # x and y tie in the first run. ranx fed the dicts directly ranks them in dict order, so the
    # same run written in two orders fuses differently; fuse_runs breaks the tie by document id.
    first_xy = {"q": {"x": 1.0, "y": 1.0, "z": 0.5}}
    first_yx = {"q": {"y": 1.0, "x": 1.0, "z": 0.5}}
    second = {"q": {"w": 2.0, "z": 1.0}}
    direct_xy = fuse([RanxRun(first_xy), RanxRun(second)], norm=None, method="rrf").to_dict()["q"]
    direct_yx = fuse([RanxRun(first_yx), RanxRun(second)], norm=None, method="rrf").to_dict()["q"]
    assert direct_xy["x"] == pytest.approx(1 / 61) and direct_yx["x"] == pytest.approx(1 / 62)  # order matters
    ours_xy, ours_yx = fuse_runs([first_xy, second], "rrf"), fuse_runs([first_yx, second], "rrf")
    assert ours_xy == ours_yx
    assert ours_xy["q"] == pytest.approx({"z": 1 / 63 + 1 / 62, "x": 1 / 61, "w": 1 / 61, "y": 1 / 62})


def test_many_tied_documents_get_rrf_ranks_in_document_id_order():
    tied = {f"t{i:02d}": 1.0 for i in range(20)}
    fused = fuse_runs([{"q": tied}, {"q": {"x": 1.0}}], "rrf")["q"]
    assert {d: fused[d] for d in tied} == pytest.approx({f"t{i:02d}": 1 / (61 + i) for i in range(20)})


@pytest.mark.slow  # ranx JIT-compiles its fusion in each test process (tests/test_fusion.py)
def test_fusion_equals_ranx_on_sorted_runs():
    rng = np.random.default_rng(4)
    runs = []
    for _ in range(3):
        run = {}
        for q in ("q1", "q2", "q3"):
            docs = rng.choice(40, size=25, replace=False)
            run[q] = {f"d{d:02d}": float(s) for d, s in zip(docs, rng.permutation(100)[:25] / 10)}
        runs.append(run)
    sorted_runs = [RanxRun(sort_run(run)) for run in runs]
    expected_rrf = fuse(sorted_runs, norm=None, method="rrf").to_dict()
    expected_sum = fuse(sorted_runs, norm="min-max", method="sum").to_dict()
    for method, expected in (("rrf", expected_rrf), ("combsum", expected_sum)):
        fused = fuse_runs(runs, method)
        assert set(fused) == set(expected)
        for q in fused:
            assert fused[q] == pytest.approx(dict(expected[q]), abs=1e-12)
            assert list(fused[q].values()) == sorted(fused[q].values(), reverse=True)


def test_combsum_and_wsum_worked_by_hand():
    # min-max per run and query: A q1 (s − 5) / 4 → d1 1, d2 0.5, d3 0; B q1 (s − 0.1) / 0.8 → d3 1, d1 0.875, d4 0
    assert fuse_runs([RUN_A, RUN_B], "combsum") == {
        "q1": pytest.approx({"d1": 1.875, "d3": 1.0, "d2": 0.5, "d4": 0.0}),
        "q2": pytest.approx({"d4": 1.0, "d5": 0.0}),  # A only: (2 − 1) / 1, (1 − 1) / 1
    }
    # weights 0.25 (A), 0.75 (B): d1 0.25 + 0.75 · 0.875 = 0.90625, d3 0.75, d2 0.125, d4 0
    wsum = fuse_runs([RUN_A, RUN_B], "wsum", weights=[0.25, 0.75])
    assert wsum == {
        "q1": pytest.approx({"d1": 0.90625, "d3": 0.75, "d2": 0.125, "d4": 0.0}),
        "q2": pytest.approx({"d4": 0.25, "d5": 0.0}),
    }
    assert list(wsum["q1"]) == ["d1", "d3", "d2", "d4"]
    # weights swapped: d1 0.75 + 0.25 · 0.875 = 0.96875, d2 0.75 · 0.5 = 0.375, d3 0.25, d4 0: d2 overtakes d3
    swapped = fuse_runs([RUN_A, RUN_B], "wsum", weights=[0.75, 0.25])["q1"]
    assert swapped == pytest.approx({"d1": 0.96875, "d2": 0.375, "d3": 0.25, "d4": 0.0})
    assert list(swapped) == ["d1", "d2", "d3", "d4"]
    assert fuse_runs([RUN_A, RUN_B], "wsum", weights=[0.0, 1.0])["q1"]["d3"] == pytest.approx(1.0)


def test_fusion_depth_and_argument_checks():
    assert fuse_runs([RUN_A, RUN_B], "rrf", depth=2) == {
        "q1": pytest.approx({"d1": 1 / 61 + 1 / 62, "d3": 1 / 63 + 1 / 61}),
        "q2": pytest.approx({"d4": 1 / 61, "d5": 1 / 62}),
    }
    with pytest.raises(ValueError, match="at least two runs"):
        fuse_runs([RUN_A], "rrf")
    with pytest.raises(ValueError, match="one weight per run"):
        fuse_runs([RUN_A, RUN_B], "wsum")
    with pytest.raises(ValueError, match="one weight per run"):
        fuse_runs([RUN_A, RUN_B], "wsum", weights=[1.0])
    with pytest.raises(ValueError, match="unknown fusion method 'max'"):
        fuse_runs([RUN_A, RUN_B], "max")  # type: ignore[arg-type]


def test_a_run_that_found_nothing_contributes_nothing():
    assert fuse_runs([{"q": {"a": 1.0}}, {"q": {}}], "rrf") == {"q": pytest.approx({"a": 1 / 61})}


# --- Rerank ----------------------------------------------------------------------------------
DOCUMENTS = {"a": "alpha", "b": "beta", "c": "gamma", "d": "delta", "e": "epsilon", "f": "zeta"}
FIRST_STAGE = {"q": {"f": 0.4, "c": 0.7, "a": 0.9, "e": 0.5, "b": 0.8, "d": 0.6}}  # a b c d e f by score


class LookupScorer:
    def __init__(self, table: dict[str, float]):
        self.table, self.calls = table, []

    def __call__(self, pairs):
        self.calls.append(list(pairs))
        return [self.table[document] for _, document in pairs]


def test_rerank_reorders_the_top_k_and_keeps_the_tail_below():
    scorer = LookupScorer({"alpha": -30.0, "beta": -20.0, "gamma": -10.0})  # reverses a b c
    reranked = rerank_run(FIRST_STAGE, {"q": "greek letters"}, DOCUMENTS, scorer, k=3)
    assert scorer.calls == [[("greek letters", "alpha"), ("greek letters", "beta"), ("greek letters", "gamma")]]
    assert list(reranked["q"]) == ["c", "b", "a", "d", "e", "f"]
    # the reranked block keeps the scorer's scores; the tail sits below the lowest (−30) in its old order
    assert reranked["q"] == {"c": -10.0, "b": -20.0, "a": -30.0, "d": -31.0, "e": -32.0, "f": -33.0}


def test_rerank_by_query_word_count_on_several_queries():
    def word_count(pairs):
        return [float(sum(word in document.split() for word in query.split())) for query, document in pairs]

    documents = {"x": "cats sleep", "y": "cats and dogs sleep all day", "z": "dogs", "w": "dogs sleep"}
    run = {"one": {"x": 3.0, "y": 2.0, "z": 1.0, "w": 0.5}, "two": {"z": 9.0, "w": 8.0}}
    reranked = rerank_run(run, {"one": "dogs sleep day", "two": "dogs sleep"}, documents, word_count, k=2)
    # one: top 2 are x (1 word: sleep) and y (3 words) → y, x; z and w stay below in their order
    assert reranked["one"] == {"y": 3.0, "x": 1.0, "z": 0.0, "w": -1.0}
    # two: k covers all: w (2 words) before z (1 word), no tail
    assert reranked["two"] == {"w": 2.0, "z": 1.0}


def test_rerank_ties_by_document_id_and_progress():
    progress = []
    reranked = rerank_run(
        {"q": {"b": 2.0, "a": 1.0}, "r": {"c": 1.0}},
        {"q": "x", "r": "y"},
        DOCUMENTS,
        lambda pairs: [0.5] * len(pairs),
        k=5,
        on_progress=lambda *p: progress.append(p),
    )
    assert list(reranked["q"]) == ["a", "b"]
    assert progress == [(1, 2), (2, 2)]


# --- Query building ----------------------------------------------------------------------------
HISTORY = [
    ("What is BM25?", "A ranking function."),
    ("Who made it?", "Robertson and others."),
    ("When?", "In the 1990s."),
]


def turn(history=HISTORY, rewrite="How does BM25 compare with dense retrieval?") -> BenchmarkQuery:
    return BenchmarkQuery(
        id="c1_t4",
        text="(text field)",
        question="How does it compare with dense retrieval?",
        rewrite=rewrite,
        conversation_id="c1",
        turn=len(history) + 1,
        history=list(history),
    )


def test_full_history_lists_every_earlier_turn_then_the_question():
    assert build_query(turn(), parse_history_mode("full")) == (
        "User: What is BM25?\nAgent: A ranking function.\n"
        "User: Who made it?\nAgent: Robertson and others.\n"
        "User: When?\nAgent: In the 1990s.\n"
        "User: How does it compare with dense retrieval?"
    )


def test_last_k_keeps_only_the_last_turns():
    assert build_query(turn(), parse_history_mode("last:1")) == (
        "User: When?\nAgent: In the 1990s.\nUser: How does it compare with dense retrieval?"
    )
    assert build_query(turn(), parse_history_mode("last:2")) == (
        "User: Who made it?\nAgent: Robertson and others.\n"
        "User: When?\nAgent: In the 1990s.\nUser: How does it compare with dense retrieval?"
    )
    assert build_query(turn(), parse_history_mode("last:9")) == build_query(turn(), parse_history_mode("full"))


def test_current_and_oracle():
    assert build_query(turn(), parse_history_mode("current")) == "How does it compare with dense retrieval?"
    assert build_query(turn(), parse_history_mode("oracle")) == "How does BM25 compare with dense retrieval?"
    with pytest.raises(InputError, match="'c1_t4' has no self-contained rewrite"):
        build_query(turn(rewrite=None), parse_history_mode("oracle"))


def test_rewrite_mode_calls_the_rewriter_after_the_first_turn():
    calls = []

    def rewrite(history, question):
        calls.append((history, question))
        return "rewritten"

    assert build_query(turn(), parse_history_mode("rewrite"), rewrite) == "rewritten"
    assert calls == [(HISTORY, "How does it compare with dense retrieval?")]
    first = turn(history=[])
    assert build_query(first, parse_history_mode("rewrite"), rewrite) == first.question
    assert len(calls) == 1  # nothing to resolve on a first turn
    assert build_query(first, parse_history_mode("full")) == "User: How does it compare with dense retrieval?"


def test_single_turn_queries_send_their_text():
    single = BenchmarkQuery(id="s1", text="bm25 saturation", question="bm25 saturation")
    for mode in ("full", "last:2", "current", "rewrite"):
        assert build_query(single, parse_history_mode(mode), lambda h, q: "never") == "bm25 saturation"
    with pytest.raises(InputError, match="'s1'"):
        build_query(single, parse_history_mode("oracle"))


def test_parse_history_mode():
    assert parse_history_mode(" last:3 ") == HistoryMode("last", 3)
    assert parse_history_mode("last:3").label == "last:3"
    assert parse_history_mode("oracle") == HistoryMode("oracle")
    for bad in ("last:0", "last:x", "last:", "last:-1", "foo", "Full"):
        with pytest.raises(InputError, match="unknown history mode"):
            parse_history_mode(bad)


# --- Retriever specs ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("dense", RetrieverSpec("dense")),
        ("dense:BAAI/bge-small-en-v1.5", RetrieverSpec("dense", model="BAAI/bge-small-en-v1.5")),
        ("bm25", RetrieverSpec("bm25")),
        (
            "hybrid:rrf(dense,bm25)",
            RetrieverSpec("hybrid", method="rrf", components=(RetrieverSpec("dense"), RetrieverSpec("bm25"))),
        ),
        (
            "hybrid:wsum(dense=0.7,bm25=0.3)",
            RetrieverSpec(
                "hybrid", method="wsum", weights=(0.7, 0.3), components=(RetrieverSpec("dense"), RetrieverSpec("bm25"))
            ),
        ),
    ],
)
def test_retriever_spec_round_trips(text, expected):
    spec = parse_retriever(text)
    assert spec == expected
    assert spec.label == text
    assert parse_retriever(spec.label) == spec


def test_retriever_spec_normalizes():
    assert parse_retriever(" dense:default ") == RetrieverSpec("dense")
    assert parse_retriever("hybrid:combsum( bm25 , dense:m )").label == "hybrid:combsum(bm25,dense:m)"


@pytest.mark.parametrize(
    "text, message",
    [
        ("bm26", "unknown retriever 'bm26'"),
        ("hybrid:max(dense,bm25)", "unknown fusion method 'max'"),
        ("hybrid:rrf(dense)", "at least two retrievers"),
        ("hybrid:rrf(dense,bm25", "unknown retriever"),
        ("hybrid:rrf(dense=0.5,bm25=0.5)", "only wsum takes weights"),
        ("hybrid:wsum(dense=0.7,bm25)", "a weight for each retriever"),
        ("hybrid:wsum(dense=x,bm25=0.3)", "weight 'x' is not a number"),
        ("hybrid:rrf(bm25,hybrid:rrf(dense,bm25))", "unknown retriever"),
    ],
)
def test_bad_retriever_specs(text, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(")):
        parse_retriever(text)


def test_expand_configurations_orders_inputs_first_without_duplicates():
    hybrid = parse_retriever("hybrid:rrf(dense,bm25)")
    configurations = expand_configurations(
        [hybrid, parse_retriever("bm25")], [parse_history_mode("full"), parse_history_mode("current")], rerank=True
    )
    names = [c.name for c in configurations]
    assert names == [
        "dense@full",
        "bm25@full",
        "dense@current",
        "bm25@current",
        "hybrid:rrf(dense,bm25)@full",
        "hybrid:rrf(dense,bm25)@current",
        "hybrid:rrf(dense,bm25)+rerank@full",
        "bm25+rerank@full",
        "hybrid:rrf(dense,bm25)+rerank@current",
        "bm25+rerank@current",
    ]
    for position, configuration in enumerate(configurations):
        assert all(needed in configurations[:position] for needed in configuration.inputs)
    assert (
        Configuration(hybrid, parse_history_mode("last:2"), rerank=True).file_stem
        == "hybrid_rrf_dense_bm25_rerank_last_2"
    )
    assert [
        c.name for c in expand_configurations([parse_retriever("dense")], [parse_history_mode("oracle")], rerank=False)
    ] == ["dense@oracle"]


# --- Rewriter baseline -------------------------------------------------------------------------


def test_rewriter_baseline_adds_the_previous_questions_content_words():
    rewriter = Rewriter()
    history = [("Tell me about glaciers", "Ice."), ("How does the Python garbage collector work?", "Refcounts.")]
    rewritten = rewriter.baseline(history=history, question="What about its cycles?")
    # previous question's content words (≥ 3 letters, not stopwords): python garbage collector work;
    # "how", "does", "the" are stopwords; glaciers (two turns back) is not used
    assert rewritten.query == "What about its cycles? python garbage collector work"
    # words the question has already are not repeated
    assert rewriter.baseline(history=history, question="Python garbage?").query == "Python garbage? collector work"
    first = rewriter.baseline(history=[], question="What is a glacier?")
    assert first.query == "What is a glacier?"


def test_rewriter_baseline_adds_at_most_six_words():
    history = [("alpha beta gamma delta epsilon zeta theta alpha", "")]
    assert Rewriter().baseline(history=history, question="why").query == "why alpha beta gamma delta epsilon zeta"


def test_a_collection_larger_than_a_page_is_read_whole_with_its_documents_and_metadata(tmp_path):
    """A page of the whole-collection read must stay under what Chroma's SQLite binds per
    statement: pages of 32,768 items failed at a million chunks ('too many SQL variables')."""
    from benchsmith.stores.persistence.vectors import READ_PAGE

    workspace = Workspace.resolve(tmp_path / "ws")
    store = VectorStore(open_client(workspace), "big", ChromaEmbeddingFunction(HashingEmbedder(2)), "hash-2")
    count = READ_PAGE + 3
    ids = [f"c{number:06}" for number in range(count)]
    store.upsert(
        ids,
        [[1.0, float(number % 7)] for number in range(count)],
        [f"text {n}" for n in range(count)],
        [{"title": f"t{n}"} for n in range(count)],
    )
    pages = list(store.iter_all(include=("documents", "metadatas")))
    assert [len(page["ids"]) for page in pages] == [READ_PAGE, 3]
    assert sorted(chunk_id for page in pages for chunk_id in page["ids"]) == ids


def test_a_whole_read_pages_by_id_and_keeps_the_listed_order_when_chroma_answers_in_another(tmp_path):
    """Pages are read by their ids (paging by offset grew with the square of the collection):
    each page lists its items in the order the ids were listed, one deleted meanwhile is left out,
    and every included field stays aligned with its id."""
    workspace = Workspace.resolve(tmp_path / "ws")
    store = VectorStore(open_client(workspace), "paged", ChromaEmbeddingFunction(HashingEmbedder(2)), "hash-2")
    ids = [f"c{number:02}" for number in range(25)]
    store.upsert(
        ids,
        [[1.0, float(number)] for number in range(25)],
        [f"text {n}" for n in ids],
        [{"title": f"title {n}"} for n in ids],
    )
    listed = store.collection.get(include=[])["ids"]
    real = store.collection
    asked = []

    class Shuffling:  # answers a read by ids backwards, and without the item deleted meanwhile
        def __getattr__(self, name):
            return getattr(real, name)

        def get(self, ids=None, include=(), **kwargs):
            asked.append((list(ids) if ids is not None else None, kwargs))
            found = real.get(ids=ids, include=include, **kwargs)
            if ids is None:
                return found
            keep = [i for i in reversed(range(len(found["ids"]))) if found["ids"][i] != "c12"]
            return {"ids": [found["ids"][i] for i in keep], **{f: [found[f][i] for i in keep] for f in include}}

    store.collection = Shuffling()
    pages = list(store.iter_all(include=("documents", "metadatas"), page=10))

    assert [ids for ids, _ in asked[1:]] == [listed[0:10], listed[10:20], listed[20:25]]  # by id, not offset
    assert all("offset" not in kwargs for _, kwargs in asked)
    read = [chunk_id for page in pages for chunk_id in page["ids"]]
    assert read == [chunk_id for chunk_id in listed if chunk_id != "c12"]
    for page in pages:
        assert page["documents"] == [f"text {chunk_id}" for chunk_id in page["ids"]]
        assert [m["title"] for m in page["metadatas"]] == [f"title {chunk_id}" for chunk_id in page["ids"]]
