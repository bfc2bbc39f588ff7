"""Indexes built from streams (issue 23: a million chunks): BM25 from batches of texts, the
collection's word statistics and clustering without its texts held, the unanswerable pool without
sorting the corpus. Each gives what the in-memory construction gives."""

import json
import random

import bm25s
import numpy as np
import pytest

from benchsmith.agents.text import PassageStatistics
from benchsmith.graphs.runtime.corpus_indexes import CorpusFile
from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.spooled_texts import SpooledTexts
from benchsmith.stores.persistence.vectors import VectorStore, open_client
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.corpus import clustering
from benchsmith.tools.corpus.clustering import drop_near_identical, greedy_traversal_clusters
from benchsmith.tools.corpus.corpus_clusters import cluster_collection, stored_vectors
from benchsmith.tools.corpus.corpus_statistics import (
    WordPostings,
    compute_corpus_statistics,
    corpus_statistics,
    exact_word_statistics,
    random_pair_similarity,
    sampled_pair_similarity,
)
from benchsmith.tools.corpus.loaders import iter_beir_corpus
from benchsmith.tools.retrieval import bm25 as bm25_module
from benchsmith.tools.retrieval import dense_retrieval as dense_module
from benchsmith.tools.retrieval.bm25 import BM25Index, top_scored
from benchsmith.tools.retrieval.dense_retrieval import DenseIndex
from benchsmith.tools.retrieval.embedding import ChromaEmbeddingFunction
from benchsmith.words import english_stemmer
from tests.embedders import HashingEmbedder

WORDS = (
    "retrieval ranking ranked ranks fusion judge judging judged cache caching index indexes indexing chunk "
    "chunks embedding embeddings the of and model models query queries passage passages nugget"
).split()


def corpus(count: int = 120, seed: int = 0) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    texts = [
        " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 30))) + f" rare{rng.randrange(60)}" * (n % 3 == 0)
        for n in range(count)
    ]  # words in most documents, and rare ones
    texts[7] = "the of and"  # stopwords only: a document of length 0
    return [f"doc{n:03}" for n in range(count)], texts


def bm25s_reference(texts: list[str]) -> bm25s.BM25:
    """The index as it was built before streaming: bm25s over every tokenized text at once."""
    model = bm25s.BM25(k1=1.5, b=0.75, method="lucene", backend="numpy")
    model.index(
        bm25s.tokenize(texts, lower=True, stopwords="en", stemmer=english_stemmer(), show_progress=False),
        show_progress=False,
    )
    return model


def test_bm25_built_in_batches_scores_as_bm25s_does_bit_for_bit(monkeypatch):
    ids, texts = corpus()
    monkeypatch.setattr(bm25_module, "INDEX_BATCH", 16)  # eight batches, new words in each
    streamed = BM25Index.from_stream(zip(ids, texts))
    reference = BM25Index.__new__(BM25Index)
    reference.model, reference.doc_ids = bm25s_reference(texts), np.asarray(ids, dtype=object)
    queries = {f"q{n}": " ".join(random.Random(n).sample(WORDS, 4)) + f" rare{n}" for n in range(40)} | {
        "none": "absent words"
    }
    for query in queries.values():
        assert np.array_equal(streamed.scores(query), reference.scores(query)), query
    assert streamed.search(queries, 25) == reference.search(queries, 25)
    assert set(streamed.model.vocab_dict) == set(reference.model.vocab_dict)
    assert 0 < len(streamed._common_columns()) < len(streamed.model.vocab_dict) - 1  # both ways of adding a column
    with pytest.raises(ValueError, match="at least one document"):
        BM25Index.from_stream([])


def test_top_scored_is_the_head_of_the_whole_sorted_corpus():
    rng = np.random.default_rng(5)
    doc_ids = np.asarray([f"d{n:04}" for n in rng.permutation(3000)], dtype=object)
    scores = np.round(rng.random(3000) * 4, 1).astype(np.float32) - 1  # many ties, many scores <= 0
    leave_out = set(doc_ids[np.argsort(-scores)[:7]].tolist()) | {"d9999"}
    for depth in (1, 10, 50):
        expected = sorted(range(3000), key=lambda i: (-float(scores[i]), doc_ids[i]))
        expected = [doc_ids[i] for i in expected if doc_ids[i] not in leave_out and scores[i] > 0][:depth]
        assert top_scored(doc_ids, scores, depth, leave_out=leave_out) == expected
    assert top_scored(doc_ids, np.zeros(3000, dtype=np.float32), 10) == []


