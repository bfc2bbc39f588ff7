"""The evaluation path at scale, streamed a batch of queries at a time as ``benchsmith
evaluate`` runs it: BM25 and dense retrieval into TREC run files, RRF fusion of those files,
and the measures; with ``--end-to-end``, the whole evaluate job as well.

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

Measured in one run, every stage streaming ``--batch-size`` queries at a time through run
files in a temporary folder (stores/formats/trec.py), as graphs/evaluate/ does:

* BM25 (``tools.retrieval.bm25.BM25Index``): index build seconds; seconds per 1,000 queries at
  ``--depth`` in ``BM25Index.search`` (retrieval), and for the stage with writing the run file;
* dense (``tools.retrieval.dense_retrieval.DenseIndex``, exact, blocks of 256 queries): the same two;
  unless ``--skip-chroma``, the same vectors in a Chroma collection (HNSW, cosine): seconds to
  add them, seconds per 1,000 queries on a sample of 500 queries at the same depth, and the
  recall of Chroma's top ``--depth`` against the exact one (the claim of
  ``tools/retrieval/dense_retrieval.py``: exact search is both faster and complete);
* fusion (``tools.retrieval.fusion.fuse_runs``, RRF of the BM25 and dense run files read side by side):
  seconds per 1,000 queries in ``fuse_runs``, and for the stage with reading and writing;
* measures: per batch of the BM25 run, ``evals.measures.standard.evaluate_batches`` with the default
  measures against ir_measures alone (``list(ir_measures.iter_calc(...))`` on the same
  rankings and those queries' judgments), each timed ``--repeat`` times, interleaved, the
  best time of each batch kept;
* peak memory: the peak resident set size of this process (``resource.getrusage``'s
  ``ru_maxrss``, which counts everything: Python objects, numpy arrays, Chroma, pytrec_eval);
* ``--end-to-end``: the data written as a BEIR directory and evaluated by the evaluate job
  itself (``benchsmith.jobs.evaluate.evaluate``: dense, BM25 and RRF, full history,
  the default measures, significance tests, report) in a child process, with a registered
  embedder that looks the precomputed vectors up; its seconds and its own peak resident set.

Targets (exit status 1 if one is missed): RRF seconds ≤ BM25 retrieval seconds for the same
queries; measures ours / ir_measures alone ≤ 1.10; peak memory ≤ 3 GiB (the end-to-end job's
too, when run). The other numbers are reported, not judged.

    .venv/bin/python benchmarks/evaluate.py [--documents 50000] [--queries 8000] [--depth 1000]
        [--batch-size 1000] [--seed 0] [--repeat 3] [--skip-chroma] [--end-to-end]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchsmith.tools.offline import offline_environment

offline_environment()  # before the imports below load models or Chroma

import ir_measures  # noqa: E402

from benchsmith.evals.measures.standard import DEFAULT_MEASURES, evaluate_batches, parse_measures  # noqa: E402
from benchsmith.stores.formats.benchmark_files import serialize_history  # noqa: E402
from benchsmith.stores.formats.trec import iter_aligned_batches, iter_run_batches, trec_run_writer  # noqa: E402
from benchsmith.tools.retrieval.bm25 import BM25Index  # noqa: E402
from benchsmith.tools.retrieval.dense_retrieval import QUERY_BATCH as DENSE_BLOCK  # noqa: E402
from benchsmith.tools.retrieval.dense_retrieval import DenseIndex  # noqa: E402
from benchsmith.tools.retrieval.fusion import fuse_runs  # noqa: E402

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
MEASURE_RATIO = 1.10  # target: our measures / ir_measures alone
FUSION_RATIO = 1.0  # target: RRF seconds / BM25 retrieval seconds, same queries
PEAK_GIB = 3.0  # target: peak resident memory of this process
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
                self.qrels[query_id] = {self.doc_ids[document]: 2, self.doc_ids[extra[0]]: 1, self.doc_ids[extra[1]]: 0}
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


def per_thousand(seconds: float, queries: int) -> float:
    return seconds * 1000 / queries


def peak_gib() -> float:
    """Peak resident set size of this process (ru_maxrss is in KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class Stage:
    """Seconds of one streamed stage: in the timed calls, and in all (with file reading and writing)."""

    def __init__(self) -> None:
        self.timed = 0.0
        self.began = time.perf_counter()
        self.total = 0.0
        self.entries = 0

    def call(self, function, *args, **kwargs):
        started = time.perf_counter()
        result = function(*args, **kwargs)
        self.timed += time.perf_counter() - started
        return result

    def done(self) -> Stage:
        self.total = time.perf_counter() - self.began
        return self


def retrieve_bm25(data: Data, index: BM25Index, path: Path, depth: int, batch_size: int) -> Stage:
    stage = Stage()
    with trec_run_writer(path, "bm25") as write:
        for batch in chunks(sorted(data.query_ids), batch_size):
            run = stage.call(index.search, {query_id: data.queries[query_id] for query_id in batch}, depth)
            stage.entries += sum(map(len, run.values()))
            write(run)
    return stage.done()


def retrieve_dense(data: Data, index: DenseIndex, path: Path, depth: int) -> Stage:
    stage = Stage()
    position = {query_id: row for row, query_id in enumerate(data.query_ids)}
    with trec_run_writer(path, "dense") as write:
        for batch in chunks(sorted(data.query_ids), DENSE_BLOCK):
            vectors = data.query_vectors[[position[query_id] for query_id in batch]]
            write(stage.call(index.search, batch, vectors, depth))
    return stage.done()


def fuse_files(paths: list[Path], target: Path, depth: int, batch_size: int) -> Stage:
    stage = Stage()
    with trec_run_writer(target, "rrf") as write:
        for runs in iter_aligned_batches(paths, batch_size):
            fused = stage.call(fuse_runs, runs, "rrf", depth=depth)
            stage.entries += sum(map(len, fused.values()))
            write(fused)
    return stage.done()


def compare_measures(data: Data, path: Path, batch_size: int, repeat: int) -> dict:
    """Per batch: ours and ir_measures alone on the same rankings, interleaved, best of ``repeat``."""
    measures = parse_measures(DEFAULT_MEASURES)
    times = {"ours": 0.0, "ir_measures": 0.0}
    warmed = False
    means = np.zeros(len(measures))
    for number, batch in enumerate(iter_run_batches(path, batch_size)):
        judged = {query_id: data.qrels[query_id] for query_id in batch if query_id in data.qrels}
        calls = {
            "ours": lambda batch=batch: evaluate_batches(measures, data.qrels, [batch]),
            "ir_measures": lambda batch=batch, judged=judged: list(ir_measures.iter_calc(measures, judged, batch)),
        }
        if not warmed:  # loads the providers once, for both
            for call in calls.values():
                call()
            warmed = True
        best = {name: float("inf") for name in calls}
        for attempt in range(repeat):
            for name in ("ours", "ir_measures") if (attempt + number) % 2 == 0 else ("ir_measures", "ours"):
                started = time.perf_counter()
                result = calls[name]()
                best[name] = min(best[name], time.perf_counter() - started)
                if name == "ours" and attempt == 0:
                    means += result.values.sum(axis=0)
                del result
        for name in calls:
            times[name] += best[name]
    means /= len(data.qrels)
    return {**times, "means": dict(zip([str(m) for m in measures], means.tolist()))}


def chroma_search(data: Data, dense: DenseIndex, depth: int, seed: int) -> dict:
    import chromadb
    import chromadb.config

    rng = np.random.default_rng(seed + 1)
    sample = np.sort(rng.choice(len(data.query_ids), size=min(CHROMA_SAMPLE, len(data.query_ids)), replace=False))
    sample_ids = [data.query_ids[position] for position in sample.tolist()]
    exact = dense.search(sample_ids, data.query_vectors[sample], depth)
    with tempfile.TemporaryDirectory(prefix="bench-chroma-") as directory:
        client = chromadb.PersistentClient(
            path=directory, settings=chromadb.config.Settings(anonymized_telemetry=False)
        )
        collection = client.create_collection("bench", embedding_function=None, metadata={"hnsw:space": "cosine"})
        started = time.perf_counter()
        for start in range(0, len(data.doc_ids), CHROMA_BATCH):
            collection.add(
                ids=data.doc_ids[start : start + CHROMA_BATCH],
                embeddings=data.doc_vectors[start : start + CHROMA_BATCH],
            )
        added = time.perf_counter() - started
        n_results = min(depth, len(data.doc_ids))
        started = time.perf_counter()
        result = collection.query(
            query_embeddings=data.query_vectors[sample], n_results=n_results, include=["distances"]
        )
        searched = time.perf_counter() - started
        del collection, client
    recalls = [
        len(set(ids) & set(exact[query_id])) / len(exact[query_id]) for query_id, ids in zip(sample_ids, result["ids"])
    ]
    return {
        "add": added,
        "search": searched,
        "queries": len(sample),
        "recall": float(np.mean(recalls)),
        "recall_min": float(np.min(recalls)),
    }


# ---------------------------------------------------------------------------------------
# End to end: the evaluate job itself, in a child process.

END_TO_END_CHILD = """
import json, resource, sys, time
from pathlib import Path
import numpy as np
from benchsmith.jobs.evaluate import evaluate
from benchsmith.graphs.runtime.resources import register_embedder

directory = Path(sys.argv[1])
texts = json.loads((directory / "texts.json").read_text(encoding="utf-8"))
vectors = np.load(directory / "vectors.npy")
row = {text: position for position, text in enumerate(texts)}

class PrecomputedEmbedder:
    name = "benchmark-precomputed"
    def encode(self, batch):
        return vectors[[row[text] for text in batch]]

register_embedder(PrecomputedEmbedder())
started = time.perf_counter()
result = evaluate(directory / "beir", retrievers=["dense", "bm25", "hybrid:rrf(dense,bm25)"], histories=["full"],
                  depth=int(sys.argv[2]), batch_size=int(sys.argv[3]), embedder="benchmark-precomputed",
                  workspace=directory / "ws", run_id="bench")
print(json.dumps({"seconds": time.perf_counter() - started, "aggregate": result.aggregate,
                  "warnings": result.warnings,
                  "peak_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20}))
"""


def end_to_end(data: Data, depth: int, batch_size: int) -> dict:
    """The evaluate job on the data as a BEIR directory (single-turn queries whose text is the
    full history, so that the dense retriever's query texts are the ones with vectors)."""
    with tempfile.TemporaryDirectory(prefix="bench-evaluate-") as directory:
        root = Path(directory)
        beir = root / "beir"
        (beir / "qrels").mkdir(parents=True)
        with (beir / "corpus.jsonl").open("w", encoding="utf-8") as handle:
            handle.writelines(
                json.dumps({"_id": doc_id, "title": "", "text": text}) + "\n"
                for doc_id, text in zip(data.doc_ids, data.texts)
            )
        with (beir / "queries.jsonl").open("w", encoding="utf-8") as handle:
            handle.writelines(
                json.dumps({"_id": query_id, "text": data.queries[query_id]}) + "\n" for query_id in data.query_ids
            )
        with (beir / "qrels" / "test.tsv").open("w", encoding="utf-8") as handle:
            handle.write("query-id\tcorpus-id\tscore\n")
            handle.writelines(
                f"{query_id}\t{doc_id}\t{relevance}\n"
                for query_id, judged in data.qrels.items()
                for doc_id, relevance in judged.items()
            )
        texts = [*data.texts, *(data.queries[query_id] for query_id in data.query_ids)]
        (root / "texts.json").write_text(json.dumps(texts), encoding="utf-8")
        np.save(root / "vectors.npy", np.vstack([data.doc_vectors, data.query_vectors]))
        environment = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
        child = subprocess.run(
            [sys.executable, "-c", END_TO_END_CHILD, directory, str(depth), str(batch_size)],
            capture_output=True,
            text=True,
            env=environment,
        )
        if child.returncode != 0:
            raise SystemExit(f"the end-to-end evaluation failed:\n{child.stderr[-3000:]}")
        return json.loads(child.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=int, default=50_000)
    parser.add_argument("--queries", type=int, default=8_000)
    parser.add_argument("--depth", type=int, default=1_000)
    parser.add_argument("--batch-size", type=int, default=1_000, help="queries per batch (the evaluate default)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="timings of the measures, interleaved; best kept")
    parser.add_argument("--skip-chroma", action="store_true", help="skip the Chroma HNSW comparison (~30 s)")
    parser.add_argument("--end-to-end", action="store_true", help="also run the evaluate job on the data")
    args = parser.parse_args()
    cpus = os.cpu_count()
    available = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cpus
    began = time.perf_counter()

    started = time.perf_counter()
    data = Data(args.documents, args.queries, args.seed)
    words = sum(len(text.split()) for text in data.texts) / len(data.texts)
    query_words = sum(len(text.split()) for text in data.queries.values()) / len(data.queries)
    print(
        f"data: {len(data.doc_ids):,} documents ({words:.0f} words on average), {len(data.queries):,} queries "
        f"({data.conversations:,} conversations, {query_words:.0f} words on average), "
        f"{sum(map(len, data.qrels.values())):,} judgments; generated in {time.perf_counter() - started:.1f} s",
        flush=True,
    )
    load = "load average " + " ".join(f"{value:.2f}" for value in os.getloadavg())
    print(
        f"machine: {cpus} CPUs ({available} available to this process), {load}; depth {args.depth:,}, "
        f"batches of {args.batch_size:,} queries",
        flush=True,
    )
    queries = len(data.queries)

    with tempfile.TemporaryDirectory(prefix="bench-runs-") as directory:
        files = {name: Path(directory) / f"{name}.trec" for name in ("bm25", "dense", "rrf")}

        # 1. BM25.
        started = time.perf_counter()
        index = BM25Index(data.doc_ids, data.texts)
        bm25_build = time.perf_counter() - started
        print(f"bm25: index built in {bm25_build:.2f} s", flush=True)
        bm25 = retrieve_bm25(data, index, files["bm25"], args.depth, args.batch_size)
        del index
        print(
            f"bm25: {queries:,} queries in {bm25.timed:.2f} s = {per_thousand(bm25.timed, queries):.2f} s per "
            f"1,000 ({bm25.entries:,} scored documents); with writing the run file "
            f"{per_thousand(bm25.total, queries):.2f} s per 1,000",
            flush=True,
        )

        # 2. Dense, exact; Chroma's HNSW beside it.
        dense_index = DenseIndex(data.doc_ids, data.doc_vectors)
        dense = retrieve_dense(data, dense_index, files["dense"], args.depth)
        print(
            f"dense: {queries:,} queries in {dense.timed:.2f} s = {per_thousand(dense.timed, queries):.2f} s per "
            f"1,000 (exact); with writing {per_thousand(dense.total, queries):.2f} s per 1,000",
            flush=True,
        )
        chroma = None
        if not args.skip_chroma:
            chroma = chroma_search(data, dense_index, args.depth, args.seed)
            print(
                f"chroma: {len(data.doc_ids):,} vectors added in {chroma['add']:.1f} s; {chroma['queries']} "
                f"queries in {chroma['search']:.2f} s = {per_thousand(chroma['search'], chroma['queries']):.2f} s "
                f"per 1,000 ({chroma['search'] * queries / (chroma['queries'] * dense.timed):.1f}× exact); "
                f"recall of the exact top {min(args.depth, len(data.doc_ids)):,}: {chroma['recall']:.3f} "
                f"(lowest {chroma['recall_min']:.3f})",
                flush=True,
            )
        del dense_index

        # 3. Fusion of the two run files, read side by side a batch at a time.
        fusion = fuse_files([files["bm25"], files["dense"]], files["rrf"], args.depth, args.batch_size)
        print(
            f"fusion: RRF of {queries:,} queries in {fusion.timed:.2f} s = "
            f"{per_thousand(fusion.timed, queries):.2f} s per 1,000 ({fusion.entries:,} fused documents; "
            f"{fusion.timed / bm25.timed:.2f}× BM25 retrieval); with reading and writing the run files "
            f"{per_thousand(fusion.total, queries):.2f} s per 1,000",
            flush=True,
        )

        # 4. Measures: ours against ir_measures alone, per batch of the BM25 run.
        measured = compare_measures(data, files["bm25"], args.batch_size, args.repeat)
        means = measured["means"]
        print(
            f"measures: {len(DEFAULT_MEASURES)} measures on {queries:,} queries: ours {measured['ours']:.2f} s, "
            f"ir_measures alone {measured['ir_measures']:.2f} s (best of {args.repeat} per batch); nDCG@10 "
            f"{means['nDCG@10']:.3f}, R@1000 {means['R@1000']:.3f}, RR@10 {means['RR@10']:.3f} (BM25)",
            flush=True,
        )
    peak = peak_gib()
    print(f"peak memory (ru_maxrss of this process): {peak:.2f} GiB", flush=True)

    whole = None
    if args.end_to_end:
        whole = end_to_end(data, args.depth, args.batch_size)
        print(
            f"end to end: the evaluate job (dense, bm25, RRF; full history) on {queries:,} queries in "
            f"{whole['seconds']:.1f} s, peak memory {whole['peak_gib']:.2f} GiB (ru_maxrss of its process); "
            f"nDCG@10 " + ", ".join(f"{name} {values['nDCG@10']:.3f}" for name, values in whole["aggregate"].items()),
            flush=True,
        )
    total = time.perf_counter() - began

    fusion_ratio = fusion.timed / bm25.timed
    measure_ratio = measured["ours"] / measured["ir_measures"]
    checks = {
        "fusion": fusion_ratio <= FUSION_RATIO,
        "measures": measure_ratio <= MEASURE_RATIO,
        "memory": peak <= PEAK_GIB and (whole is None or whole["peak_gib"] <= PEAK_GIB),
    }
    verdict = {name: "met" if met else "NOT met" for name, met in checks.items()}
    print("\nsummary")
    print(
        f"  machine                   {cpus} CPUs ({available} available), {args.documents:,} documents, "
        f"{queries:,} queries, depth {args.depth:,}, batches of {args.batch_size:,}, seed {args.seed}"
    )
    print(f"  bm25 build                {bm25_build:8.2f} s")
    print(
        f"  bm25 retrieval            {per_thousand(bm25.timed, queries):8.2f} s / 1,000 queries "
        f"({per_thousand(bm25.total, queries):.2f} with writing)"
    )
    print(
        f"  dense retrieval (exact)   {per_thousand(dense.timed, queries):8.2f} s / 1,000 queries "
        f"({per_thousand(dense.total, queries):.2f} with writing)"
    )
    if chroma is not None:
        chroma_rate = per_thousand(chroma["search"], chroma["queries"])
        print(
            f"  chroma search (HNSW)      {chroma_rate:8.2f} s / 1,000 queries "
            f"({chroma_rate / per_thousand(dense.timed, queries):.1f}× exact), recall {chroma['recall']:.3f}, "
            f"add {chroma['add']:.1f} s"
        )
    print(
        f"  fusion (RRF)              {per_thousand(fusion.timed, queries):8.2f} s / 1,000 queries "
        f"({per_thousand(fusion.total, queries):.2f} with reading and writing)"
    )
    print(f"  {'ratio RRF / BM25':<26}{fusion_ratio:8.3f}  (target ≤ {FUSION_RATIO:.2f}: {verdict['fusion']})")
    print(f"  measures, ours            {measured['ours']:8.2f} s (best of {args.repeat} per batch)")
    print(f"  measures, ir_measures     {measured['ir_measures']:8.2f} s (best of {args.repeat} per batch)")
    print(
        f"  {'ratio ours / ir_measures':<26}{measure_ratio:8.3f}  (target ≤ {MEASURE_RATIO:.2f}: {verdict['measures']})"
    )
    print(f"  {'peak memory (ru_maxrss)':<26}{peak:8.2f} GiB (target ≤ {PEAK_GIB:.1f}: {verdict['memory']})")
    if whole is not None:
        print(f"  {'evaluate job, end to end':<26}{whole['seconds']:8.1f} s, peak {whole['peak_gib']:.2f} GiB")
    print(f"  total                     {total:8.1f} s, load average {os.getloadavg()[0]:.2f} at the end")
    if not all(checks.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
