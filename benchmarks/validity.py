"""Validity yardstick: does a synthesized benchmark rank retrievers as human questions do?

Both benchmarks are built over the same corpus, the one ``benchsmith ingest stdlib`` indexes
(the docstrings of the running Python's standard library, cleaned, chunked, deduplicated and
quality-filtered):

* the hand-labelled set, ``data/stdlib-validity.jsonl``: natural questions a Python developer
  asks, each with the chunks that answer it, found and checked by reading (data/README.md).
  Gold chunks are re-found by their evidence spans in the ingested chunks, so the set still
  holds when cleaning or chunking change; it is written as a BEIR directory whose
  ``corpus.jsonl`` is the synthesized benchmark's own;
* a benchmark synthesized from the collection by ``benchsmith.synthesize`` with ``--llm``
  (default: the offline baseline agents).

``benchsmith.validate`` (the ``benchsmith validate`` job) then evaluates every ``--retriever``
on both: on the hand-labelled set (single-turn: every history mode sends the question) and on
the synthesized one with each ``--history`` (default ``oracle``, the self-contained rewrite, the
form that is comparable to a standalone question; add ``--history full`` for the conversational
form), one validation per mode. The configurations are ranked by nDCG@10 on each benchmark, and
Kendall's τ-b between the scores of the two says how far the synthesized benchmark orders
retrievers as the human questions do: 1 the same order, 0 unrelated, -1 reversed, with a
seeded bootstrap interval over the queries of both sets (``--bootstrap``) and scipy's p-value
for τ = 0. With few configurations one swap moves τ a lot.

Runs are named by a fingerprint of their settings and of the benchsmith source, so the same
command reuses finished work (the embedded collection above all) and any code change, such as
a new questioner, gets fresh synthesis and evaluation runs::

    .venv/bin/python benchmarks/validity.py [--workspace .benchsmith] [--llm baseline]
        [--conversations 50] [--turns 6] [--seed 0] [--history oracle ...] [--retriever ...]
    .venv/bin/python benchmarks/validity.py --update-data   # re-find gold chunk ids after a
                                                            # cleaning or chunking change

The first run embeds the corpus (about 1,800 chunks: 2-10 minutes on 2 CPU cores). Later runs
reuse the collection: about a minute when synthesis and evaluation are new (another seed, a code
change), seconds when nothing changed. Deterministic for given settings and seed.
"""

from __future__ import annotations

import argparse
import hashlib
import platform
import shutil
import sys
import time
from pathlib import Path

from benchsmith.tools.offline import offline_environment

offline_environment()  # before the imports below load models or Chroma

import benchsmith  # noqa: E402
from benchsmith.stores.formats.benchmark_files import write_beir_qrels  # noqa: E402
from benchsmith.stores.formats.labelled_questions import (  # noqa: E402
    CorpusChunk,
    LabelledQuestion,
    read_labelled_questions,
    relabelled,
    resolve_gold,
    write_labelled_questions,
)
from benchsmith.stores.persistence.files import atomic_writer  # noqa: E402
from benchsmith.stores.persistence.jsonl import load_jsonl, write_jsonl_atomic  # noqa: E402
from benchsmith.tools.defaults import DEFAULT_MAX_OVERLAP  # noqa: E402

