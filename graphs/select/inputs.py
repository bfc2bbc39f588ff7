"""What the select graph's nodes read: ``job`` (their settings, workspace and run directories), the
user's queries, the run's records, the judges' seams (a ``qrels:FILE`` judge registered from its
labels), the configurations planned and their run files, and the queries' texts per rewrite."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime

from benchsmith.agents.label_seam import LABELS_PREFIX, LabelSeam
from benchsmith.agents.seam.models import ModelSeam
from benchsmith.evals.defaults import DEFAULT_MIN_VOTES
from benchsmith.graphs.contexts.select import SelectContext
from benchsmith.graphs.runtime.job_runtime import JobRuntime
from benchsmith.graphs.runtime.resources import register_model, run_seam
from benchsmith.graphs.select.retrieval import query_texts
from benchsmith.graphs.select.state import CONFIGURATIONS_FILE, QUERIES_DIR, RUN_FILES_DIR
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.beir import BenchmarkQuery, read_beir_qrels
from benchsmith.stores.formats.query_files import read_user_queries
from benchsmith.stores.formats.trec import Qrels, read_trec_qrels
from benchsmith.stores.persistence.bounded_cache import BoundedCache
from benchsmith.stores.persistence.jsonl import RecordLog, load_jsonl, record_log
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.retrieval.retriever_specs import RetrieverSpec
from benchsmith.tools.retrieval.strategy_space import OutsideConfiguration, SelectConfiguration

job = JobRuntime(SelectContext)  # the runtime's settings, workspace and run directories


def queries_of(path: str) -> list[BenchmarkQuery]:
    return _queries(path, Path(path).stat().st_mtime if Path(path).exists() else 0.0)


@functools.lru_cache(maxsize=2)
def _queries(path: str, modified: float) -> list[BenchmarkQuery]:
    return read_user_queries(path)


@functools.lru_cache(maxsize=8)
def _records(path: Path, version: tuple[int, int], key: str) -> dict[str, dict[str, Any]]:
    return {record[key]: record for record in load_jsonl(path)}


def file_records(path: Path, key: str) -> dict[str, dict[str, Any]]:
    """A run file's records by ``key``, read again whenever the file changed (time or size)."""
    if not path.exists():
        return {}
    status = path.stat()
    return _records(path, (status.st_mtime_ns, status.st_size), key)


def min_votes_of(context: SelectContext, judges: list[str]) -> int:
    """The audit's rule unless --min-votes says otherwise; never lowered behind the user's back
    (benchsmith/jobs/select.py refuses a rule the judges cannot meet before the run starts)."""
    return context.min_votes if context.min_votes is not None else DEFAULT_MIN_VOTES


def read_labels(path: Path) -> Qrels:
    """Relevance labels: TREC qrels (``qid iteration docid relevance``) or BEIR TSV
    (``query-id corpus-id score``, tab-separated, optional header)."""
    with path.open(encoding="utf-8") as handle:
        first = next((line for line in handle if line.strip()), "")
    return read_beir_qrels(path) if len(first.rstrip("\n").split("\t")) == 3 else read_trec_qrels(path)


_label_seams: BoundedCache[str, tuple[float, LabelSeam]] = BoundedCache(16)


def label_judge(spec: str) -> str:
    """Register the ``qrels:FILE`` judge under its spec, the same seam while the file is unchanged
    (its counts carry on); returns the spec."""
    path = Path(spec.removeprefix(LABELS_PREFIX))
    if not path.is_file():
        raise InputError(f"--judge {spec}: qrels file {path} not found")
    modified = path.stat().st_mtime
    known = _label_seams.get(spec)
    if known is None or known[0] != modified:
        known = _label_seams[spec] = (modified, LabelSeam(read_labels(path), f"{LABELS_PREFIX}{path.name}"))
    return register_model(spec, known[1])


def judge_seams(runtime: Runtime[SelectContext], run_id: str, judges: list[str]) -> list[tuple[str, ModelSeam]]:
    return judge_seams_of(job.workspace(runtime), job.context(runtime), run_id, judges)


def judge_seams_of(
    workspace: Workspace, context: SelectContext, run_id: str, judges: list[str]
) -> list[tuple[str, ModelSeam]]:
    """(spec, seam) of each judge, in ensemble order, wherever the judging runs (here or a Ray node)."""
    seams = []
    for spec in judges:
        if spec.startswith(LABELS_PREFIX):
            label_judge(spec)  # a registered name answers at once; Studio runs reach here unregistered
        seams.append((spec, run_seam(workspace, run_id, spec, context)))
    return seams


def configuration_log(runtime: Runtime[SelectContext], run_id: str) -> RecordLog:
    return record_log(job.run_dir(runtime, run_id).file(CONFIGURATIONS_FILE), "name")


def configuration_of(
    runtime: Runtime[SelectContext], run_id: str, name: str
) -> SelectConfiguration | OutsideConfiguration:
    """A planned configuration: one of the space's, or the user's own retriever (``outside`` in its settings)."""
    settings = file_records(job.run_dir(runtime, run_id).file(CONFIGURATIONS_FILE), "name")[name]["settings"]
    if settings.get("outside"):
        return OutsideConfiguration.from_settings(settings)
    return SelectConfiguration.from_settings(settings)


def run_file_of(
    runtime: Runtime[SelectContext], run_id: str, configuration: SelectConfiguration | OutsideConfiguration
) -> Path:
    return job.run_dir(runtime, run_id).file(RUN_FILES_DIR) / f"{configuration.file_stem}.trec"


def plan_configurations(
    runtime: Runtime[SelectContext],
    run_id: str,
    settings: list[dict[str, Any]],
    stage: int,
    outside: Sequence[OutsideConfiguration] = (),
) -> list[str]:
    """Log the configurations of ``settings`` (and the ``outside`` ones) as planned at ``stage``; their names."""
    log = configuration_log(runtime, run_id)
    names = []
    planned: list[SelectConfiguration | OutsideConfiguration] = [*map(SelectConfiguration.from_settings, settings)]
    for configuration in [*planned, *outside]:
        log.append_once(
            {
                "name": configuration.name,
                "settings": configuration.settings(),
                "stage": stage,
                "run_file": f"{RUN_FILES_DIR}/{configuration.file_stem}.trec",
            }
        )
        names.append(configuration.name)
    return list(dict.fromkeys(names))


def configured_query_texts(
    runtime: Runtime[SelectContext], run_id: str, queries_path: str, configuration: SelectConfiguration
) -> dict[str, list[str]]:
    context = job.context(runtime)
    path = job.run_dir(runtime, run_id).file(QUERIES_DIR) / f"{configuration.rewrite.label.replace(':', '-')}.jsonl"
    return query_texts(
        path,
        queries_of(queries_path),
        configuration.rewrite,
        lambda: run_seam(job.workspace(runtime), run_id, context.llm, context),
        context.concurrency,
    )


def dense_components(retriever: RetrieverSpec) -> list[RetrieverSpec]:
    return [c for c in (retriever.components or (retriever,)) if c.kind == "dense"]
