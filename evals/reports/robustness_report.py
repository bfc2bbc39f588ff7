"""The report of a robustness run: ``robustness.json``, ``robustness-report.md`` and a
self-contained ``robustness-report.html``, from one document model.

Per configuration it gives ECAsT's robustness table: the original and each test set R1..Rn
(and their mean) as rows, each measure before and after re-judging as columns, with each test
set's change against the original and its significance; then what re-judging found.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from benchsmith.evals.reports import document, plots

ROBUSTNESS_FILES = document.ReportFileNames(
    results="robustness.json", markdown="robustness-report.md", html="robustness-report.html"
)
ORIGINAL = "original"
VARIANTS_MEAN = "mean of test sets"
PHASES = (("before", "before re-judging"), ("after", "after re-judging"))


def robustness_report_files(results: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return document.render_report(results, build_robustness_document(results), ROBUSTNESS_FILES)


def build_robustness_document(results: Mapping[str, Any]) -> document.Document:
    sections = [summary_section(results), overview_section(results)]
    for configuration, values in results["by_configuration"].items():
        sections.append(configuration_section(configuration, values, results))
    sections.append(rejudging_section(results))
    sections.append(
        document.Section("Notes", [document.BulletList([*results.get("notes", []), f"Test: {results['test']}."])])
    )
    return document.Document(f"Metric robustness: {results['benchmark']['name']}", sections)


def _variant_sets(results: Mapping[str, Any]) -> list[str]:
    return [name for name in results["sets"] if name != ORIGINAL]


def variants_mean(means: Mapping[str, Mapping[str, float]], sets: Sequence[str], measure: str) -> float | None:
    values = [means[name][measure] for name in sets if name in means]
    return sum(values) / len(values) if values else None


def summary_section(results: Mapping[str, Any]) -> document.Section:
    measure, judged = results["primary_measure"], results["judged_measure"]
    configuration = results["configurations"][0] if results["configurations"] else None
    sets = _variant_sets(results)
    if configuration is None or not sets:
        return document.Section("Summary", ["No test set was scored against the original."])
    means = results["by_configuration"][configuration]["means"]
    before, after = means["before"], means.get("after", means["before"])
    heading = (
        f"{configuration}: {measure} {_value(before.get(ORIGINAL, {}).get(measure))} on the original, "
        f"{_value(variants_mean(before, sets, measure))} on the paraphrased test sets"
    )
    pool = results["pool"]
    text = (
        f"After re-judging {pool['judged']:,} of {pool['pooled']:,} unjudged top-{results['settings']['judge_depth']} "
        f"documents ({pool['confirmed_relevant']:,} confirmed relevant), {measure} is "
        f"{_value(after.get(ORIGINAL, {}).get(measure))} on the original and "
        f"{_value(variants_mean(after, sets, measure))} on the test sets; {judged} on the test sets goes from "
        f"{_value(variants_mean(before, sets, judged))} to {_value(variants_mean(after, sets, judged))}."
    )
    return document.Section("Summary", [document.Callout(heading, text)])


def overview_section(results: Mapping[str, Any]) -> document.Section:
    settings = results["settings"]
    how = (
        f"scored with the retrievers {', '.join(settings['retrievers'])} × history "
        f"{', '.join(settings['histories'])} (benchsmith evaluate)"
        if results["mode"] == "retrieval"
        else "scored from the run files given"
    )
    return document.Section(
        "Test sets and settings",
        [
            f"Paraphrase run {results['benchmark']['paraphrase_run']}: {results['benchmark']['judged_turns']:,} judged "
            f"turns; test sets {', '.join(results['sets'])}, {how}.",
            f"Judges ({len(settings['judges'])}): {', '.join(settings['judges'])}; pool depth k = "
            f"{settings['judge_depth']}; vote rule: {results['vote_rule']}.",
        ],
    )


def configuration_section(
    configuration: str, values: Mapping[str, Any], results: Mapping[str, Any]
) -> document.Section:
    measures, sets = results["measures"], results["sets"]
    blocks: list[document.Block] = [
        f"Mean over {values['queries']:,} judged turns. A test set's cell shows its change against the original in "
        "parentheses; * marks a change significant after correction.",
        robustness_table(values, measures, sets),
    ]
    for measure in dict.fromkeys([results["primary_measure"], results["judged_measure"]]):
        by_group = {
            label: {
                name: {measure: means[measure], "queries": values["queries"]}
                for name, means in values["means"][phase].items()
            }
            for phase, label in PHASES
            if phase in values["means"]
        }
        blocks.append(
            document.Plot(
                f"Grouped bars of mean {measure} of {configuration} on the original and each test set, "
                "before and after re-judging",
                functools.partial(plots.group_bars, by_group, measure, f"{measure} · {configuration}"),
            )
        )
    return document.Section(f"Configuration {configuration}", blocks)


def robustness_table(values: Mapping[str, Any], measures: Sequence[str], sets: Sequence[str]) -> document.Table:
    """Rows: the original, each test set, their mean; columns: each measure before and after."""
    changes = {
        (phase, row["set"], row["measure"]): row for phase in values["changes"] for row in values["changes"][phase]
    }
    phases = [phase for phase, _ in PHASES if phase in values["means"]]
    columns = ["test set", *(f"{measure} {phase}" for measure in measures for phase in phases)]
    variant_sets = [name for name in sets if name != ORIGINAL]
    rows = []
    for name in [*sets, VARIANTS_MEAN]:
        cells = [document.Cell(name, bold=name == ORIGINAL)]
        for measure in measures:
            for phase in phases:
                means = values["means"][phase]
                if name == VARIANTS_MEAN:
                    cells.append(document.Cell(_value(variants_mean(means, variant_sets, measure)), numeric=True))
                    continue
                text = _value(means.get(name, {}).get(measure))
                change = changes.get((phase, name, measure))
                if change is not None:
                    relative = "" if change["relative"] is None else f" ({change['relative']:+.1%})"
                    text += relative + ("*" if change["significant"] else "")
                cells.append(document.Cell(text, numeric=change is None))
        rows.append(cells)
    return document.Table(columns, rows)


def rejudging_section(results: Mapping[str, Any]) -> document.Section:
    pool = results["pool"]
    grades = pool["confirmed_grades"]
    rows = [
        [document.Cell(label), document.Cell(f"{value:,}", numeric=True)]
        for label, value in (
            ("unjudged documents pooled", pool["pooled"]),
            ("turns with pooled documents", pool["turns"]),
            ("pooled documents with text", pool["with_text"]),
            ("judged", pool["judged"]),
            ("confirmed", pool["confirmed"]),
            ("confirmed relevant (grade ≥ 2)", pool["confirmed_relevant"]),
            *((f"confirmed grade {grade}", count) for grade, count in grades.items()),
            *(
                (f"called relevant (grade ≥ 2) by {judge}", count)
                for judge, count in pool.get("relevant_by_judge", {}).items()
            ),
        )
    ]
    scale = results.get("scale", {}).get("mapping", "confirmed grades are the relevance")
    blocks: list[document.Block] = [
        f"The unjudged documents of every run's top {results['settings']['judge_depth']}, graded by the judges on "
        f"CAsT's 0-4 scale; {scale}. The relevance is in augmented_qrels.tsv (BEIR) and augmented_qrels.trec.",
        document.Table(["re-judging", "documents"], rows),
    ]
    if results.get("examples"):
        blocks.append(document.Subheading("Confirmed relevant documents the qrels lacked"))
        for example in results["examples"]:
            blocks += [
                f"Turn {example['turn']}, document {example['doc']}: grade {example['grade']}.",
                document.Quote(str(example["question"])),
                document.BulletList([f"{judge}: {text}" for judge, text in example["rationales"].items()]),
            ]
    return document.Section("Re-judging", blocks)


def _value(value: float | None) -> str:
    return document.MISSING if value is None else f"{value:.3f}"
