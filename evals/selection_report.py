"""The report of a configuration search (``benchsmith select``): ``selection.json`` for
programs, ``report.md`` and a self-contained ``report.html`` for people, rendered from one
document model (``evals.reports.document``), so both show the same numbers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchsmith.evals.reports import selection_plots
from benchsmith.evals.reports.document import (
    MISSING,
    BulletList,
    Callout,
    Cell,
    Code,
    Document,
    Plot,
    ReportFileNames,
    Section,
    Table,
    render_report,
)

REPORT_FILES = ReportFileNames(results="selection.json", markdown="report.md", html="report.html")
K_COLUMNS_MAX = 10  # cutoffs shown in the precision/recall-at-k table (the JSON has all)


def selection_report_files(results: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """``selection.json``, ``report.md`` and ``report.html``: ``{kind: (file name, text)}``."""
    return render_report(results, build_document(results), REPORT_FILES)


def build_document(results: Mapping[str, Any]) -> Document:
    configurations = results["configurations"]
    shown = configurations[: max(1, int(results.get("curves_shown", 5)))]
    sections = [
        Section("Overview", [overview(results), best_callout(results)]),
        Section("Judgments", [judgments_summary(results["judgments"])]),
        Section(
            "The best configuration, ready to use" if results.get("best") else "No winner: a tie", best_spec(results)
        ),
        Section(
            "Ranking",
            [
                "Configurations by PR-AUC over facts, best first; intervals are bootstrap intervals over the queries. "
                "F-beta is each configuration's best over k = 1..K (the k in brackets).",
                ranking_table(configurations, results["settings"]["betas"]),
            ],
        ),
        Section(
            "Precision–recall curves",
            [
                f"The {len(shown)} best configurations: precision@k against recall@k over facts, micro over the queries.",
                Plot(
                    "Precision against recall over facts at k = 1..K for the best configurations",
                    lambda: selection_plots.precision_recall_curves(
                        {c["name"]: (c["precision_at_k"], c["recall_at_k"]) for c in shown}
                    ),
                ),
                at_k_table(shown),
            ],
        ),
    ]
    effects = results.get("main_effects") or []
    if effects:
        sections.append(
            Section(
                "Main effects",
                [
                    "What changing only one dimension does to PR-AUC, on average: for each level, the mean change from the "
                    "dimension's first level over every pair of configurations that differ in that dimension alone "
                    "(pairs), and the mean PR-AUC of the configurations at that level.",
                    main_effects_table(effects),
                ],
            )
        )
    if results.get("stages"):
        sections.append(
            Section(
                "Staged search",
                ["Each stage varied one dimension and kept its best level (PR-AUC).", stages_table(results["stages"])],
            )
        )
    sections.append(Section("Configurations", [configurations_table(configurations)]))
    if results.get("notes"):
        sections.append(Section("Notes", [BulletList(list(results["notes"]))]))
    return Document(f"Configuration selection: {results['queries']['count']} queries", sections)


def overview(results: Mapping[str, Any]) -> str:
    queries, corpus, settings = results["queries"], results["corpus"], results["settings"]
    conversational = (
        f" ({queries['conversational']} with conversation history)" if queries.get("conversational") else ""
    )
    search = (
        "every combination (grid)"
        if settings["search"] == "grid"
        else f"a staged search over {', '.join(settings['order'])}"
    )
    return (
        f"{queries['count']:,} real queries{conversational} from {queries['path']}; corpus "
        f"{', '.join(corpus['sources'])} ({corpus['documents']:,} documents). {len(results['configurations'])} "
        f"configurations evaluated, {search}; judges: {', '.join(settings['judges'])}."
    )


def best_callout(results: Mapping[str, Any]) -> Callout:
    top = results["configurations"][0]
    precision_first, recall_first = results["precision_first"], results["recall_first"]
    text = (
        f"PR-AUC {top['pr_auc']:.3f} ({interval_text(top['pr_auc_interval'])}). "
        f"{results['separation']['text']} "
        f"Precision first: {describe_pick(precision_first)}. Recall first: {describe_pick(recall_first)}."
    )
    if results.get("best") is None:
        return Callout(f"No winner: {', '.join(results['tied'])} are tied", text)
    return Callout(f"Best configuration: {top['name']}", text)


def describe_pick(pick: Mapping[str, Any]) -> str:
    return (
        f"{pick['configuration']} with its top {pick['k']} (F{pick['beta']:g} {pick['f_beta']:.3f}, "
        f"{interval_text(pick['interval'])})"
    )


def interval_text(interval: Mapping[str, Any] | None) -> str:
    if not interval or interval.get("low") is None:
        return "no interval: fewer than 2 queries"
    return f"{interval['low']:.3f}–{interval['high']:.3f}"


def judgments_summary(judgments: Mapping[str, Any]) -> BulletList:
    whole = judgments["whole_corpus_pairs"]
    share = judgments["pool_pairs"] / whole if whole else 0.0
    return BulletList(
        [
            f"Pairs judged: {judgments['pool_pairs']:,} (query, chunk) pairs, the pool of every configuration's top K; "
            f"judging the whole corpus would take {judgments['queries']:,} queries × {judgments['distinct_chunks']:,} "
            f"distinct chunks = {whole:,} pairs ({share:.1%} of that was judged).",
            f"Verdicts: {judgments['model_verdicts']:,} asked of a model in this run, {judgments['stored_verdicts']:,} "
            f"reused from earlier runs (the verdict store), {judgments['free_verdicts']:,} from relevance labels or the "
            "offline baseline; "
            f"{judgments['batch_size']} pairs per call.",
            f"Relevant pairs: {judgments['relevant_pairs']:,}; distinct facts: {judgments['facts']:,}.",
            *([usage_text(judgments["usage"])] if judgments.get("usage") else []),
        ]
    )


def usage_text(usage: Mapping[str, Any]) -> str:
    """What the run's model calls (judges, fact matching, rewriting) cost; the dry run estimates it before."""
    return (
        f"Model calls of this run (judges, fact matching, query rewriting): {usage['calls']:,} "
        f"({usage['cached_calls']:,} from the response cache), tokens in/out "
        f"{usage['input_tokens']:,}/{usage['output_tokens']:,}, cost ${usage['cost_usd']:.4f}."
    )


