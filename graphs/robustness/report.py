"""The ``report`` node of a robustness run: the measures of every test set with the re-judged documents, the differences tested, the augmented qrels and the report written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime

from benchsmith.evals.measures import robustness as robustness_measures
from benchsmith.evals.measures.significance import describe
from benchsmith.evals.measures.standard import evaluate_run, parse_measures
from benchsmith.evals.reports.robustness_report import robustness_report_files
from benchsmith.graphs.contexts.robustness import RobustnessContext
from benchsmith.graphs.paraphrase.state import BENCHMARK_FILE
from benchsmith.graphs.robustness.inputs import _evaluations, _turns, benchmark_qrels, job
from benchsmith.graphs.robustness.state import (
    AUGMENTED_QRELS_FILE,
    AUGMENTED_TREC_FILE,
    EXAMPLES_SHOWN,
    JUDGMENTS_FILE,
    ORIGINAL,
    POOL_FILE,
    RobustnessOutput,
    RobustnessState,
)
from benchsmith.stores.formats.beir import merge_qrels
from benchsmith.stores.formats.benchmark_files import write_beir_qrels
from benchsmith.stores.formats.trec import Qrels, read_trec_run, write_trec_qrels
from benchsmith.stores.persistence.jsonl import load_jsonl, read_json
from benchsmith.tools.retrieval.embedded_text import EMBEDDED_TEXT_NOTE


def report(state: RobustnessState, runtime: Runtime[RobustnessContext]) -> RobustnessOutput:
    """Confirm the grades, write the augmented qrels, measure before and after, test, report."""
    context = job.context(runtime)
    run_dir = job.run_dir(runtime, state["run_id"])
    paraphrase_run = Path(state["paraphrase_run"])
    qrels = benchmark_qrels(paraphrase_run, state.get("qrels"))
    judgments = (
        {record["turn"]: record["grades"] for record in load_jsonl(run_dir.file(JUDGMENTS_FILE))}
        if run_dir.file(JUDGMENTS_FILE).exists()
        else {}
    )
    grades = {
        turn: {doc: [verdict["grade"] for verdict in by_judge.values()] for doc, by_judge in docs.items()}
        for turn, docs in judgments.items()
    }
    confirmed = robustness_measures.confirmed_judgments(grades, context.min_votes)
    binary = robustness_measures.is_binary_scale(qrels)
    on_scale = robustness_measures.on_benchmark_scale(confirmed, binary)
    rows = [(turn, doc, value) for turn, docs in sorted(on_scale.items()) for doc, value in sorted(docs.items())]
    write_beir_qrels(
        run_dir.file(AUGMENTED_QRELS_FILE),
        [(turn, doc, relevance) for turn, docs in sorted(qrels.items()) for doc, relevance in sorted(docs.items())]
        + rows,
    )
    augmented = merge_qrels(qrels, on_scale)
    write_trec_qrels(
        run_dir.file(AUGMENTED_TREC_FILE),
        [(turn, doc, relevance) for turn, docs in sorted(augmented.items()) for doc, relevance in sorted(docs.items())],
    )
    judged_measure = f"Judged@{context.judge_depth}"
    names = [str(measure) for measure in parse_measures([*context.measures, judged_measure])]
    measures = parse_measures(names)
    evaluations = _evaluations(runtime, state["run_id"])
    configurations = list(dict.fromkeys(c for name in state["sets"] for c in evaluations[name]))
    by_configuration: dict[str, Any] = {}
    for configuration in configurations:
        per_phase: dict[str, Any] = {"means": {}, "changes": {}, "queries": 0}
        for phase, judged_qrels in (("before", qrels), ("after", augmented)):
            per_set = {
                name: evaluate_run(measures, judged_qrels, read_trec_run(evaluations[name][configuration])).per_query
                for name in state["sets"]
                if configuration in evaluations[name]
            }
            per_phase["means"][phase] = {
                name: robustness_measures.mean_values(values, names) for name, values in per_set.items()
            }
            per_phase["changes"][phase] = (
                robustness_measures.changes(
                    per_set, ORIGINAL, names, context.significance_test, context.resamples, context.seed
                )
                if ORIGINAL in per_set
                else []
            )
            per_phase["queries"] = len(next(iter(per_set.values()), {}))
        by_configuration[configuration] = per_phase
    results = _results(
        state,
        context,
        load_jsonl(run_dir.file(POOL_FILE)),
        paraphrase_run,
        qrels,
        judgments,
        grades,
        confirmed,
        names,
        judged_measure,
        by_configuration,
        evaluations,
        binary,
    )
    report_paths = run_dir.write_report(robustness_report_files(results))
    return {
        "sets": state["sets"],
        "pooled": results["pool"]["pooled"],
        "confirmed": len(rows),
        "means": {configuration: values["means"] for configuration, values in by_configuration.items()},
        "report": report_paths,
    }


def _results(
    state: RobustnessState,
    context: RobustnessContext,
    pooled: list[dict[str, Any]],
    paraphrase_run: Path,
    qrels: Qrels,
    judgments: dict[str, Any],
    grades: dict[str, dict[str, list[int]]],
    confirmed: dict[str, dict[str, int]],
    names: list[str],
    judged_measure: str,
    by_configuration: dict[str, Any],
    evaluations: dict[str, dict[str, str]],
    binary: bool,
) -> dict[str, Any]:
    distribution = {str(grade): 0 for grade in range(robustness_measures.MAX_GRADE + 1)}
    for docs in confirmed.values():
        for grade in docs.values():
            distribution[str(grade)] += 1
    turns = _turns(state["paraphrase_run"])
    examples = [
        {
            "turn": turn,
            "doc": doc,
            "grade": grade,
            "question": turns.get(turn, {}).get("raw", ""),
            "rationales": {judge: verdict["rationale"] for judge, verdict in judgments[turn][doc].items()},
        }
        for turn, docs in sorted(confirmed.items())
        for doc, grade in sorted(docs.items())
        if grade >= robustness_measures.RELEVANT_GRADE
    ]
    examples.sort(key=lambda example: -example["grade"])
    benchmark = read_json(paraphrase_run / BENCHMARK_FILE)
    unjudged_at_k = {}
    for configuration, values in by_configuration.items():
        for name, means in values["means"]["before"].items():
            unjudged_at_k[f"{name}/{configuration}"] = 1 - means[judged_measure]
    return {
        "benchmark": {
            "name": benchmark["name"],
            "paraphrase_run": str(paraphrase_run),
            "judged_turns": len(qrels),
            "corpus": benchmark.get("corpus"),
        },
        "mode": "run files" if state.get("runs") else "retrieval",
        "sets": state["sets"],
        "configurations": list(by_configuration),
        "evaluations": evaluations,
        "settings": {
            "judges": state["judges"],
            "judge_depth": context.judge_depth,
            "min_votes": context.min_votes,
            "retrievers": state.get("retrievers") or [],
            "histories": state.get("histories") or [],
            "depth": context.depth,
            "qrels": state.get("qrels"),
            "corpus": context.corpus,
        },
        "measures": names,
        "primary_measure": names[0],
        "judged_measure": judged_measure,
        "pool": {
            "pooled": len(pooled),
            "turns": len({record["turn"] for record in pooled}),
            "with_text": sum(1 for record in pooled if record["has_text"]),
            "judged": sum(len(docs) for docs in grades.values()),
            "confirmed": sum(len(docs) for docs in confirmed.values()),
            "confirmed_relevant": sum(
                1
                for docs in confirmed.values()
                for grade in docs.values()
                if grade >= robustness_measures.RELEVANT_GRADE
            ),
            "confirmed_grades": distribution,
            # Each judge's own verdicts: how many pooled documents it called relevant (grade 2 or more).
            "relevant_by_judge": {
                judge: sum(
                    1
                    for docs in judgments.values()
                    for by_judge in docs.values()
                    if judge in by_judge and by_judge[judge]["grade"] >= robustness_measures.RELEVANT_GRADE
                )
                for judge in state["judges"]
            },
        },
        "scale": {
            "benchmark": "binary" if binary else "graded",
            "relevant_grade": robustness_measures.RELEVANT_GRADE,
            "mapping": (
                f"confirmed grades of {robustness_measures.RELEVANT_GRADE} or more are relevance 1, "
                "lower ones 0 (the benchmark's gold is binary)"
            )
            if binary
            else "confirmed grades are the relevance (the benchmark's gold is graded)",
        },
        "by_configuration": by_configuration,
        "examples": examples[:EXAMPLES_SHOWN],
        "vote_rule": robustness_measures.grade_vote_rule(context.min_votes),
        "test": describe(context.significance_test, context.resamples, 0.05, max(len(state["sets"]) - 1, 1)),
        "notes": _notes(context, state, judged_measure, binary),
    }


def _notes(context: RobustnessContext, state: RobustnessState, judged_measure: str, binary: bool) -> list[str]:
    notes = [
        "Measures are means over the turns with relevance judgments; a test set's change is its mean minus the "
        "original's, with a paired test on the per-turn values, Holm-corrected over the test sets.",
        f"Re-judging pools the documents of every run's top {context.judge_depth} (the original's and the test "
        f"sets') that the qrels do not judge for that turn, and has each judge grade them on CAsT's 0-4 scale "
        f"(0 fails, 1 slightly, 2 moderately, 3 highly, 4 fully meets), with the audit's vote rule: "
        f"{robustness_measures.grade_vote_rule(context.min_votes)}. Confirmed grades, non-relevant ones included, are "
        f"appended to augmented_qrels.tsv, so {judged_measure} reaches 1.0 where every pooled document was confirmed.",
        (
            f"The benchmark's gold is binary: a confirmed grade of {robustness_measures.RELEVANT_GRADE} (moderately "
            "meets) or more is appended as relevance 1, a lower one as 0 (CAsT's threshold for binary measures), so a "
            "re-judged document weighs what a gold one weighs in nDCG."
        )
        if binary
        else "The benchmark's gold is graded: confirmed grades are appended as they are.",
        "The judges see the turn as the benchmark asks it (its conversation, raw utterance and self-contained form): "
        "the test sets share the original's information needs.",
        EMBEDDED_TEXT_NOTE,
    ]
    if len(state["judges"]) == 1:
        notes.append(
            f"One judge ({state['judges'][0]}) with --min-votes {context.min_votes}: its grades were trusted "
            "unchecked; add a second --judge for the audit's two-vote rule."
        )
    if state.get("runs") and not context.corpus:
        notes.append("No --corpus was given with the run files: without the documents' text nothing was re-judged.")
    return notes