def test_sampled_pair_similarity_reads_only_the_sampled_rows():
    vectors = np.random.default_rng(2).normal(size=(5000, 16)).astype(np.float32)
    asked = []

    def rows_of(rows):
        asked.extend(rows.tolist())
        return vectors[rows]

    assert sampled_pair_similarity(len(vectors), rows_of, pairs=300, seed=4) == random_pair_similarity(
        vectors, pairs=300, seed=4
    )
    assert len(asked) == len(set(asked)) <= 600


def test_drop_near_identical_reads_texts_along_the_path_in_windows(monkeypatch):
    rng = random.Random(1)
    base = [" ".join(rng.choice(WORDS) for _ in range(40)) for _ in range(30)]
    texts = [text for text in base for _ in range(2)]  # each text twice: every second one goes
    path = list(np.random.default_rng(0).permutation(len(texts)))
    monkeypatch.setattr(clustering, "TEXT_WINDOW", 7)
    windows = []

    def texts_of(rows):
        windows.append(list(rows))
        return [texts[row] for row in rows]

    assert drop_near_identical(path, texts_of) == drop_near_identical(path, texts)
    assert [row for window in windows for row in window] == path and max(map(len, windows)) == 7


@pytest.fixture
def collection(tmp_path):
    """A collection of 300 chunks with near-identical pairs, in an embedded Chroma."""
    workspace = Workspace.resolve(tmp_path / "ws")
    embedder = HashingEmbedder(16)
    store = VectorStore(open_client(workspace), "docs", ChromaEmbeddingFunction(embedder), embedder.name)
    rng = random.Random(3)
    texts = [" ".join(rng.choice(WORDS) for _ in range(25)) + f" rare{rng.randrange(40)}" for _ in range(280)]
    texts += [text + " index" for text in texts[:20]]  # near-identical to their originals
    ids = [f"c{number:04}" for number in rng.sample(range(10_000), len(texts))]  # not inserted in id order
    store.upsert(ids, embedder.encode(texts), texts, [None] * len(ids))
    stored_ids, stored = stored_vectors(store)  # the vectors as Chroma gives them back, in id order
    by_id = dict(zip(ids, texts))
    return workspace, store, stored_ids, stored, [by_id[chunk_id] for chunk_id in stored_ids]


def test_collection_statistics_from_one_pass_equal_the_in_memory_ones(collection):
    workspace, store, ids, vectors, texts = collection
    streamed = corpus_statistics(workspace, store)
    in_memory = compute_corpus_statistics("docs", ids, vectors, texts)
    assert streamed.vocabulary == in_memory.vocabulary and streamed.fingerprint == in_memory.fingerprint
    assert streamed.similarity == in_memory.similarity
    for name in ("document_frequencies", "posting_offsets", "postings"):
        assert np.array_equal(getattr(streamed, name), getattr(in_memory, name)), name


def test_word_postings_of_a_stream_in_any_order_number_chunks_as_told(collection):
    _, _, ids, vectors, texts = collection
    shuffled = list(np.random.default_rng(8).permutation(len(texts)))  # stream order; chunk numbers are id order
    postings = WordPostings()
    for row in shuffled:
        postings.add(texts[row])
    streamed = postings.statistics(
        "docs", [ids[row] for row in shuffled], np.asarray(shuffled), lambda rows: vectors[rows], posting_cap=40
    )
    expected = compute_corpus_statistics("docs", ids, vectors, texts, posting_cap=40)
    assert 0 < expected.postings.size < expected.document_frequencies.sum()  # some words are capped
    for name in ("document_frequencies", "posting_offsets", "postings"):
        assert np.array_equal(getattr(streamed, name), getattr(expected, name)), name


