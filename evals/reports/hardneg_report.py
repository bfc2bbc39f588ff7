"""The report of scoring a multi-condition hard-negative dataset: ``hardneg-scores.json`` for
programs, ``hardneg-report.md`` and a self-contained ``hardneg-report.html`` for people, rendered
from one document model (``evals.reports.document``).

It answers the MultiConIR questions (Lu et al., 2025) for each retriever and reranker: does it
still prefer the document meeting every condition as conditions accumulate (Task 1), does it
rank documents by how many conditions they meet (Task 2), and does the phrasing of the query
change its decisions (Task 3); then shows the rows that fooled it, with the condition whose
rewrite did.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchsmith.evals.reports import document, figures, hardneg_plots

HARDNEG_REPORT_FILES = document.ReportFileNames(
    results="hardneg-scores.json", markdown="hardneg-report.md", html="hardneg-report.html"
)
DROP_REASONS = {
    "fewer_conditions": "fewer than N usable condition sentences (verbatim, once, not overlapping)",
    "positive_fails": "the judge did not find every condition in the positive",
    "negatives_fail": "verification dropped documents of both tasks",
}


def hardneg_report_files(results: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """``{kind: (file name, text)}`` for the results JSON, the Markdown and the HTML report."""
    return document.render_report(results, build_hardneg_document(results), HARDNEG_REPORT_FILES)


def build_hardneg_document(results: Mapping[str, Any]) -> document.Document:
    scorers: Mapping[str, Mapping[str, Any]] = results["scorers"]
    dataset = results["dataset"]
    sections = [summary_section(scorers, dataset), dataset_section(dataset)]
    if any("task1" in scorer for scorer in scorers.values()):
        sections.append(task1_section(scorers))
    if any("task2" in scorer for scorer in scorers.values()):
        sections += [task2_section(scorers), task3_section(scorers)]
    sections.append(worst_section(scorers))
    sections.append(
        document.Section(
            "Scorers", [document.BulletList([f"{label}: {scorer['description']}" for label, scorer in scorers.items()])]
        )
    )
    if results.get("notes"):
        sections.append(document.Section("Notes", [document.BulletList(list(results["notes"]))]))
    return document.Document(f"Multi-condition hard negatives: {dataset.get('name', 'dataset')}", sections)


# ---------------------------------------------------------------------------------------
# Sections.


def summary_section(scorers: Mapping[str, Mapping[str, Any]], dataset: Mapping[str, Any]) -> document.Section:
    """The headline: which scorer keeps preferring the full match best as conditions accumulate."""
    with_task1 = {label: scorer["task1"]["win_rate"] for label, scorer in scorers.items() if "task1" in scorer}
    blocks: list[document.Block] = []
    if with_task1:
        last = str(max(int(k) for k in next(iter(with_task1.values()))))
        best = max(with_task1, key=lambda label: with_task1[label][last]["mean"])
        first = with_task1[best]["1"]["mean"]
        blocks.append(
            document.Callout(
                f"{best} holds up best with {last} conditions: win rate {figures.percent(with_task1[best][last]['mean'])}",
                f"With one condition it prefers the positive over the single-miss negative in {figures.percent(first)} of the "
                f"{dataset['task_rows']['task1']:,} rows; with {last} in {figures.percent(with_task1[best][last]['mean'])}. "
                + "; ".join(
                    f"{label}: {figures.percent(rates['1']['mean'])} → {figures.percent(rates[last]['mean'])}"
                    for label, rates in with_task1.items()
                    if label != best
                )
                + ".",
            )
        )
    else:
        blocks.append(
            document.Callout("No Task 1 rows", "No row has a complete single-miss set; see the dataset section.")
        )
    return document.Section("Summary", blocks)


def dataset_section(dataset: Mapping[str, Any]) -> document.Section:
    rows = dataset["task_rows"]
    blocks: list[document.Block] = [
        f"{dataset['rows']:,} rows (source documents) with N = {dataset['conditions']} conditions each, read from "
        f"{dataset['path']}: {rows['task1']:,} with a complete single-miss set (Task 1) and {rows['task2']:,} with a "
        "complete ladder (Tasks 2 and 3)."
    ]
    settings = dataset.get("settings") or {}
    if settings:
        blocks.append(
            f"Built from {', '.join(settings.get('sources') or []) or settings.get('collection') or document.MISSING} "
            f"in the {settings.get('domain', document.MISSING)} domain"
            + (f" ({settings['features']})" if settings.get("features") else "")
            + f" with {settings.get('negatives', document.MISSING)} negatives; model {settings.get('llm', document.MISSING)}, "
            f"judge {settings.get('judge') or settings.get('llm', document.MISSING)}."
        )
    build = dataset.get("build")
    if build:
        blocks.append(verification_table(build))
        dropped = build.get("dropped") or {}
        if dropped:
            blocks.append(
                document.BulletList(
                    [
                        f"{count:,} source documents dropped: {DROP_REASONS.get(reason, reason)}"
                        for reason, count in dropped.items()
                    ]
                )
            )
    return document.Section("Dataset and its verification", blocks)


def verification_table(build: Mapping[str, Any]) -> document.Table:
    """Hard negatives checked by the judge: first time right, right after one rebuild, dropped."""
    by_kind = build.get("verification_by_kind") or {}
    rows = []
    for kind, label in (("ladder", "ladder HN1..HN_N"), ("single_miss", "single-miss Miss1..Miss_N")):
        tally = by_kind.get(kind) or {}
        rows.append(
            [document.Cell(label)]
            + [
                document.Cell(f"{tally.get(key, 0):,}", numeric=True)
                for key in ("checked", "verified_first_time", "rebuilt_and_verified", "dropped")
            ]
        )
    return document.Table(["documents", "checked", "verified first time", "rebuilt, then verified", "dropped"], rows)


def task1_section(scorers: Mapping[str, Mapping[str, Any]]) -> document.Section:
    with_task1 = {label: scorer["task1"] for label, scorer in scorers.items() if "task1" in scorer}
    ks = sorted(next(iter(with_task1.values()))["win_rate"], key=int)
    labels = list(with_task1)
    win_rows = [
        [document.Cell(k)]
        + [
            document.Cell(_with_interval(with_task1[label]["win_rate"][k], figures.percent), numeric=True)
            for label in labels
        ]
        for k in ks
    ]
    diff_rows = [
        [document.Cell(k)]
        + [
            document.Cell(
                _with_interval(with_task1[label]["avg_diff"][k], lambda value: figures.decimal(value, 3)), numeric=True
            )
            for label in labels
        ]
        for k in ks
    ]
    tie_rows = [
        [document.Cell(k)]
        + [
            document.Cell(figures.percent(with_task1[label].get("tie_rate", {}).get(k)), numeric=True)
            for label in labels
        ]
        for k in ks
    ]
    return document.Section(
        "Task 1: complexity robustness",
        [
            "For the query with k conditions: how often the scorer gives the positive (meeting all k) a strictly higher "
            "score than the single-miss negative (missing condition k only). 50% is a coin flip; a tie loses. In "
            "brackets: the 95% bootstrap interval over rows.",
            document.Table(["k", *labels], win_rows),
            document.Plot(
                "Win rate against the number of conditions k, one line per scorer, bootstrap interval shaded",
                lambda: hardneg_plots.win_rate_by_conditions(
                    {label: task["win_rate"] for label, task in with_task1.items()}
                ),
            ),
            document.Subheading("Mean score difference, positive − negative"),
            "In each scorer's own units (compare along k, not across scorers); a difference shrinking towards 0 as k "
            "grows is the scorer losing sight of the one missing condition.",
            document.Table(["k", *labels], diff_rows),
            document.Subheading("Ties (counted as losses)"),
            "The share of rows where the positive and the negative got exactly the same score: the scorer did not see "
            "the difference at all (a sentence past a dense model's input window, a word its tokenizer drops).",
            document.Table(["k", *labels], tie_rows),
        ],
    )


def task2_section(scorers: Mapping[str, Mapping[str, Any]]) -> document.Section:
    with_task2 = {label: scorer["task2"] for label, scorer in scorers.items() if "task2" in scorer}
    labels = list(with_task2)
    pairs = list(next(iter(with_task2.values()))["pairs"])
    rows = [
        [document.Cell(pair.replace("_vs_", " > "))]
        + [
            document.Cell(_with_interval(with_task2[label]["pairs"][pair], figures.percent), numeric=True)
            for label in labels
        ]
        for pair in pairs
    ]
    return document.Section(
        "Task 2: relevance monotonicity",
        [
            "With the query of all N conditions (instruction style): how often each document of the ladder outscores "
            "the next one down, which misses one more condition (HN_j misses conditions 1..j).",
            document.Table(["pair", *labels], rows),
            document.Plot(
                "Win rate of every adjacent pair of the ladder, one line per scorer, bootstrap interval shaded",
                lambda: hardneg_plots.monotonicity_ladder({label: task["pairs"] for label, task in with_task2.items()}),
            ),
        ],
    )


def task3_section(scorers: Mapping[str, Mapping[str, Any]]) -> document.Section:
    with_task3 = {label: scorer for label, scorer in scorers.items() if "task3" in scorer}
    rows = []
    for label, scorer in with_task3.items():
        instruction = _mean_of(scorer["task2"]["pairs"])
        descriptive = _mean_of(scorer["task2_descriptive"]["pairs"])
        rows.append(
            [
                document.Cell(label),
                document.Cell(_with_interval(scorer["task3"]["change_rate"], figures.percent), numeric=True),
                document.Cell(figures.percent(instruction), numeric=True),
                document.Cell(figures.percent(descriptive), numeric=True),
            ]
        )
    return document.Section(
        "Task 3: format sensitivity",
        [
            "The share of Task 2 outcomes (row × adjacent pair) that change when the instruction-style query "
            '("Find a document that satisfies: (1) … (2) …") is replaced by the descriptive-style one asking for the '
            "same conditions in a natural request. 0% is a scorer indifferent to phrasing.",
            document.Table(
                ["scorer", "change rate", "mean pair win rate, instruction", "mean pair win rate, descriptive"], rows
            ),
            document.Plot(
                "Change rate between query styles per scorer, with its bootstrap interval",
                lambda: hardneg_plots.flip_rates(
                    {label: scorer["task3"]["change_rate"] for label, scorer in with_task3.items()}
                ),
            ),
        ],
    )


def worst_section(scorers: Mapping[str, Mapping[str, Any]]) -> document.Section:
    blocks: list[document.Block] = [
        "Per scorer, the rows where a document missing a condition beat (or tied) the one that meets it by the "
        "largest margin, with the condition whose rewritten sentence fooled the scorer."
    ]
    for label, scorer in scorers.items():
        worst = list(scorer.get("worst_task1") or [])
        ladder = list(scorer.get("worst_task2") or [])
        if not worst and not ladder:
            blocks += [document.Subheading(label), "No row fooled it: every positive beat its negatives."]
            continue
        blocks.append(document.Subheading(f"{label}: Task 1"))
        blocks += (
            _worst_blocks(
                worst,
                lambda item: (
                    f"{item['row']} with k = {item['k']}: negative {_score(item['negative_score'])} ≥ positive "
                    f"{_score(item['positive_score'])}"
                ),
            )
            if worst
            else ["No single-miss negative beat its positive."]
        )
        if ladder:
            blocks.append(document.Subheading(f"{label}: Task 2 ladder"))
            blocks += _worst_blocks(
                ladder,
                lambda item: (
                    f"{item['row']}, {item['pair'].replace('_vs_', ' > ')} reversed: {_score(item['lower_score'])} "
                    f"≥ {_score(item['higher_score'])}"
                ),
            )
    return document.Section("Worst rows, and the condition that fooled the scorer", blocks)


def _worst_blocks(items: Sequence[Mapping[str, Any]], heading: Any) -> list[document.Block]:
    blocks: list[document.Block] = []
    for item in items:
        condition = f"Condition {item['condition_number']}" + (
            f": {item['condition']}" if item.get("condition") else ""
        )
        title = f" ({item['title']})" if item.get("title") and item["title"] != item["row"] else ""
        blocks += [
            document.BulletList([heading(item) + title, "Query: " + str(item["query"]), condition]),
            "Original sentence, then its rewrite in the negative:",
            document.Quote(f"{item.get('sentence', '')}\n→ {item.get('negative', '')}"),
        ]
    return blocks


# ---------------------------------------------------------------------------------------
# Formatting.


def _score(value: float) -> str:
    """A raw score, with enough digits to tell two close ones apart."""
    return f"{value:.5g}"


def _with_interval(interval: Mapping[str, Any], show: Any) -> str:
    if interval.get("low") is None:
        result: str = show(interval.get("mean"))
        return result
    return f"{show(interval['mean'])} [{show(interval['low'])}, {show(interval['high'])}]"


def _mean_of(pairs: Mapping[str, Mapping[str, Any]]) -> float | None:
    means = [pair["mean"] for pair in pairs.values() if pair.get("mean") is not None]
    return sum(means) / len(means) if means else None
