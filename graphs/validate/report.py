"""The ``report`` node: the two rankings compared (Kendall's tau-b with its interval, separability), the judges' agreement with the human labels, and the validity report."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
from langgraph.runtime import Runtime

from benchsmith.evals.defaults import DEFAULT_CONFIDENCE
from benchsmith.evals.measures.separability import Separation, separations
from benchsmith.evals.measures.validity import (
    configuration_rows,
    kendall_tau_b,
    paired_configurations,
    per_query_matrix,
    relevance_agreement,
    separation_pairs,
    tau_interval,
    top1_agrees,
    top_not_separated,
    verdict,
)
from benchsmith.evals.reports.validity_report import validity_notes, validity_report_files
from benchsmith.graphs.contexts.validate import ValidationContext
from benchsmith.graphs.validate.inputs import _evaluations, job
from benchsmith.graphs.validate.state import (
    HELD_OUT_FILE,
    HUMAN,
    JUDGMENTS_FILE,
    OUTPUT_KEYS,
    PAIRS_FILE,
    SETS,
    SYNTHETIC,
    ValidationOutput,
    ValidationState,
)
from benchsmith.stores.persistence.jsonl import load_jsonl, read_json
from benchsmith.tools.corpus.held_out import HeldOutLabels
from benchsmith.tools.retrieval.embedded_text import EMBEDDED_TEXT_NOTE


def report(state: ValidationState, runtime: Runtime[ValidationContext]) -> ValidationOutput:
    """Rank the configurations on both sets, compare the rankings, measure the judges, write the report."""
    context = job.context(runtime)
    evaluations = _evaluations(runtime, state["run_id"])
    results = {name: read_json(evaluations[name]["results"]) for name in SETS}
    measure = results[SYNTHETIC]["measures"][0]
    pairs = paired_configurations(
        results[SYNTHETIC]["configurations"],
        results[HUMAN]["configurations"],
        match_history=state["human_histories"] == state["synthetic_histories"],
    )
    human_values = per_query_matrix(results[HUMAN]["per_query"], [human for _, human in pairs], measure)
    synthetic_values = per_query_matrix(results[SYNTHETIC]["per_query"], [synthetic for synthetic, _ in pairs], measure)
    names = [synthetic for synthetic, _ in pairs]
    human_means = dict(zip(names, human_values.mean(axis=0).tolist() if len(human_values) else [0.0] * len(names)))
    synthetic_means = dict(
        zip(names, synthetic_values.mean(axis=0).tolist() if len(synthetic_values) else [0.0] * len(names))
    )
    correlation = kendall_tau_b([human_means[n] for n in names], [synthetic_means[n] for n in names])
    interval = tau_interval(human_values, synthetic_values, context.bootstrap, context.seed, DEFAULT_CONFIDENCE)
    entries = {name: {entry["name"]: entry for entry in results[name]["configurations"]} for name in SETS}
    configurations = configuration_rows(pairs, entries[SYNTHETIC], entries[HUMAN], human_means, synthetic_means)
    agreement, sample = _judge_agreement(runtime, state)
    held_out = _held_out(runtime, state)
    found, top_unseparated = _separability(pairs, human_values, human_means, synthetic_means, context)
    said = verdict(human_means, synthetic_means, correlation.tau, interval, top_unseparated, dict(pairs)).to_json()
    validity = {
        "measure": measure,
        "configurations": configurations,
        "kendall_tau_b": correlation.tau,
        "interval": {
            "low": interval.low,
            "high": interval.high,
            "confidence": DEFAULT_CONFIDENCE,
            "defined_resamples": interval.n,
        },
        "p_value": correlation.p_value,
        "top1_agrees": top1_agrees(human_means, synthetic_means),
        "verdict": said,
        "bootstrap": context.bootstrap,
        "seed": context.seed,
        "synthetic": _set_summary(
            results[SYNTHETIC], evaluations[SYNTHETIC], len(synthetic_values), state["synthetic_histories"]
        ),
        "human": {
            **_set_summary(results[HUMAN], evaluations[HUMAN], len(human_values), state["human_histories"]),
            **(
                {"name": Path(state["human"]).name, "labelled_questions": state["human"]}
                if Path(state["human"]).is_file()
                else {}
            ),
        },
        "separability": {
            "queries": len(human_values),
            "resamples": context.bootstrap,
            "seed": context.seed,
            "confidence": DEFAULT_CONFIDENCE,
            "pairs": [pair.to_json() for pair in found],
        },
        "judge_agreement": agreement,
        "judge_sample": sample,
        "settings": {
            "retrievers": state["retrievers"],
            "runs": list(state.get("runs") or []),
            "judges": list(state.get("judges") or []),
            "depth": context.depth,
            "rerank": context.rerank,
            "embedder": context.embedder,
            "split": context.split,
        },
        "held_out": held_out.to_json(),
    }
    validity["notes"] = [*validity_notes(validity), EMBEDDED_TEXT_NOTE]
    report_paths = job.run_dir(runtime, state["run_id"]).write_report(validity_report_files(validity))
    # OUTPUT_KEYS are ValidationOutput's keys, each holding the type the validity record gives it
    return cast(ValidationOutput, {**{key: validity[key] for key in OUTPUT_KEYS}, "report": report_paths})


def _separability(
    pairs: Sequence[tuple[str, str]],
    human_values: np.ndarray,
    human_means: Mapping[str, float],
    synthetic_means: Mapping[str, float],
    context: ValidationContext,
) -> tuple[list[Separation], list[Separation]]:
    """Whether the human set's queries separate each adjacent pair of its ranking and the synthetic
    ranking's top two (evals/measures/separability.py), the configurations named as they ran on the human
    set; and the top pairs they do not separate."""
    columns = {human: human_values[:, index] for index, (_, human) in enumerate(pairs)}
    scores = {human: human_means[synthetic] for synthetic, human in pairs}
    human_of = dict(pairs)
    synthetic_order = [human_of[name] for name in sorted(synthetic_means, key=lambda n: (-synthetic_means[n], n))]
    found = separations(
        columns, separation_pairs(scores, synthetic_order), context.bootstrap, context.seed, DEFAULT_CONFIDENCE
    )
    return found, top_not_separated(found, scores, synthetic_order)


def _judge_agreement(
    runtime: Runtime[ValidationContext], state: ValidationState
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    if not state.get("judges"):
        return {}, {}
    context = job.context(runtime)
    run_dir = job.run_dir(runtime, state["run_id"])
    pairs = load_jsonl(run_dir.file(PAIRS_FILE))
    verdicts: dict[str, dict[tuple[str, str], bool]] = {spec: {} for spec in state["judges"]}
    for record in load_jsonl(run_dir.file(JUDGMENTS_FILE)) if run_dir.file(JUDGMENTS_FILE).exists() else []:
        for doc_id, relevant in record["verdicts"].items():
            verdicts[record["judge"]][(record["query_id"], doc_id)] = relevant
    agreement = {}
    for spec in state["judges"]:
        judged = [pair for pair in pairs if (pair["query_id"], pair["doc_id"]) in verdicts[spec]]
        agreement[spec] = relevance_agreement(
            [pair["human"] for pair in judged], [verdicts[spec][(pair["query_id"], pair["doc_id"])] for pair in judged]
        )
    sample = {
        "gold": sum(1 for pair in pairs if pair["human"]),
        "non_gold": sum(1 for pair in pairs if not pair["human"]),
        "depth": context.judge_depth,
        "seed": context.seed,
    }
    return agreement, sample


def _set_summary(
    results: Mapping[str, Any], evaluation: Mapping[str, Any], measured: int, histories: list[str]
) -> dict[str, Any]:
    benchmark = results["benchmark"]
    return {
        "name": benchmark["name"],
        "path": benchmark["path"],
        "queries": measured,
        "documents": benchmark["documents"],
        "histories": histories,
        "evaluation_run": evaluation["evaluation_run"],
    }


def _held_out(runtime: Runtime[ValidationContext], state: ValidationState) -> HeldOutLabels:
    path = job.run_dir(runtime, state["run_id"]).file(HELD_OUT_FILE)
    return HeldOutLabels.from_json(read_json(path)) if path.exists() else HeldOutLabels()