DATA_FILE = Path(__file__).resolve().parent.parent / "data" / "stdlib-validity.jsonl"
COLLECTION_PREFIX = "stdlib"
RETRIEVERS = (
    "bm25",
    "dense",
    "hybrid:rrf(dense,bm25)",
    "hybrid:combsum(dense,bm25)",
    "hybrid:wsum(dense=0.7,bm25=0.3)",
    "hybrid:wsum(dense=0.3,bm25=0.7)",
    "hybrid:wsum(dense=0.9,bm25=0.1)",
)
HISTORIES = ("oracle",)
MEASURE = "nDCG@10"
BOOTSTRAP = 1000
PACKAGES = ("benchsmith", "graphs", "agents", "tools", "stores", "evals")  # benchsmith: the job functions
# What decides the ingested chunks; a change here means a new collection (a new embedding).
INGEST_SOURCES = ("tools", "graphs/ingest.py", "benchsmith/jobs/ingest.py")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workspace", default=".benchsmith", help="benchsmith workspace (collections, runs)")
    parser.add_argument("--data", type=Path, default=DATA_FILE, help="the hand-labelled questions")
    parser.add_argument("--llm", default="baseline", help="model that synthesizes: baseline or openai:<model>")
    parser.add_argument("--conversations", type=int, default=50)
    parser.add_argument("--turns", type=int, default=6)
    parser.add_argument("--seed", type=int, default=0, help="seed of synthesis and of the bootstrap")
    parser.add_argument(
        "--max-overlap",
        type=float,
        default=DEFAULT_MAX_OVERLAP,
        help="synthesis's overlap control (1 turns it off: questions may copy their gold's words)",
    )
    parser.add_argument("--bootstrap", type=int, default=BOOTSTRAP, help="bootstrap resamples for the interval of tau")
    parser.add_argument("--retriever", action="append", help=f"repeatable (default: {', '.join(RETRIEVERS)})")
    parser.add_argument(
        "--history", action="append", help="history modes on the synthesized benchmark, repeatable (default: oracle)"
    )
    parser.add_argument(
        "--update-data",
        action="store_true",
        help="re-find every gold chunk id of --data by its evidence in this Python's stdlib chunks, "
        "rewrite the file and stop (no embedding)",
    )
    args = parser.parse_args()
    questions = read_labelled_questions(args.data)
    if args.update_data:
        return update_data(args.data, questions)
    retrievers = list(dict.fromkeys(args.retriever or RETRIEVERS))
    histories = list(dict.fromkeys(args.history or HISTORIES))
    if len(retrievers) < 3:
        parser.error("rank at least three retrievers")
    commands: list[str] = []
    workspace = Path(args.workspace)

    source = source_fingerprint(PACKAGES)
    ingest_key = fingerprint(platform.python_version(), source_fingerprint(INGEST_SOURCES))
    collection = f"{COLLECTION_PREFIX}-{ingest_key}"
    started = time.perf_counter()
    corpus = benchsmith.ingest(
        ["stdlib"],
        collection=collection,
        run_id=f"validity-ingest-{ingest_key}",
        workspace=workspace,
        on_event=Progress(),
    )
    commands.append(f"benchsmith ingest stdlib --collection {collection} --run-id {corpus.run_id}")
    chunks = [
        CorpusChunk(record["id"], record["doc_id"], record["text"])
        for record in load_jsonl(corpus.run_dir / "kept.jsonl")
    ]
    print(
        f"corpus: {len(chunks)} chunks in collection {collection!r} "
        f"({'reused' if corpus.already_finished else f'{corpus.newly_embedded} embedded'})"
    )
    gold = resolved_gold(questions, chunks, args.data)

    synthesis_key = fingerprint(
        source, collection, args.llm, args.conversations, args.turns, args.seed, args.max_overlap
    )
    synthesis = benchsmith.synthesize(
        collection,
        conversations=args.conversations,
        turns=args.turns,
        llm=args.llm,
        seed=args.seed,
        max_overlap=args.max_overlap,
        run_id=f"validity-synthesize-{synthesis_key}",
        workspace=workspace,
        on_event=Progress(),
    )
    commands.append(
        f"benchsmith synthesize --collection {collection} --conversations {args.conversations} "
        f"--turns {args.turns} --llm {args.llm} --seed {args.seed} --max-overlap {args.max_overlap} "
        f"--run-id {synthesis.run_id}"
    )
    synthesized_turns = sum(len(dialogue.turns) for dialogue in synthesis.dialogues)
    print(f"synthesized: {len(synthesis.dialogues)} conversations, {synthesized_turns} turns (--llm {args.llm})")

    hand_dir = workspace / "validity" / f"handlabelled-{fingerprint(collection, args.data.read_bytes())}"
    write_hand_benchmark(hand_dir, questions, gold, synthesis.files["beir"] / "corpus.jsonl")

    measure_key = fingerprint(source, retrievers, MEASURE, args.bootstrap, args.seed)
    flags = " ".join(f"--retriever '{spec}'" for spec in retrievers)
    print(
        f"\nhand-labelled: {len(questions)} questions, {sum(len(ids) for ids in gold.values())} gold chunks "
        f"({args.data.name}); synthesized: {synthesized_turns} turns; {len(retrievers)} configurations, "
        f"ranked by {MEASURE}"
    )
    for mode in histories:
        # One validation per history mode: its evaluations of both sets are runs of their own, named
        # by the fingerprint, so an unchanged setting reuses them (the embedded collection above all).
        validity = benchsmith.validate(
            synthesis.run_dir,
            human=hand_dir,
            retrievers=retrievers,
            histories=[mode],
            measure=MEASURE,
            bootstrap=args.bootstrap,
            seed=args.seed,
            workspace=workspace,
            on_event=Progress(),
            run_id=f"validity-validate-{fingerprint(measure_key, synthesis_key, hand_dir.name, mode)}",
        )
        commands.append(
            f"benchsmith validate {synthesis.run_id} --human {hand_dir} {flags} --history {mode} "
            f"--measure {MEASURE} --bootstrap {args.bootstrap} --seed {args.seed} "
            f"--run-id {validity.run_id}"
        )
        report(validity, mode)
    print(f"\n{time.perf_counter() - started:.0f} s. Equivalent commands (workspace {workspace}):")
    for command in commands:
        print(f"  {command}")
    return 0


class Progress:
    """Prints a job's progress events to stderr, at most one line per stage every few seconds."""

    def __init__(self, every_s: float = 10.0) -> None:
        self.every_s, self.last = every_s, {}
        self.advanced: dict[str, int] = {}

    def __call__(self, event: dict) -> None:
        stage = event.get("stage")
        if stage is None:
            return
        if event.get("advance"):
            self.advanced[stage] = self.advanced.get(stage, 0) + event["advance"]
            done, total = self.advanced[stage], None
        else:
            done, total = event.get("done"), event.get("total")
        now = time.monotonic()
        if done is not None and (now - self.last.get(stage, 0.0) >= self.every_s or done == total):
            self.last[stage] = now
            print(f"  {stage}: {done}" + (f"/{total}" if total else ""), file=sys.stderr, flush=True)


