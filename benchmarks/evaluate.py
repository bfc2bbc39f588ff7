"""The evaluation path at scale: BM25 and dense retrieval, fusion and measures.

Data, generated in memory from ``--seed`` (no downloads): a corpus of 50,000 documents of
60-120 synthetic words, each drawn with probability 0.35 from the 30 words of its
document's topic (500 topics) and otherwise from a Zipf-like background vocabulary of 5,000
words; 8,000 conversational queries (1,600 conversations × 5 turns on one topic), each
turn's text the serialized history ``User: …\\nAgent: …\\nUser: <question>`` that the
``full`` history mode sends, the question drawn from the words of its gold document (rarer
words preferred), the agent's answers from the earlier turns' gold documents. Qrels: the
gold document (relevance 2) and two more documents of its topic (relevance 1 and 0).
Dense vectors are precomputed, so that no embedder is timed: 384-dim unit vectors, a
document at cosine ≈ 0.7 to its topic's centroid, a query at cosine ≈ 0.8 to its gold
document.

Measured in one run:

* BM25 (``tools.bm25.BM25Index``): index build seconds, and search seconds per 1,000
  queries at ``--depth``;
* dense (``tools.dense_retrieval.DenseIndex``, exact): seconds per 1,000 queries; unless
  ``--skip-chroma``, the same vectors in a Chroma collection (HNSW, cosine): seconds to add
  them, seconds per 1,000 queries on a sample of 500 queries at the same depth, and the
  recall of Chroma's top ``--depth`` against the exact one (the claim of
  ``tools/dense_retrieval.py``: exact search is both faster and complete);
* fusion (``tools.fusion.fuse_runs``, RRF of the BM25 and dense runs): seconds per 1,000
  queries, after a warm-up call on a tiny run (ranx compiles with numba on first use; the
  cold call is printed too);
* measures: ``evals.measures.evaluate_run`` with the default measures on the BM25 run
  against ir_measures alone (``list(ir_measures.iter_calc(...))``, the same run and qrels),
  each timed ``--repeat`` times, interleaved, best time kept.

Target: evaluate_run / ir_measures alone ≤ 1.10 (the wrapper's per-query bookkeeping may
cost at most a tenth); exit status 1 if missed. The other numbers are reported, not judged.

    .venv/bin/python benchmarks/evaluate.py [--documents 50000] [--queries 8000] [--depth 1000]
        [--seed 0] [--repeat 3] [--skip-chroma]

About 4.5 minutes on 2 cores at the default sizes: fusion takes half of it, Chroma half a
minute (``--skip-chroma``). Memory peaks near 12 GiB (runs of 8 million scored documents as
Python dicts, and ranx's copies of them).
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import ir_measures  # noqa: E402

from benchsmith.evals.measures import DEFAULT_MEASURES, evaluate_run, parse_measures  # noqa: E402
from benchsmith.stores.benchmark_files import serialize_history  # noqa: E402
from benchsmith.tools.bm25 import BM25Index  # noqa: E402
from benchsmith.tools.dense_retrieval import DenseIndex  # noqa: E402
from benchsmith.tools.fusion import fuse_runs  # noqa: E402

VOCABULARY = 5_000
ZIPF_EXPONENT = 1.07
TOPICS = 500
TOPIC_WORDS = 30
TOPIC_SHARE = 0.35  # of a document's words drawn from its topic's words
DOCUMENT_WORDS = (60, 120)
QUESTION_WORDS = (4, 8)
ANSWER_WORDS = (12, 24)
TURNS = 5
DIMENSION = 384
CHROMA_SAMPLE = 500
CHROMA_BATCH = 4096
MEASURE_RATIO = 1.10
QUESTION_OPENINGS = ("what about", "and", "how does", "tell me about", "what is the", "why is")


class Data:
    def __init__(self, documents: int, queries: int, seed: int):
        rng = np.random.default_rng(seed)
        self.words = self._vocabulary(rng)
        background = 1.0 / np.arange(1, VOCABULARY + 1) ** ZIPF_EXPONENT
        background /= background.sum()
        # Topic words from the less frequent part of the vocabulary: they are what tells topics apart.
        topic_words = rng.integers(VOCABULARY // 20, VOCABULARY, size=(TOPICS, TOPIC_WORDS))

        self.doc_ids = [f"d{i:06d}" for i in range(documents)]
        self.topics = rng.integers(TOPICS, size=documents)
        lengths = rng.integers(DOCUMENT_WORDS[0], DOCUMENT_WORDS[1] + 1, size=documents)
        ends = np.cumsum(lengths)
        starts = ends - lengths
        total = int(ends[-1])
        owner = np.repeat(np.arange(documents), lengths)
        tokens = rng.choice(VOCABULARY, size=total, p=background)
        from_topic = rng.random(total) < TOPIC_SHARE
        picks = rng.integers(TOPIC_WORDS, size=int(from_topic.sum()))
        tokens[from_topic] = topic_words[self.topics[owner[from_topic]], picks]
        words = self.words[tokens].tolist()
        self.texts = [" ".join(words[start:end]) for start, end in zip(starts.tolist(), ends.tolist())]
        self._tokens, self._starts, self._ends = tokens, starts, ends

        # Dense vectors: document = topic centroid + noise (cosine ≈ 0.7), query = gold + noise (≈ 0.8).
        centroids = _normalized(rng.standard_normal((TOPICS, DIMENSION), dtype=np.float32))
        noise = rng.standard_normal((documents, DIMENSION), dtype=np.float32) / np.float32(np.sqrt(DIMENSION))
        self.doc_vectors = _normalized(centroids[self.topics] + noise)

        # Conversations: one topic each, a different gold document per turn.
        by_topic = np.argsort(self.topics, kind="stable")
        topic_ends = np.cumsum(np.bincount(self.topics, minlength=TOPICS))
        topic_starts = topic_ends - np.bincount(self.topics, minlength=TOPICS)
        populated = np.flatnonzero(topic_ends - topic_starts >= TURNS + 2)
        self.query_ids: list[str] = []
        self.queries: dict[str, str] = {}
        self.qrels: dict[str, dict[str, int]] = {}
        gold: list[int] = []
        conversation = 0
        while len(self.query_ids) < queries:
            topic = rng.choice(populated)
            members = by_topic[topic_starts[topic] : topic_ends[topic]]
            picked = rng.choice(members, size=TURNS + 2, replace=False)
            turns: list[dict[str, str]] = []
            for turn, document in enumerate(picked[:TURNS].tolist()):
                if len(self.query_ids) == queries:
                    break
                query_id = f"c{conversation:05d}_t{turn + 1}"
                opening = QUESTION_OPENINGS[rng.integers(len(QUESTION_OPENINGS))]
                question = f"{opening} {self._sample_words(rng, document, QUESTION_WORDS, rare=True)}?"
                turns.append({"question": question, "response": ""})
                self.queries[query_id] = serialize_history(turns, len(turns) - 1)
                turns[-1]["response"] = self._sample_words(rng, document, ANSWER_WORDS, rare=False) + "."
                # The gold document, and two other documents of the topic judged partly and not relevant.
                extra = rng.choice(picked[TURNS:], size=2, replace=False).tolist()
                self.qrels[query_id] = {self.doc_ids[document]: 2, self.doc_ids[extra[0]]: 1,
                                        self.doc_ids[extra[1]]: 0}
                self.query_ids.append(query_id)
                gold.append(document)
            conversation += 1
        self.conversations = conversation
        noise = rng.standard_normal((len(gold), DIMENSION), dtype=np.float32) / np.float32(np.sqrt(DIMENSION))
        self.query_vectors = _normalized(self.doc_vectors[np.asarray(gold)] + np.float32(0.75) * noise)
        del self._tokens

    @staticmethod
    def _vocabulary(rng: np.random.Generator) -> np.ndarray:
        # Three syllables of consonant + vowel: no English stopword, one stem each.
        syllables = np.array([c + v for c in "bdfgklmnprstvz" for v in "aeiou"])
        words: set[str] = set()
        while len(words) < VOCABULARY:
            words.update("".join(parts) for parts in syllables[rng.integers(len(syllables), size=(VOCABULARY, 3))])
        return np.array(sorted(words)[:VOCABULARY], dtype=object)[rng.permutation(VOCABULARY)]

    def _sample_words(self, rng: np.random.Generator, document: int, bounds: tuple[int, int], rare: bool) -> str:
        tokens = self._tokens[self._starts[document] : self._ends[document]]
        count = min(len(tokens), int(rng.integers(bounds[0], bounds[1] + 1)))
        weights = (tokens + 1.0) if rare else np.ones(len(tokens))  # token id = frequency rank
        chosen = rng.choice(len(tokens), size=count, replace=False, p=weights / weights.sum())
        return " ".join(self.words[tokens[np.sort(chosen)]].tolist())


def _normalized(vectors: np.ndarray) -> np.ndarray:
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def timed(function, *args, **kwargs):
    started = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - started


def per_thousand(seconds: float, queries: int) -> float:
    return seconds * 1000 / queries


def run_size(run: dict) -> int:
    return sum(len(documents) for documents in run.values())


def chroma_search(data: Data, dense_run: dict, depth: int, seed: int) -> dict:
    import chromadb
    import chromadb.config

    rng = np.random.default_rng(seed + 1)
    sample = np.sort(rng.choice(len(data.query_ids), size=min(CHROMA_SAMPLE, len(data.query_ids)), replace=False))
    with tempfile.TemporaryDirectory(prefix="bench-chroma-") as directory:
        client = chromadb.PersistentClient(path=directory,
                                           settings=chromadb.config.Settings(anonymized_telemetry=False))
        collection = client.create_collection("bench", embedding_function=None, metadata={"hnsw:space": "cosine"})
        started = time.perf_counter()
        for start in range(0, len(data.doc_ids), CHROMA_BATCH):
            collection.add(ids=data.doc_ids[start : start + CHROMA_BATCH],
                           embeddings=data.doc_vectors[start : start + CHROMA_BATCH])
        added = time.perf_counter() - started
        n_results = min(depth, len(data.doc_ids))
        result, searched = timed(collection.query, query_embeddings=data.query_vectors[sample], n_results=n_results,
                                 include=["distances"])
        del collection, client
    recalls = []
    for position, ids in zip(sample.tolist(), result["ids"]):
        exact = list(dense_run[data.query_ids[position]])[:n_results]
        recalls.append(len(set(ids) & set(exact)) / len(exact))
    return {"add": added, "search": searched, "queries": len(sample), "recall": float(np.mean(recalls)),
            "recall_min": float(np.min(recalls))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=int, default=50_000)
    parser.add_argument("--queries", type=int, default=8_000)
    parser.add_argument("--depth", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="timings of the measures, interleaved; best kept")
    parser.add_argument("--skip-chroma", action="store_true", help="skip the Chroma HNSW comparison (~30 s)")
    args = parser.parse_args()
    cpus = os.cpu_count()
    available = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cpus
    began = time.perf_counter()

    data, seconds = timed(Data, args.documents, args.queries, args.seed)
    words = sum(len(text.split()) for text in data.texts) / len(data.texts)
    query_words = sum(len(text.split()) for text in data.queries.values()) / len(data.queries)
    print(f"data: {len(data.doc_ids):,} documents ({words:.0f} words on average), {len(data.queries):,} queries "
          f"({data.conversations:,} conversations, {query_words:.0f} words on average), "
          f"{sum(map(len, data.qrels.values())):,} judgments; generated in {seconds:.1f} s", flush=True)
    load = "load average " + " ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"machine: {cpus} CPUs ({available} available to this process), {load}; depth {args.depth:,}", flush=True)
    queries = len(data.queries)

    # 1. BM25.
    index, bm25_build = timed(BM25Index, data.doc_ids, data.texts)
    print(f"bm25: index built in {bm25_build:.2f} s", flush=True)
    bm25_run, bm25_search = timed(index.search, data.queries, depth=args.depth)
    del index
    print(f"bm25: {queries:,} queries in {bm25_search:.2f} s = {per_thousand(bm25_search, queries):.2f} s per 1,000 "
          f"({run_size(bm25_run):,} scored documents)", flush=True)

    # 2. Dense, exact; Chroma's HNSW beside it.
    dense = DenseIndex(data.doc_ids, data.doc_vectors)
    dense_run, dense_search = timed(dense.search, data.query_ids, data.query_vectors, depth=args.depth)
    del dense
    print(f"dense: {queries:,} queries in {dense_search:.2f} s = {per_thousand(dense_search, queries):.2f} s per "
          f"1,000 (exact)", flush=True)
    chroma = None
    if not args.skip_chroma:
        chroma = chroma_search(data, dense_run, args.depth, args.seed)
        print(f"chroma: {len(data.doc_ids):,} vectors added in {chroma['add']:.1f} s; {chroma['queries']} queries in "
              f"{chroma['search']:.2f} s = {per_thousand(chroma['search'], chroma['queries']):.2f} s per 1,000 "
              f"({chroma['search'] * queries / (chroma['queries'] * dense_search):.1f}× exact); "
              f"recall of the exact top {min(args.depth, len(data.doc_ids)):,}: {chroma['recall']:.3f} "
              f"(lowest {chroma['recall_min']:.3f})", flush=True)

    # 3. Fusion: a tiny call compiles ranx's numba functions first. Its compiled functions are
    # specialized on the width of the document ids (ranx stores them as numpy "<U{width}"
    # arrays), so the warm-up uses ids of the corpus's width: others would compile again.
    a, b, c = data.doc_ids[:3]
    tiny = [{"q": {a: 2.0, b: 1.0}}, {"q": {b: 2.0, c: 1.0}}]
    _, cold = timed(fuse_runs, tiny, "rrf", depth=args.depth)
    _, warm = timed(fuse_runs, tiny, "rrf", depth=args.depth)
    fused, fusion = timed(fuse_runs, [bm25_run, dense_run], "rrf", depth=args.depth)
    print(f"fusion: warm-up call {cold:.2f} s cold (numba compilation), {warm * 1000:.1f} ms warm; RRF of "
          f"{queries:,} queries in {fusion:.2f} s = {per_thousand(fusion, queries):.2f} s per 1,000 "
          f"({run_size(fused):,} fused documents)", flush=True)
    del fused, dense_run

    # 4. Measures: ours against ir_measures alone, interleaved, alternating which goes first.
    measures = parse_measures(DEFAULT_MEASURES)
    small = dict(list(bm25_run.items())[:10])
    evaluate_run(measures, data.qrels, small)  # loads the providers once, for both
    list(ir_measures.iter_calc(measures, data.qrels, small))
    times: dict[str, list[float]] = {"ours": [], "ir_measures": []}
    calls = {"ours": lambda: evaluate_run(measures, data.qrels, bm25_run),
             "ir_measures": lambda: list(ir_measures.iter_calc(measures, data.qrels, bm25_run))}
    for repeat in range(args.repeat):
        for name in (("ours", "ir_measures") if repeat % 2 == 0 else ("ir_measures", "ours")):
            gc.collect()
            _, seconds = timed(calls[name])
            times[name].append(seconds)
            del _
        print(f"measures, round {repeat + 1}: ours {times['ours'][-1]:.2f} s, "
              f"ir_measures alone {times['ir_measures'][-1]:.2f} s", flush=True)
    ours, baseline = min(times["ours"]), min(times["ir_measures"])
    ratio = ours / baseline
    check = evaluate_run(measures, data.qrels, bm25_run).aggregate
    print(f"measures: {len(measures)} measures on {queries:,} queries; nDCG@10 {check['nDCG@10']:.3f}, "
          f"R@1000 {check['R@1000']:.3f}, RR@10 {check['RR@10']:.3f} (BM25)")
    total = time.perf_counter() - began

    met = ratio <= MEASURE_RATIO
    print("\nsummary")
    print(f"  machine                   {cpus} CPUs ({available} available), {args.documents:,} documents, "
          f"{queries:,} queries, depth {args.depth:,}, seed {args.seed}")
    print(f"  bm25 build                {bm25_build:8.2f} s")
    print(f"  bm25 search               {per_thousand(bm25_search, queries):8.2f} s / 1,000 queries")
    print(f"  dense search (exact)      {per_thousand(dense_search, queries):8.2f} s / 1,000 queries")
    if chroma is not None:
        chroma_rate = per_thousand(chroma["search"], chroma["queries"])
        print(f"  chroma search (HNSW)      {chroma_rate:8.2f} s / 1,000 queries "
              f"({chroma_rate / per_thousand(dense_search, queries):.1f}× exact), recall {chroma['recall']:.3f}, "
              f"add {chroma['add']:.1f} s")
    print(f"  fusion (RRF, warm)        {per_thousand(fusion, queries):8.2f} s / 1,000 queries "
          f"(cold warm-up {cold:.1f} s)")
    print(f"  measures, ours            {ours:8.2f} s (best of {args.repeat}; "
          f"median {statistics.median(times['ours']):.2f})")
    print(f"  measures, ir_measures     {baseline:8.2f} s (best of {args.repeat}; "
          f"median {statistics.median(times['ir_measures']):.2f})")
    print(f"  {'ratio ours / ir_measures':<26}{ratio:8.3f}  "
          f"(target ≤ {MEASURE_RATIO:.2f}: {'met' if met else 'NOT met'})")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux
    print(f"  total                     {total:8.1f} s, peak memory {peak:.1f} GiB, "
          f"load average {os.getloadavg()[0]:.2f} at the end")
    if not met:
        sys.exit(1)


if __name__ == "__main__":
    main()
