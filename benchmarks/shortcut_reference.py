"""The human reference figures behind the audit's shortcut flags (evals/measures/shortcuts.py).

* The 58 hand-written questions of ``data/stdlib-validity.jsonl`` over the stdlib corpus,
  chunked as ``benchsmith ingest stdlib`` does (load, clean, chunk, deduplicate, quality
  filter) but not embedded: their lexical overlap with their gold chunks (mean, median, p90,
  histogram), query-only BM25 R@10 and RR@10, and the ill-formed rate, measured by the audit's
  own code (``graphs.audit.shortcuts.benchmark_shortcuts``) on the set written as a BEIR benchmark.
* TREC CAsT 2019-2021 topics (``--cast DIR``, default /work/shared/data/trec-cast; no corpus
  there, so no retrieval): the share of non-first turns whose manual rewrite adds content-word
  stems the raw utterance lacks, the context a retriever must take from the history.

    .venv/bin/python benchmarks/shortcut_reference.py [--cast DIR]

About 25 s on 2 CPU cores, offline, deterministic.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import tempfile
from pathlib import Path

from benchsmith.tools.offline import offline_environment

offline_environment()  # before the imports below load models or Chroma

from benchsmith.evals.measures.lexical_overlap import content_stems  # noqa: E402
from benchsmith.graphs.audit.shortcuts import benchmark_shortcuts  # noqa: E402
from benchsmith.stores.formats.beir import load_benchmark  # noqa: E402
from benchsmith.stores.formats.benchmark_files import write_beir_qrels  # noqa: E402
from benchsmith.stores.formats.labelled_questions import CorpusChunk, read_labelled_questions, resolve_gold  # noqa: E402
from benchsmith.stores.persistence.jsonl import write_jsonl_atomic  # noqa: E402
from benchsmith.stores.persistence.workspace import Workspace  # noqa: E402
from benchsmith.tools.corpus.chunking import chunk_document  # noqa: E402
from benchsmith.tools.corpus.cleaning import clean_documents  # noqa: E402
from benchsmith.tools.corpus.dedup import find_near_duplicates  # noqa: E402
from benchsmith.tools.corpus.loaders import load_sources  # noqa: E402
from benchsmith.tools.corpus.quality import DEFAULT_MIN_QUALITY, InformationDensityScorer  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
LABELLED = ROOT / "data" / "stdlib-validity.jsonl"
DEFAULT_CAST = Path("/work/shared/data/trec-cast")


def stdlib_chunks() -> list:
    """The stdlib corpus as ingest keeps it: cleaned, chunked, first copies and non-near-duplicates,
    quality at least the default minimum."""
    documents = clean_documents(load_sources(["stdlib"]).documents)
    chunks = [chunk for document in documents for chunk in chunk_document(document)]
    matches = find_near_duplicates([chunk.id for chunk in chunks], [chunk.text for chunk in chunks])
    near_duplicates = {match.removed_id for match in matches if match.removed_id != match.kept_id}
    seen: set[str] = set()
    unique = []
    for chunk in chunks:
        if chunk.id not in seen and chunk.id not in near_duplicates:
            unique.append(chunk)
        seen.add(chunk.id)
    scores = InformationDensityScorer().score([chunk.text for chunk in unique])
    return [chunk for chunk, score in zip(unique, scores) if score >= DEFAULT_MIN_QUALITY]


def stdlib_reference(directory: Path) -> dict:
    questions = read_labelled_questions(LABELLED)
    chunks = stdlib_chunks()
    gold = resolve_gold(questions, [CorpusChunk(chunk.id, chunk.doc_id, chunk.text) for chunk in chunks]).gold_ids
    write_jsonl_atomic(
        directory / "corpus.jsonl", ({"_id": chunk.id, "title": chunk.title, "text": chunk.text} for chunk in chunks)
    )
    write_jsonl_atomic(
        directory / "queries.jsonl", ({"_id": question.id, "text": question.question} for question in questions)
    )
    write_beir_qrels(
        directory / "qrels" / "test.tsv",
        [(question.id, chunk_id, 1) for question in questions for chunk_id in gold[question.id]],
    )
    benchmark = load_benchmark(directory, Workspace.resolve(directory / "workspace"))
    summary, per_turn = benchmark_shortcuts(benchmark)
    summary["corpus_chunks"] = len(chunks)
    summary["ill_formed_turns"] = [turn for turn in per_turn if turn["ill_formed"]]
    return summary


def cast_reference(directory: Path) -> dict[str, dict[str, float]]:
    """Per CAsT year: non-first turns, and how many of them the manual rewrite adds content stems to."""
    years: dict[str, list[tuple[int, str, str]]] = {}
    resolved_2019 = {}
    path_2019 = directory / "2019_evaluation_topics_resolved.tsv"
    if path_2019.exists():
        with path_2019.open(encoding="utf-8") as file:
            resolved_2019 = {row[0]: row[1] for row in csv.reader(file, delimiter="\t") if len(row) >= 2}
    for year, name in (
        ("2019", "2019_evaluation_topics.json"),
        ("2020", "2020_manual_evaluation_topics.json"),
        ("2021", "2021_manual_evaluation_topics.json"),
    ):
        path = directory / name
        if not path.exists():
            continue
        turns = []
        for topic in json.loads(path.read_text(encoding="utf-8")):
            for turn in topic["turn"]:
                turn_id = f"{topic['number']}_{turn['number']}"
                rewrite = turn.get("manual_rewritten_utterance") or resolved_2019.get(turn_id)
                if rewrite:
                    turns.append((int(turn["number"]), turn["raw_utterance"], rewrite))
        years[year] = turns
    figures = {}
    for year, turns in years.items():
        later = [(raw, rewrite) for number, raw, rewrite in turns if number > 1]
        adds = sum(1 for raw, rewrite in later if content_stems(rewrite) - content_stems(raw))
        figures[year] = {
            "non_first_turns": len(later),
            "rewrite_adds_context": adds,
            "share": adds / len(later) if later else float("nan"),
        }
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cast", type=Path, default=DEFAULT_CAST, help="folder of the TREC CAsT topic files")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        stdlib = stdlib_reference(Path(folder))
    overlap = stdlib["lexical_overlap"]
    current = stdlib["query_only"]["bm25"]["current"]
    print(f"stdlib human questions: {stdlib['turns']} over {stdlib['corpus_chunks']:,} chunks")
    print(f"  lexical overlap: mean {overlap['mean']:.3f}, median {overlap['median']:.3f}, p90 {overlap['p90']:.3f}")
    print(f"  overlap histogram (edges {overlap['histogram']['edges']}): counts {overlap['histogram']['counts']}")
    print(f"  query-only BM25: R@10 {current['R@10']:.3f}, RR@10 {current['RR@10']:.3f}")
    print(f"  ill-formed: {stdlib['ill_formed']['rate']:.3f} ({stdlib['ill_formed']['count']} of {stdlib['turns']})")
    for turn in stdlib["ill_formed_turns"]:
        print(f"    {turn['turn']}: {turn['question']!r}: {'; '.join(turn['ill_formed'])}")
    print(f"  flags: {stdlib['flags'] or 'none'}")
    if arguments.cast.exists():
        print(f"TREC CAsT ({arguments.cast}): non-first turns whose manual rewrite adds content words")
        for year, figures in cast_reference(arguments.cast).items():
            print(
                f"  {year}: {figures['rewrite_adds_context']} of {figures['non_first_turns']} ({figures['share']:.1%})"
            )
    else:
        print(f"TREC CAsT: {arguments.cast} not found; skipped", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