def test_clustering_a_collection_reads_texts_along_the_path(collection, monkeypatch):
    workspace, store, ids, vectors, texts = collection
    monkeypatch.setattr(clustering, "TEXT_WINDOW", 16)
    # The texts come with the vectors in one pass over the store: no read by ids (Chroma answers
    # those in about 0.25 ms an id at a million chunks).
    monkeypatch.setattr(store, "stored_texts", lambda ids: pytest.fail("texts read from the store by id"))
    monkeypatch.setattr(store, "iter_all", lambda include, page=50: VectorStore.iter_all(store, include, page=50))
    stored = cluster_collection(workspace, store, size=8, neighbours=6)
    expected = greedy_traversal_clusters(vectors, size=8, neighbours=6, texts=texts)
    assert expected.dropped  # the near-identical pairs meet on the path
    assert stored.clusters == [[ids[row] for row in cluster] for cluster in expected.clusters]
    assert stored.dropped == [ids[row] for row in expected.dropped]


def test_dense_search_blocks_over_the_matrix_and_breaks_ties_by_row(monkeypatch):
    rng = np.random.default_rng(0)
    vectors = np.round(rng.normal(size=(3000, 6)), 1).astype(np.float32)  # coarse values: many equal scores
    queries = np.round(rng.normal(size=(40, 6)), 1).astype(np.float32)
    index = DenseIndex([f"d{row}" for row in range(3000)], vectors)
    scores = queries @ vectors.T
    expected = {
        f"q{q}": [f"d{row}" for row in sorted(range(3000), key=lambda row: (-scores[q, row], row))[:30]]
        for q in range(40)
    }
    for block in (1 << 16, 500, 17):  # one block, several, blocks smaller than the depth
        monkeypatch.setattr(dense_module, "DOCUMENT_BLOCK", block)
        run = index.search([f"q{q}" for q in range(40)], queries, 30)
        assert {query: list(ranking) for query, ranking in run.items()} == expected, block


def test_a_corpus_file_reads_documents_when_asked(tmp_path):
    path = tmp_path / "corpus.jsonl"
    records = [
        {"_id": "a", "title": "A", "text": "first"},
        {"_id": 7, "text": "no title"},
        {"_id": "blank", "text": "  "},
        {"_id": "a", "title": "again", "text": "second a"},
        {"_id": "c", "title": None, "text": "third"},
    ]
    path.write_text("\ufeff" + "\n\n".join(json.dumps(record) for record in records) + "\n", encoding="utf-8")
    corpus = CorpusFile(path)
    expected = {}
    for document in iter_beir_corpus(path):
        expected.setdefault(document.id, (document.title, document.text))
    assert dict(corpus.items()) == expected == {"a": ("A", "first"), "7": ("", "no title"), "c": ("", "third")}
    assert "blank" not in corpus and len(corpus) == 3 and corpus["c"] == ("", "third")
    assert corpus.duplicates.extra == {"a": 1}
    path.write_text(json.dumps({"_id": "x", "text": " "}) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="the corpus has no documents"):
        CorpusFile(path)


def test_exact_word_statistics_count_as_passage_statistics_do():
    rng = random.Random(6)
    texts = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 12))) for _ in range(200)]
    exact, reference = exact_word_statistics(iter(texts)), PassageStatistics(texts)
    assert exact.chunks == reference.chunks == 200
    for word in [*WORDS, "Retrieval", "absent"]:
        assert exact.document_frequency(word) == reference.document_frequency(word), word
    for size in (0, 1, 2, 3, 4):
        for _ in range(25):
            wanted = rng.sample([*WORDS, "absent"], size)
            assert exact.chunks_with_all(wanted) == reference.chunks_with_all(wanted), wanted


def test_terms_are_bm25s_tokens_batch_after_batch():
    texts = [
        "The Rankings of RANKED queries: ranking!",
        "a b cd ÉTÉ été naïve naïvely",
        "",
        "of the and",
        "under_score x2 42 ranks",
        "Ranking, ranked; ranks.",
    ]
    terms = bm25_module._Terms()
    stems = {}
    tokens = []
    for batch in (texts[:2], texts[2:4], texts[4:]):  # words met in one batch are stemmed once
        flat, counts = terms.numbers(batch)
        stems = {number: stem for stem, number in terms.terms.items()}
        for start, count in zip(np.cumsum(counts) - counts, counts):
            tokens.append([stems[number] for number in flat[start : start + count].tolist()])
    expected = bm25s.tokenize(
        texts, lower=True, stopwords="en", stemmer=english_stemmer(), return_ids=False, show_progress=False
    )
    assert tokens == [list(document) for document in expected]
    assert tokens[0][:2] == ["rank", "rank"] and tokens[2] == [] and tokens[3] == []


