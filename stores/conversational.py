"""A conversational benchmark from one or several inputs, for jobs that work on its turns
(paraphrasing) rather than on its documents.

Accepted, as users have them:

* TREC CAsT topic files, any number of years together (``*.json``, with the 2019
  ``*_resolved.tsv``): :mod:`stores.formats.cast`; they have no corpus;
* a benchmark ``load_benchmark`` reads: a BEIR directory, a synthesis run (directory or id);
* a turn JSONL file (stores/formats/beir.py), with or without its corpus.

Relevance judgments can be given as a TREC qrels file (CAsT ships its qrels apart from its topics).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.beir import Benchmark, load_benchmark, load_turn_jsonl
from benchsmith.stores.formats.cast import CAST_SUFFIXES, load_cast
from benchsmith.stores.formats.trec import read_trec_qrels
from benchsmith.stores.persistence.workspace import Workspace


def load_conversational(
    specs: Sequence[str],
    workspace: Workspace,
    *,
    split: str = "test",
    corpus: Path | None = None,
    qrels: Path | None = None,
) -> Benchmark:
    """One benchmark from ``specs``; ``qrels`` (TREC) replaces the benchmark's own judgments."""
    if not specs:
        raise InputError("give a benchmark: CAsT topic files, a BEIR directory, a synthesis run or a turn JSONL file")
    judgments = read_trec_qrels(qrels) if qrels is not None else None
    paths = [Path(spec) for spec in specs]
    cast = [path for path in paths if path.suffix.lower() in CAST_SUFFIXES]
    if cast:
        if len(cast) != len(paths):
            others = ", ".join(str(path) for path in paths if path not in cast)
            raise InputError(f"CAsT topic files make a benchmark on their own; also given: {others}")
        missing = next((path for path in paths if not path.is_file()), None)
        if missing is not None:
            raise InputError(f"{missing}: file not found")
        return load_cast(paths, judgments)
    if len(specs) > 1:
        raise InputError(
            f"several inputs make one benchmark only for CAsT topic files (.json, .tsv); got {', '.join(specs)}"
        )
    path = paths[0]
    if path.is_file():
        if path.suffix.lower() != ".jsonl":
            raise InputError(f"{path}: not a benchmark file (CAsT topics .json, resolved .tsv, or a turn JSONL file)")
        benchmark = load_turn_jsonl(path, corpus)
    else:
        benchmark = load_benchmark(specs[0], workspace, split)
    if judgments is not None:
        benchmark.qrels = judgments
    return benchmark


def has_corpus(benchmark: Benchmark) -> bool:
    """Whether the benchmark's documents are here (retrieval and re-judging need them)."""
    return benchmark.corpus_path.is_file()
