"""The report of an evaluation: ``results.json`` for programs, ``report.md`` and a
self-contained ``report.html`` for people, rendered from one document model
(``evals.reports.document``), so both always show the same numbers.

Every measure is taken as higher-is-better (true of recall, nDCG, RR, AP and Judged@k), so
the best value of a column is its maximum.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchsmith.evals.reports import document, plots

REPORT_FILES = document.ReportFileNames(results="results.json", markdown="report.md", html="report.html")
# Score columns per table: with a long configuration name beside them a table fits a 1280-pixel window.
COLUMNS_PER_TABLE = 7


def evaluation_report_files(results: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """``results.json``, ``report.md`` and ``report.html``: ``{kind: (file name, text)}``."""
    return document.render_report(results, build_document(results), REPORT_FILES)


# ---------------------------------------------------------------------------------------
# Building the document from the results.


def build_document(results: Mapping[str, Any]) -> document.Document:
    benchmark = results["benchmark"]
    names = [configuration["name"] for configuration in results["configurations"]]
    primary = results["primary_measure"]
    overview = document.Section(
        "Overview", [benchmark_summary(benchmark), settings_summary(results.get("settings", {}))]
    )
    main = document.Section(
        "Main results",
        ["Mean over the judged queries; the best value of each column is in bold.", *main_tables(results)],
    )
    recall_curve = _in_order(results.get("recall_curve") or {}, names)
    if recall_curve:
        main.blocks.append(
            document.Plot(
                "Mean recall@k against the cutoff k, one line per configuration",
                lambda: plots.recall_curves(recall_curve),
            )
        )
    sections = [overview, main]
    for key, grouping, column_prefix in (
        ("by_turn", "turn", "turn"),
        ("by_switch", "switch type", ""),
        ("by_answerability", "answerability", ""),
        ("by_question_type", "question type", ""),
        ("by_standalone", "standalone", ""),
    ):
        by_group = _in_order(results.get(key) or {}, names)
        if by_group:
            sections.append(group_section(by_group, primary, grouping, column_prefix))
    unjudged = results.get("unjudged") or {}
    if unjudged.get("queries"):
        sections.append(unjudged_section(unjudged, names))
    significance = results.get("significance") or {}
    tested = {comparison["measure"] for comparison in significance.get("comparisons", [])}
    sections += [
        significance_section(significance, measure, names)
        for measure in significance.get("measures", [])
        if measure in tested
    ]
    sections.append(document.Section("Configurations", [configurations_table(results["configurations"])]))
    if results.get("notes"):
        sections.append(document.Section("Notes", [document.BulletList(list(results["notes"]))]))
    return document.Document(f"Retrieval evaluation: {benchmark['name']}", sections)


def benchmark_summary(benchmark: Mapping[str, Any]) -> str:
    kind = "conversational" if benchmark.get("conversational") else "single-turn"
    return (
        f"Benchmark {benchmark['name']} ({kind}): {benchmark['queries']:,} queries, "
        f"{benchmark.get('judged_queries', benchmark['queries']):,} of them judged"
        f"{_unjudged_clause(benchmark.get('unjudged_queries'))}; "
        f"{benchmark['documents']:,} documents; read from {benchmark.get('path', 'an unnamed path')}."
    )


def _unjudged_clause(unjudged: int | None) -> str:
    return f" ({unjudged:,} without judgments, left out of the measures)" if unjudged else ""


def settings_summary(settings: Mapping[str, Any]) -> str:
    parts = [
        f"Retrievers: {', '.join(settings.get('retrievers', [])) or document.MISSING}",
        f"histories: {', '.join(settings.get('histories', [])) or document.MISSING}",
        f"retrieval depth {settings['depth']:,}" if "depth" in settings else "retrieval depth unknown",
    ]
    if settings.get("rerank"):
        parts.append(f"reranked with {settings['rerank']} to depth {settings.get('rerank_depth', document.MISSING)}")
    else:
        parts.append("no reranking")
    return "; ".join(parts) + "."


def main_tables(results: Mapping[str, Any]) -> list[document.Table]:
    """Configurations × measures, means to 3 decimals, the best of each column in bold; the
    measures in tables of at most ``COLUMNS_PER_TABLE`` so each fits a 1280-pixel window."""
    measures = list(results["measures"])
    aggregate = results["aggregate"]
    names = [c["name"] for c in results["configurations"]]
    return [
        _score_table(
            ["configuration", *part],
            names,
            [[aggregate.get(name, {}).get(measure) for measure in part] for name in names],
        )
        for part in _column_blocks(measures)
    ]


def _column_blocks(columns: list[str]) -> list[list[str]]:
    """``columns`` cut into blocks of at most COLUMNS_PER_TABLE, as even as the count allows."""
    blocks = max(1, -(-len(columns) // COLUMNS_PER_TABLE))
    size = -(-len(columns) // blocks)
    return [columns[start : start + size] for start in range(0, len(columns), size)] or [[]]


def group_section(by_group: plots.ByGroup, measure: str, grouping: str, column_prefix: str) -> document.Section:
    """A table and a bar chart of ``measure`` per group, e.g. nDCG@10 by turn."""
    title = f"{measure} by {grouping}"
    return document.Section(
        title,
        [
            f"Mean {measure} over the queries of each {grouping} (n: its queries); the best of each column in bold.",
            *group_tables(by_group, measure, column_prefix),
            document.Plot(
                f"Bar chart of mean {measure} by {grouping}, one bar per configuration",
                lambda: plots.group_bars(by_group, measure, title),
            ),
        ],
    )


def group_tables(by_group: plots.ByGroup, measure: str, column_prefix: str = "") -> list[document.Table]:
    """Configurations × groups of ``measure`` (headers carry the group's query count), the groups in
    tables of at most COLUMNS_PER_TABLE."""
    groups = plots.ordered_groups(by_group)
    tables = []
    for part in _column_blocks(groups):
        columns = [
            f"{column_prefix} {group}".strip() + f" (n={plots.group_query_count(by_group, group)})" for group in part
        ]
        rows = [[by_group[name].get(group, {}).get(measure) for group in part] for name in by_group]
        tables.append(_score_table(["configuration", *columns], list(by_group), rows))
    return tables


def unjudged_section(unjudged: Mapping[str, Any], names: Sequence[str]) -> document.Section:
    """The turns without judgments: how many, and how confidently each configuration still
    returns something for them (its top-1 score) beside the answerable turns."""
    counts = ", ".join(f"{count:,} {label}" for label, count in unjudged.get("by_answerability", {}).items())
    rows = []
    for name in names:
        entry = (unjudged.get("top_score") or {}).get(name)
        if not entry:
            continue
        auc = entry.get("auc")
        rows.append(
            [
                document.Cell(name),
                *_distribution_cells(entry["unjudged"]),
                *_distribution_cells(entry["answerable"]),
                document.Cell(document.MISSING if auc is None else f"{auc:.3f}", numeric=True),
            ]
        )
    return document.Section(
        "Turns without relevance judgments",
        [
            f"{unjudged['queries']:,} turns have no relevance judgments ({counts}): no document answers them, so they "
            "are left out of every measure above. The top-1 retrieved score of each configuration on them, beside its "
            "top-1 score on the answerable turns, shows how confidently a retriever returns something when nothing is "
            "relevant; AUC is the chance that an answerable turn's top score beats an unjudged turn's (0.5: the score "
            "cannot tell them apart, 1: a threshold on it separates them).",
            document.Table(
                [
                    "configuration",
                    "unjudged n",
                    "unjudged median",
                    "unjudged p10–p90",
                    "answerable n",
                    "answerable median",
                    "answerable p10–p90",
                    "AUC",
                ],
                rows,
            ),
        ],
    )


def _distribution_cells(distribution: Mapping[str, Any]) -> list[document.Cell]:
    if not distribution.get("queries"):
        return [
            document.Cell("0", numeric=True),
            document.Cell(document.MISSING, numeric=True),
            document.Cell(document.MISSING, numeric=True),
        ]
    return [
        document.Cell(f"{distribution['queries']:,}", numeric=True),
        document.Cell(f"{distribution['median']:.3f}", numeric=True),
        document.Cell(f"{distribution['p10']:.3f}–{distribution['p90']:.3f}", numeric=True),
    ]


def significance_section(significance: Mapping[str, Any], measure: str, names: Sequence[str]) -> document.Section:
    comparisons = [c for c in significance["comparisons"] if c["measure"] == measure]
    compared = {name for c in comparisons for name in (c["first"], c["second"])}
    return document.Section(
        f"Significance of {measure} differences",
        [
            f"Test: {significance['description'].rstrip('.')}.",
            document.Plot(
                f"Heat map of the mean {measure} difference between every pair of configurations, "
                "significant differences starred",
                lambda: plots.significance_matrix(comparisons, [n for n in names if n in compared], measure),
            ),
            significance_table(comparisons),  # after the heat map, which reads better when the pairs are many
        ],
    )


def significance_table(comparisons: Sequence[Mapping[str, Any]]) -> document.Table:
    rows = [
        [
            document.Cell(f"{c['first']} vs {c['second']}"),
            document.Cell(f"{c['mean_difference']:+.3f}", numeric=True),
            document.Cell(_format_p(c["p_value"]), numeric=True),
            document.Cell(_format_p(c["p_adjusted"]), numeric=True),
            document.Cell("yes" if c["significant"] else "no", bold=bool(c["significant"])),
        ]
        for c in comparisons
    ]
    return document.Table(
        ["pair (first vs second)", "mean difference (first − second)", "p", "corrected p", "significant"], rows
    )


def configurations_table(configurations: Sequence[Mapping[str, Any]]) -> document.Table:
    rows = [
        [
            document.Cell(c["name"]),
            document.Cell(str(c.get("retriever", document.MISSING))),
            document.Cell(str(c.get("history", document.MISSING))),
            document.Cell("yes" if c.get("rerank") else "no"),
            document.Cell(f"{c['seconds']:.1f}" if c.get("seconds") is not None else document.MISSING, numeric=True),
            document.Cell(_run_file_shown(c.get("run_file"))),
        ]
        for c in configurations
    ]
    return document.Table(["configuration", "retriever", "history", "reranked", "seconds", "run file"], rows)


def _run_file_shown(run_file: str | None) -> str:
    """A run file as the run folder holds it (run-files/NAME.trec), or as given when elsewhere."""
    if not run_file:
        return document.MISSING
    parts = run_file.replace("\\", "/").split("/")
    return "/".join(parts[-2:]) if len(parts) >= 2 and parts[-2] == "run-files" else run_file


def _score_table(columns: list[str], names: list[str], values: list[list[float | None]]) -> document.Table:
    """Rows of ``names`` then one value per column, the best of each column bold.

    Best is judged on the values as shown (3 decimals): two values that print the same are
    both bold, rather than one winning on a difference the reader cannot see.
    """
    shown = [[None if value is None else round(value, 3) for value in row] for row in values]
    best = [
        max((value for row in shown if (value := row[column]) is not None), default=None)
        for column in range(len(columns) - 1)
    ]
    rows = [
        [document.Cell(name), *(_score_cell(value, top) for value, top in zip(row, best))]
        for name, row in zip(names, shown)
    ]
    return document.Table(columns, rows)


def _score_cell(value: float | None, best: float | None) -> document.Cell:
    if value is None:
        return document.Cell(document.MISSING, numeric=True)
    return document.Cell(f"{value:.3f}", bold=value == best, numeric=True)


def _format_p(p: float) -> str:
    return "<0.0001" if p < 0.0001 else f"{p:.4f}"


def _in_order(by_configuration: Mapping[str, Any], names: Sequence[str]) -> dict[str, Any]:
    """The entries of the configurations in display order; configurations without one are left out."""
    return {name: by_configuration[name] for name in names if by_configuration.get(name)}


def evaluation_notes(
    *,
    warnings: list[str],
    depth: int,
    embedded_text_note: str,
    run_files: bool,
    rerank: str | None,
    rerank_depth: int,
    qrels: str | None,
    extra_qrels: str | None,
    nugget_qrels: str | None,
    conversational: bool,
) -> list[str]:
    """The notes under an evaluation's tables: input warnings, how each configuration retrieves, and
    which judgments it is measured against (``nugget_qrels`` only when nugget measures were asked)."""
    notes = [f"Input warning: {warning}" for warning in warnings]
    notes += [
        (
            f"Each configuration retrieves the top {depth} documents per query; a judged query with no "
            "retrieved document counts as 0 on every measure."
        ),
        (
            "History modes: full = every earlier turn as User:/Agent: lines, then the question; last:K = the last K "
            "turns only; current = the question alone; rewrite = a model's self-contained rewrite (CQR); oracle = the "
            "benchmark's own self-contained rewrite."
        ),
        (
            "BM25: bm25s, Lucene scoring, k1 = 1.5, b = 0.75, over each document's title and text, lower-cased words, "
            "English stopwords removed, Snowball stemming. Dense: exact inner product of L2-normalized embeddings."
        ),
        embedded_text_note,
        (
            "Fusion (numpy; the same rankings and scores as ranx) after sorting each run by score, ties by document "
            "id: RRF with k = 60; combsum and wsum over min-max normalized scores."
        ),
    ]
    if run_files:
        notes.append(
            "Run files (configurations named by their file name) are measured as given, sorted by score; "
            "they are neither fused nor reranked."
        )
    if rerank:
        notes.append(f"+rerank: the top {rerank_depth} of the configuration re-scored by the cross-encoder {rerank}.")
    if qrels:
        notes.append(f"Relevance judgments are those of {qrels}, not the benchmark's.")
    if extra_qrels:
        notes.append(f"Relevance judgments include the extra ones in {extra_qrels}.")
    if nugget_qrels:
        notes.append(
            f"Coverage@k and alpha_nDCG@k (alpha 0.5 unless given) are measured against the nugget qrels "
            f"in {nugget_qrels}; a judged query without nugget judgments counts as 0 on them."
        )
    if not conversational:
        notes.append("The benchmark is single-turn: history modes other than oracle send the query text as is.")
    return notes