def best_spec(results: Mapping[str, Any]) -> list[Any]:
    best = results["best"]
    if best is None:
        return [
            f"{results['separation']['text']} No best-configuration.yaml was written: naming one of the tied "
            "configurations would be a coin toss. Judge more queries, or compare them on other settings."
        ]
    settings = best["settings"]
    return [
        f"Saved as {best['space_file']} in the run directory: a strategy space of this one configuration, which "
        "benchsmith select --space takes as it is.",
        Code(best["yaml"].rstrip("\n")),
        f"Retriever spec (the --retriever grammar of benchsmith evaluate): {settings['retriever']}"
        + (f", embedder {best['embedder']}" if "dense" in settings["retriever"] else "")
        + f"; chunking {settings['chunking']}; hand the generator the top {settings['top_k']}.",
    ]


def ranking_table(configurations: Sequence[Mapping[str, Any]], betas: Sequence[float]) -> Table:
    columns = [
        "rank",
        "configuration",
        "PR-AUC",
        "95% interval",
        "P@1",
        "P@K",
        "R@K",
        "R@K per-query mean",
        *[f"best F{beta:g} (k)" for beta in betas],
        "best beats it",
    ]
    rows = []
    top = configurations[0]["pr_auc"] if configurations else None
    for rank, c in enumerate(configurations, start=1):
        depth = str(len(c["precision_at_k"]))
        rows.append(
            [
                Cell(str(rank)),
                Cell(c["name"]),
                Cell(f"{c['pr_auc']:.3f}", bold=round(c["pr_auc"], 3) == round(top, 3), numeric=True),
                Cell(interval_text(c["pr_auc_interval"])),
                Cell(_value(c["precision_at_k"].get("1")), numeric=True),
                Cell(_value(c["precision_at_k"].get(depth)), numeric=True),
                Cell(_value(c["recall_at_k"].get(depth)), numeric=True),
                Cell(_value(c["recall_at_k_per_query_mean"].get(depth)), numeric=True),
                *[
                    Cell(f"{c['f_beta'][f'{beta:g}']['best']:.3f} ({c['f_beta'][f'{beta:g}']['best_k']})")
                    for beta in betas
                ],
                Cell("–" if c.get("best_beats_it") is None else f"{c['best_beats_it']:.0%}", numeric=True),
            ]
        )
    return Table(columns, rows)


def at_k_table(configurations: Sequence[Mapping[str, Any]]) -> Table:
    """Precision / recall at each k (micro) of the given configurations."""
    depth = max((len(c["precision_at_k"]) for c in configurations), default=0)
    cutoffs = [str(k) for k in range(1, depth + 1)][:K_COLUMNS_MAX]
    rows = [
        [
            Cell(c["name"]),
            *[
                Cell(
                    f"{c['precision_at_k'][k]:.2f} / {c['recall_at_k'][k]:.2f}" if k in c["precision_at_k"] else MISSING
                )
                for k in cutoffs
            ],
        ]
        for c in configurations
    ]
    return Table(["configuration (P@k / R@k)", *[f"k={k}" for k in cutoffs]], rows)


def main_effects_table(effects: Sequence[Mapping[str, Any]]) -> Table:
    rows = [
        [
            Cell(effect["dimension"]),
            Cell(str(effect["level"])),
            Cell(str(effect["configurations"]), numeric=True),
            Cell(f"{effect['mean']:.3f}", numeric=True),
            Cell(
                "reference"
                if effect["level"] == effect["reference"]
                else MISSING
                if effect["change"] is None
                else f"{effect['change']:+.3f}",
                numeric=True,
            ),
            Cell(str(effect["pairs"]), numeric=True),
        ]
        for effect in effects
    ]
    return Table(["dimension", "level", "configurations", "mean PR-AUC", "change from the first level", "pairs"], rows)


def stages_table(stages: Sequence[Mapping[str, Any]]) -> Table:
    rows = [
        [
            Cell(str(int(stage["stage"]) + 1)),
            Cell(stage["dimension"]),
            Cell(", ".join(f"{level}: {value:.3f}" for level, value in stage["pr_auc"].items())),
            Cell(str(stage["chosen"]), bold=True),
        ]
        for stage in stages
    ]
    return Table(["stage", "dimension", "PR-AUC by level", "kept"], rows)


def configurations_table(configurations: Sequence[Mapping[str, Any]]) -> Table:
    dimensions = ["chunking", "retriever", "rewrite", "rerank", "filter", "top_k"]
    rows = [
        [Cell(c["name"]), *[Cell(str(c["settings"][d])) for d in dimensions], Cell(str(c.get("run_file", MISSING)))]
        for c in configurations
    ]
    return Table(["configuration", *dimensions, "run file"], rows)


def _value(value: float | None) -> str:
    return MISSING if value is None else f"{value:.3f}"