def update_data(path: Path, questions: list[LabelledQuestion]) -> int:
    """Re-find gold ids by evidence in the stdlib as ``benchsmith ingest stdlib`` cleans and
    chunks it (before deduplication and the quality filter, which a run checks itself)."""
    from benchsmith.tools.corpus.chunking import chunk_document
    from benchsmith.tools.corpus.cleaning import clean_documents
    from benchsmith.tools.corpus.loaders import load_sources

    documents = clean_documents(load_sources(["stdlib"]).documents)
    chunks = [
        CorpusChunk(chunk.id, chunk.doc_id, chunk.text) for document in documents for chunk in chunk_document(document)
    ]
    changed = resolve_gold(questions, chunks).changed
    write_labelled_questions(path, relabelled(questions, chunks))
    print(
        f"{path}: {len(changed)} of {len(questions)} questions had their gold chunk ids re-found by evidence"
        + (f" ({', '.join(changed)}); review the diff" if changed else "")
    )
    return 0


def resolved_gold(questions: list[LabelledQuestion], chunks: list[CorpusChunk], path: Path) -> dict[str, list[str]]:
    """Each question's gold ids in the ingested chunks, found by evidence; stop if any evidence
    is in no chunk (deduplicated, filtered or edited away: the label needs a reader)."""
    resolution = resolve_gold(questions, chunks)
    if not resolution.complete:
        lost = "\n  ".join(
            f"{question_id}: {passage.document}: {passage.evidence!r}" for question_id, passage in resolution.missing
        )
        raise SystemExit(f"{path}: evidence found in no ingested chunk of its module:\n  {lost}")
    if resolution.changed:
        print(
            f"note: {len(resolution.changed)} questions' gold chunk ids in {path} differ from this corpus's; "
            f"using the chunks their evidence names (rewrite the file with --update-data)"
        )
    return resolution.gold_ids


def write_hand_benchmark(
    directory: Path, questions: list[LabelledQuestion], gold: dict[str, list[str]], corpus_file: Path
) -> None:
    """The hand-labelled questions as a BEIR directory over the synthesized benchmark's corpus
    (copied byte for byte: the same corpus fingerprint, so both use one dense index)."""
    directory.mkdir(parents=True, exist_ok=True)
    copy_atomic(corpus_file, directory / "corpus.jsonl")
    write_jsonl_atomic(
        directory / "queries.jsonl", ({"_id": question.id, "text": question.question} for question in questions)
    )
    write_beir_qrels(
        directory / "qrels" / "test.tsv",
        [(question.id, chunk_id, 1) for question in questions for chunk_id in gold[question.id]],
    )


def copy_atomic(source: Path, target: Path) -> None:
    with source.open(encoding="utf-8", newline="") as reader, atomic_writer(target, newline="") as writer:
        shutil.copyfileobj(reader, writer)


def report(validity: benchsmith.ValidationResult, history: str) -> None:
    rows = sorted(validity.configurations, key=lambda row: (row["human_rank"], row["name"]))
    print(f"\nsynthesized benchmark with --history {history}:")
    width = max(len(row["name"]) for row in rows)
    print(f"  {'configuration':<{width}}  {'hand-labelled':>17}  {'synthesized':>17}")
    for row in rows:
        print(
            f"  {row['name']:<{width}}  {row['human']:>9.4f} (#{row['human_rank']})"
            f"{'':>2}  {row['synthetic']:>9.4f} (#{row['synthetic_rank']})"
        )
    tau, interval = validity.kendall_tau_b, validity.interval
    bounds = (
        f", 95% interval [{interval['low']:+.3f}, {interval['high']:+.3f}]" if interval.get("low") is not None else ""
    )
    print(
        f"  Kendall's tau-b = {'undefined' if tau is None else f'{tau:+.3f}'}{bounds} "
        f"(p = {'–' if validity.p_value is None else f'{validity.p_value:.3f}'}, {len(rows)} configurations)"
    )
    print(f"  verdict: {validity.verdict.label}: {validity.verdict.text}")
    print(f"  report: {validity.report['html']}")


def fingerprint(*parts: object) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part if isinstance(part, bytes) else repr(part).encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()[:10]


def source_fingerprint(paths: tuple[str, ...]) -> str:
    """A hash of the benchsmith source files under ``paths`` (relative to the repository)."""
    root = Path(benchsmith.__file__).resolve().parent.parent
    files = sorted(
        file for path in paths for file in ([root / path] if (root / path).is_file() else (root / path).rglob("*.py"))
    )
    return fingerprint(*(part for file in files for part in (str(file.relative_to(root)), file.read_bytes())))


if __name__ == "__main__":
    sys.exit(main())