def test_best_with_ties_is_what_measures_at_the_cutoff_read_of_a_deep_run(monkeypatch):
    from benchsmith.evals.measures.standard import evaluate_batches, parse_measures

    rng = random.Random(12)
    rare = [f"rare{n}" for n in range(60)]
    texts = []
    for number in range(1500):
        words = [rng.choice(WORDS) for _ in range(rng.randint(3, 20))] + rng.sample(rare, rng.randint(0, 2))
        texts.append(" ".join(words) if number % 7 else "ranking fusion rare1")  # a block of equal documents
    ids = [f"doc{n:04}" for n in range(1500)]
    index = BM25Index(ids, texts)
    queries = {f"q{n}": " ".join(rng.sample(WORDS, 3) + rng.sample(rare, rng.randint(0, 3))) for n in range(120)}
    queries["ties"], queries["common"] = "rare1 fusion ranking", "the ranking"
    paths = {"pruned": 0, "full": 0}
    pruned_scores = BM25Index._pruned_scores

    def counted(self, term_ids, cutoff):
        found = pruned_scores(self, term_ids, cutoff)
        paths["full" if found[0] is None else "pruned"] += 1
        return found

    monkeypatch.setattr(BM25Index, "_pruned_scores", counted)
    best = index.best_with_ties(queries, 10)
    deep = index.search(queries, 1000)
    assert paths["pruned"] > 20 and paths["full"] > 5  # both ways are exercised
    for query_id, ranking in deep.items():
        scores = sorted(ranking.values(), reverse=True)
        cut = scores[min(10, len(scores)) - 1] if scores else 0
        assert best[query_id] == {doc: score for doc, score in ranking.items() if score >= cut}, query_id
    assert len(best["ties"]) > 10  # every document tied at the cut is there
    qrels = {
        query_id: {ids[n]: 1 for n in random.Random(query_id).sample(range(1500), 30)} | {"doc0007": 1}
        for query_id in queries
    }
    measures = parse_measures(["R@10", "RR@10", "nDCG@10"])
    assert evaluate_batches(measures, qrels, [best]).per_query == evaluate_batches(measures, qrels, [deep]).per_query


def test_a_bm25_index_kept_in_the_workspace_is_loaded_by_the_next_process(tmp_path, monkeypatch):
    from benchsmith.graphs.runtime import corpus_indexes
    from benchsmith.stores.formats.beir import Benchmark
    from benchsmith.stores.persistence.lexical_indexes import load_bm25

    ids, texts = corpus(200)
    path = tmp_path / "corpus.jsonl"
    path.write_text(
        "".join(json.dumps({"_id": i, "title": "T", "text": t}) + "\n" for i, t in zip(ids, texts) if t.strip()),
        encoding="utf-8",
    )
    benchmark = Benchmark(name="b", directory=tmp_path, queries=[], qrels={}, corpus_file=path)
    workspace = Workspace.resolve(tmp_path / "ws")
    corpus_indexes._bm25.cache_clear()
    built = corpus_indexes.bm25_index(benchmark, workspace)
    corpus_indexes._bm25.cache_clear()  # a new process
    monkeypatch.setattr(BM25Index, "from_stream", lambda *args, **kwargs: pytest.fail("built again"))
    loaded = corpus_indexes.bm25_index(benchmark, workspace)
    queries = {f"q{n}": " ".join(random.Random(n).sample(WORDS, 3)) for n in range(30)}
    assert loaded.search(queries, 50) == built.search(queries, 50)
    assert np.array_equal(loaded.scores("ranking fusion"), built.scores("ranking fusion"))
    fingerprint = benchmark.corpus_fingerprint()
    assert (
        load_bm25(workspace, fingerprint, 1.5, 0.75) is not None
        and load_bm25(workspace, fingerprint, 1.2, 0.75) is None
    )
    corpus_indexes._bm25.cache_clear()


def test_spooled_texts_read_back_by_position_in_any_order():
    texts = ["first", "", "naïve café ✓", "x" * 10_000, "last"]
    with SpooledTexts() as spooled:
        spooled.extend(texts[:2])
        spooled.extend(texts[2:])
        assert len(spooled) == len(texts)
        assert spooled.texts([4, 0, 2, 2, 1, 3]) == [texts[4], texts[0], texts[2], texts[2], texts[1], texts[3]]
