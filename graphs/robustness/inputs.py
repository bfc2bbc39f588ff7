"""What the robustness nodes read: the paraphrase run's test sets, qrels, turns and documents, and the run's evaluations, pool and judgments."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime

from benchsmith.graphs.contexts.robustness import RobustnessContext
from benchsmith.graphs.paraphrase.state import BENCHMARK_FILE, QRELS_FILE, TEST_SETS_FILE, TURNS_FILE
from benchsmith.graphs.robustness.state import EVALUATIONS_FILE, JUDGMENTS_FILE, ORIGINAL, POOL_FILE
from benchsmith.graphs.runtime.corpus_indexes import document_text
from benchsmith.graphs.runtime.job_runtime import JobRuntime
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.beir import read_beir_qrels
from benchsmith.stores.formats.trec import Qrels, read_trec_qrels
from benchsmith.stores.persistence.jsonl import RecordLog, load_jsonl, read_json, record_log, records_by
from benchsmith.tools.corpus.loaders import iter_beir_corpus

job = JobRuntime(RobustnessContext)  # the runtime's settings, workspace and run directories


def test_set_names(paraphrase_run: Path) -> list[str]:
    """``original`` and the paraphrase run's test sets, in order."""
    path = paraphrase_run / TEST_SETS_FILE
    if not path.is_file():
        raise InputError(f"{paraphrase_run}: not a finished paraphrase run (no {TEST_SETS_FILE})")
    return [ORIGINAL, *read_json(path)]


def benchmark_qrels(paraphrase_run: Path, qrels: str | None) -> Qrels:
    """The given TREC qrels, else the ones the paraphrase run was given or found; only the
    benchmark's turns (a CAsT qrels file may judge turns of topic files not given)."""
    if qrels:
        judged = read_trec_qrels(qrels)
    elif (paraphrase_run / QRELS_FILE).is_file():
        judged = read_beir_qrels(paraphrase_run / QRELS_FILE)
    else:
        raise InputError(f"{paraphrase_run}: the benchmark has no relevance judgments: give --qrels FILE (TREC)")
    turns = _turns(str(paraphrase_run))
    kept = {turn: docs for turn, docs in judged.items() if turn in turns}
    if not kept:
        raise InputError(f"{qrels or paraphrase_run / QRELS_FILE}: judges none of the benchmark's turns")
    return kept


def _turns(paraphrase_run: str) -> dict[str, dict[str, Any]]:
    return records_by(Path(paraphrase_run) / TURNS_FILE, "turn")


@functools.lru_cache(maxsize=2)
def _documents_in(path: Path, modified: float) -> dict[str, str]:
    return {document.id: document_text(document.title, document.text) for document in iter_beir_corpus(path)}


def document_texts(runtime: Runtime[RobustnessContext], paraphrase_run: str) -> dict[str, str]:
    """``{doc id: text}`` of the benchmark's corpus, or of the corpus given with run files; empty without one."""
    corpus = job.context(runtime).corpus or read_json(Path(paraphrase_run) / BENCHMARK_FILE).get("corpus")
    if not corpus:
        return {}
    path = Path(corpus).resolve()
    return _documents_in(path, path.stat().st_mtime)


def _evaluation_log(runtime: Runtime[RobustnessContext], run_id: str) -> RecordLog:
    return record_log(job.run_dir(runtime, run_id).file(EVALUATIONS_FILE), "set")


def _judgment_log(runtime: Runtime[RobustnessContext], run_id: str) -> RecordLog:
    return record_log(job.run_dir(runtime, run_id).file(JUDGMENTS_FILE), "turn")


def _evaluations(runtime: Runtime[RobustnessContext], run_id: str) -> dict[str, dict[str, str]]:
    """``{set: {configuration: run file}}``."""
    path = job.run_dir(runtime, run_id).file(EVALUATIONS_FILE)
    return {record["set"]: record["runs"] for record in load_jsonl(path)}


def _pool(runtime: Runtime[RobustnessContext], run_id: str) -> dict[str, list[str]]:
    """``{turn: [doc ids with text]}`` of the pool."""
    by_turn: dict[str, list[str]] = {}
    for record in load_jsonl(job.run_dir(runtime, run_id).file(POOL_FILE)):
        if record["has_text"]:
            by_turn.setdefault(record["turn"], []).append(record["doc"])
    return by_turn
