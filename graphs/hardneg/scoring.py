"""Scoring a multi-condition hard-negative dataset: every scorer's score tables in the reference
layout, the MultiConIR measures with bootstrap intervals, the worst rows and the report.

The pieces the scoring graph (graphs/hardneg/score.py) runs: :func:`score_one` scores the pairs
with one scorer and writes its tables (each file atomically), :func:`write_score_report` gathers
every scorer's results into the results JSON and the report. A scorer's tables and report are
rewritten whole whenever it is scored.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchsmith.evals.measures import multicondition
from benchsmith.evals.reports.hardneg_report import hardneg_report_files
from benchsmith.graphs.hardneg.outside import (
    OUTSIDE_DEPTH,
    OutsideCalls,
    outside_group_scorer,
    outside_scorer_warning,
)
from benchsmith.graphs.runtime.resources import embedder_for, scorer_for
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.multiconir import (
    DATASET_FILE,
    DatasetRow,
    LadderScores,
    Task1Scores,
    read_dataset,
    read_ladder_scores,
    read_task1_scores,
    write_ladder_scores,
    write_task1_scores,
)
from benchsmith.stores.persistence.files import write_files_atomic
from benchsmith.stores.persistence.jsonl import load_jsonl
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.stores.progress import ProgressCallback
from benchsmith.tools.benchmark.condition_documents import changed_text
from benchsmith.tools.retrieval.multicondition_scoring import (
    BM25_VARIANTS,
    Group,
    ScorerSpec,
    ScoreTables,
    bm25_corpus_group_scores,
    bm25_row_group_scores,
    cross_encoder_group_scores,
    dataset_corpus,
    dense_group_scores,
    parse_scorers,
    score_tables,
)

WORST_ROWS = 5
SCORES_DIR = "scores"


# ---------------------------------------------------------------------------------------
# The dataset.


def load_dataset(dataset: str | Path, workspace: Workspace) -> tuple[Path, list[DatasetRow], dict[str, Any]]:
    """(path, rows, build information) of a build run directory or run id, or a hardneg.csv."""
    from benchsmith.graphs.hardneg.build import MULTICONIR_DIR, ROWS_FILE, STATS_FILE
    from benchsmith.graphs.hardneg.exports import dataset_row

    path = Path(dataset)
    if not path.exists() and "/" not in str(dataset) and workspace.run_dir(str(dataset)).exists():
        path = workspace.run_dir(str(dataset))
    if path.is_file():
        return path.resolve(), read_dataset(path), {}
    if not path.is_dir():
        raise InputError(f"{dataset}: neither a hardneg build run (directory or run id) nor a {DATASET_FILE}")
    rows_file = path / ROWS_FILE
    if not rows_file.exists():
        if (path / MULTICONIR_DIR / DATASET_FILE).exists():
            return path.resolve(), read_dataset(path / MULTICONIR_DIR / DATASET_FILE), {}
        raise InputError(f"{path}: no {ROWS_FILE} (not a hardneg build run; give its {DATASET_FILE} instead)")
    rows = [dataset_row(record) for record in load_jsonl(rows_file) if record["status"] == "kept"]
    if not rows:
        raise InputError(f"{rows_file}: no kept rows to score (see {STATS_FILE} for why they were dropped)")
    information: dict[str, Any] = {}
    if (path / STATS_FILE).exists():
        information["build"] = json.loads((path / STATS_FILE).read_text(encoding="utf-8"))
    run = RunDirectory(Workspace(path.parent.parent), path.name)
    if run.exists():
        config = run.load().config
        information["settings"] = {
            key: config.get(key)
            for key in ("domain", "features", "negatives", "llm", "judge", "conditions", "sources", "collection")
        }
    order = (
        {record["id"]: n for n, record in enumerate(load_jsonl(path / "sources.jsonl"))}
        if (path / "sources.jsonl").exists()
        else {}
    )
    rows.sort(key=lambda row: order.get(row.id, 0))
    return path.resolve(), rows, information


# ---------------------------------------------------------------------------------------
# Scoring.


def group_scorer(
    spec: ScorerSpec,
    rows: Sequence[DatasetRow],
    embedder: str,
    on_progress: ProgressCallback | None = None,
    outside: OutsideCalls | None = None,
) -> Callable[[list[Group]], list[list[float]]]:
    """The function that scores groups for ``spec`` (an outside retriever's needs ``outside``)."""
    if spec.kind == "outside":
        if outside is None:
            raise ValueError(f"{spec.label}: an outside retriever scores within a run (its calls are logged there)")
        return outside_group_scorer(spec, rows, outside, on_progress)
    if spec.kind == "dense":
        model = embedder_for(spec.model or embedder)
        return lambda groups: dense_group_scores(groups, model)
    if spec.kind == "rerank":
        scorer = scorer_for(spec.model or "")
        return lambda groups: cross_encoder_group_scores(groups, scorer, on_progress)
    if spec.kind == "bm25-corpus":
        corpus = dataset_corpus(rows)
        return lambda groups: bm25_corpus_group_scores(groups, corpus)
    return bm25_row_group_scores


def output_directory(path: Path, output_dir: str | Path | None) -> Path:
    """Where the score tables and the report go: ``output_dir``, else ``scores/`` in a build run
    directory, else ``<name>-scores/`` beside a hardneg.csv."""
    if output_dir:
        return Path(output_dir)
    return path / SCORES_DIR if path.is_dir() else path.parent / f"{path.stem}-scores"


def scorer_spec(label: str) -> ScorerSpec:
    """The scorer a :attr:`ScorerSpec.label` names (``bm25-corpus``, ``bm25-row``, ``dense[:MODEL]``,
    ``rerank:MODEL``)."""
    if label.startswith("rerank:"):
        return parse_scorers([], [label.removeprefix("rerank:")])[0]
    specs = parse_scorers([label])
    if len(specs) != 1:
        raise InputError(f"scorer {label!r}: name one scorer (bm25-corpus, bm25-row, dense[:MODEL] or rerank:MODEL)")
    return specs[0]


def score_one(
    spec: ScorerSpec,
    rows: Sequence[DatasetRow],
    output: Path,
    *,
    embedder: str,
    confidence: float,
    resamples: int,
    seed: int,
    on_progress: ProgressCallback | None = None,
    outside: OutsideCalls | None = None,
) -> tuple[dict[str, Any], dict[str, Path]]:
    """Score every pair with ``spec``; write its tables into ``output``. Returns its results (see
    :func:`scorer_results`) and its tables by task."""
    output.mkdir(parents=True, exist_ok=True)
    scored = score_tables(rows, group_scorer(spec, rows, embedder, on_progress, outside))
    tables = write_tables(output, spec, scored)
    results = scorer_results(spec, scored, rows, confidence=confidence, resamples=resamples, seed=seed)
    if outside is not None and spec.kind == "outside" and (warning := outside_scorer_warning(spec, outside.log_dir)):
        results["unmapped"] = warning
    return results, tables


def write_score_report(
    output: Path,
    path: Path,
    rows: Sequence[DatasetRow],
    information: dict[str, Any],
    specs: Sequence[ScorerSpec],
    scorers: dict[str, dict[str, Any]],
    tables: dict[str, dict[str, Path]],
    *,
    embedder: str,
    confidence: float,
    resamples: int,
    seed: int,
) -> dict[str, Path]:
    """The results JSON, hardneg-report.md and .html of every scorer's results (in ``specs``' order)."""
    results = {
        "dataset": dataset_summary(path, rows, information),
        "settings": {
            "scorers": [spec.label for spec in specs],
            "embedder": embedder,
            "confidence": confidence,
            "resamples": resamples,
            "seed": seed,
        },
        "scorers": {spec.label: scorers[spec.label] for spec in specs},
        "tables": {spec.label: {task: str(table) for task, table in tables[spec.label].items()} for spec in specs},
        "notes": score_notes(specs, confidence, resamples)
        + [scorers[spec.label]["unmapped"] for spec in specs if scorers[spec.label].get("unmapped")],
    }
    return write_files_atomic(output, hardneg_report_files(results))


def write_tables(directory: Path, spec: ScorerSpec, tables: ScoreTables) -> dict[str, Path]:
    """``<scorer>_task1_results.csv``, ``_task2_`` and ``_task3_``: the reference's score tables."""
    paths = {}
    if tables.task1 is not None:
        paths["task1"] = directory / f"{spec.file_stem}_task1_results.csv"
        write_task1_scores(paths["task1"], tables.task1)
    for task, table in (("task2", tables.task2), ("task3", tables.task3)):
        if table is not None:
            paths[task] = directory / f"{spec.file_stem}_{task}_results.csv"
            write_ladder_scores(paths[task], table)
    return paths


def scorer_results(
    spec: ScorerSpec, tables: ScoreTables, rows: Sequence[DatasetRow], confidence: float, resamples: int, seed: int
) -> dict[str, Any]:
    """One scorer's measures (with intervals), the reference's keys, and its worst rows."""
    result: dict[str, Any] = {"label": spec.label, "kind": spec.kind, "description": scorer_description(spec)}
    if tables.task1 is not None:
        result["task1"] = multicondition.task1_summary(
            tables.task1.positive, tables.task1.negative, confidence=confidence, resamples=resamples, seed=seed
        )
        result["task1"]["rows"] = len(tables.task1.index)
        result["worst_task1"] = worst_task1_rows(tables.task1, rows)
    if tables.task2 is not None and tables.task3 is not None:
        result["task2"] = multicondition.task2_summary(
            tables.task2.scores, confidence=confidence, resamples=resamples, seed=seed
        )
        result["task2"]["rows"] = len(tables.task2.index)
        result["task2_descriptive"] = multicondition.task2_summary(
            tables.task3.scores, confidence=confidence, resamples=resamples, seed=seed
        )
        result["task3"] = multicondition.task3_summary(
            tables.task2.scores, tables.task3.scores, confidence=confidence, resamples=resamples, seed=seed
        )
        result["task3"]["rows"] = len(tables.task3.index)
        result["worst_task2"] = worst_ladder_rows(tables.task2, rows)
    result["reference"] = multicondition.reference_json(
        task1=(tables.task1.positive, tables.task1.negative) if tables.task1 is not None else None,
        task2=tables.task2.scores if tables.task2 is not None else None,
        task3=(tables.task2.scores, tables.task3.scores)
        if tables.task2 is not None and tables.task3 is not None
        else None,
    )
    return result


def scorer_description(spec: ScorerSpec) -> str:
    if spec.kind in BM25_VARIANTS:
        return f"BM25 (Lucene formula, stemmed words), {BM25_VARIANTS[spec.kind]}"
    if spec.kind == "dense":
        return f"cosine similarity of {spec.model or 'the default embedder'}'s embeddings"
    if spec.kind == "outside":
        return (
            f"your retriever {spec.model}: each candidate scored by its rank in the retriever's top "
            f"{OUTSIDE_DEPTH} of the dataset's documents for the query, the candidates it did not rank tied last"
        )
    return f"cross-encoder {spec.model}: its score of each (query, document) pair"


def _condition(row: DatasetRow, number: int) -> dict[str, str]:
    """Condition ``number`` (from 1) of the row: its sentence, its rewrite and its statement. Read
    from a CSV (which does not record them), the sentence and its rewrite are where the positive and
    Miss_k differ (or HN_{k-1} and HN_k)."""
    if row.conditions:
        return dict(row.conditions[number - 1])
    above = row.positive if number == 1 else row.ladder[number - 2]
    for original, rewritten in ((row.positive, row.single_miss[number - 1]), (above, row.ladder[number - 1])):
        if original is not None and rewritten is not None:
            sentence, negative = changed_text(original, rewritten)
            return {"sentence": sentence, "negative": negative, "condition": ""}
    return {"sentence": "", "negative": "", "condition": ""}


def worst_task1_rows(table: Task1Scores, rows: Sequence[DatasetRow]) -> list[dict[str, Any]]:
    """The rows whose single-miss negative beat (or tied) the positive by the most, with the
    condition whose rewrite fooled the scorer."""
    worst = []
    for position, k, margin in multicondition.worst_task1_cells(table.positive, table.negative, WORST_ROWS):
        row = rows[int(table.index[position])]
        worst.append(
            {
                "row": row.id,
                "title": row.title,
                "k": k,
                "margin": margin,
                "query": row.instruction[k - 1],
                "positive_score": float(table.positive[position, k - 1]),
                "negative_score": float(table.negative[position, k - 1]),
                "condition_number": k,
                **_condition(row, k),
            }
        )
    return worst


def worst_ladder_rows(table: LadderScores, rows: Sequence[DatasetRow]) -> list[dict[str, Any]]:
    """The rows where a document one step down the ladder beat (or tied) the one above it by the
    most; the condition between them is the one fooling the scorer."""
    names = ["Positive", *[f"HN{j}" for j in range(1, table.count + 1)]]
    worst = []
    for position, pair, margin in multicondition.worst_ladder_cells(table.scores, WORST_ROWS):
        row = rows[int(table.index[position])]
        worst.append(
            {
                "row": row.id,
                "title": row.title,
                "pair": f"{names[pair]}_vs_{names[pair + 1]}",
                "margin": margin,
                "query": row.instruction[-1],
                "condition_number": pair + 1,
                "higher_score": float(table.scores[position, pair]),
                "lower_score": float(table.scores[position, pair + 1]),
                **_condition(row, pair + 1),
            }
        )
    return worst


def dataset_summary(path: Path, rows: Sequence[DatasetRow], information: dict[str, Any]) -> dict[str, Any]:
    return {
        "path": str(path),
        "name": path.name if path.is_dir() else path.stem,
        "rows": len(rows),
        "conditions": rows[0].count if rows else 0,
        "task_rows": {
            "task1": sum(row.has_task1 for row in rows),
            "task2": sum(row.has_ladder for row in rows),
            "task3": sum(row.has_ladder for row in rows),
        },
        **information,
    }


def score_notes(specs: Sequence[ScorerSpec], confidence: float, resamples: int) -> list[str]:
    notes = [
        "A tie loses: a win needs a strictly higher score (as in the reference scripts), so a scorer that gives "
        "two documents the same score is counted wrong.",
        f"Intervals: {confidence:.0%} percentile bootstrap over rows ({resamples:,} resamples, seeded); a row is a "
        "source document with all its queries and documents.",
        "Task 1 pairs the query with k conditions with its single-miss negative, the document whose sentence of "
        "condition k (the query's newest) was rewritten. Task 2 uses the query with all N conditions and the graded "
        "ladder HN1..HN_N (HN_j has conditions 1..j rewritten). Task 3 compares Task 2's outcomes between the "
        "instruction-style and the descriptive-style query.",
    ]
    if any(spec.kind.startswith("bm25") for spec in specs):
        notes.append(
            "bm25-corpus takes document frequencies from every document of the dataset; bm25-row only "
            "from the documents scored together with the query (Task 1: the positive and its negative; "
            "Tasks 2 and 3: the positive and the ladder), as the reference's BM25.py does. Both use "
            "Lucene's BM25 (k1 1.5, b 0.75, stemmed, stopwords removed), where the reference uses "
            "rank_bm25's BM25Okapi on lower-cased whitespace tokens."
        )
    return notes


# ---------------------------------------------------------------------------------------
# Existing score tables.


def reference_measures_of_tables(task1: Path | None, task2: Path | None, task3: Path | None) -> dict[str, Any]:
    """The reference's measures of score tables in its layout (see stores/formats/multiconir.py)."""
    task1_table = read_task1_scores(task1) if task1 is not None else None
    task2_table = read_ladder_scores(task2) if task2 is not None else None
    task3_pair = None
    if task3 is not None and task2_table is not None:
        descriptive = read_ladder_scores(task3)
        if descriptive.count != task2_table.count:
            raise InputError(
                f"{task3} has {descriptive.count} hard negatives per row, {task2} has "
                f"{task2_table.count}: Task 3 compares the same rows and documents"
            )
        if set(descriptive.index) != set(task2_table.index):
            only = sorted(set(descriptive.index) ^ set(task2_table.index))[:5]
            raise InputError(f"{task2} and {task3} must score the same rows (Index); differing: {only}")
        order = {index: position for position, index in enumerate(descriptive.index)}
        task3_pair = (task2_table.scores, descriptive.scores[[order[index] for index in task2_table.index]])
    return multicondition.reference_json(
        task1=(task1_table.positive, task1_table.negative) if task1_table is not None else None,
        task2=task2_table.scores if task2_table is not None else None,
        task3=task3_pair,
    )
