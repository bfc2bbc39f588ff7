"""The report of a configuration search (``benchsmith select``): ``selection.json`` for
programs, ``report.md`` and a self-contained ``report.html`` for people, rendered from one
document model (``evals.reports.document``), so both show the same numbers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchsmith.evals.reports import document, selection_plots

REPORT_FILES = document.ReportFileNames(results="selection.json", markdown="report.md", html="report.html")
K_COLUMNS_MAX = 10  # cutoffs shown in the precision/recall-at-k table (the JSON has all)


def selection_report_files(results: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """``selection.json``, ``report.md`` and ``report.html``: ``{kind: (file name, text)}``."""
    return document.render_report(results, build_document(results), REPORT_FILES)


def build_document(results: Mapping[str, Any]) -> document.Document:
    configurations = results["configurations"]
    shown = configurations[: max(1, int(results.get("curves_shown", 5)))]
    sections = [
        document.Section("Overview", [overview(results), best_callout(results)]),
        document.Section("Judgments", [judgments_summary(results["judgments"])]),
        document.Section(best_title(results.get("best")), best_spec(results)),
        document.Section(
            "Ranking",
            [
                "Configurations by PR-AUC over facts, best first; intervals are bootstrap intervals over the queries. "
                "F-beta is each configuration's best over k = 1..K (the k in brackets).",
                ranking_table(configurations, results["settings"]["betas"]),
            ],
        ),
        document.Section(
            "Precision–recall curves",
            [
                f"The {len(shown)} best configurations: precision@k against recall@k over facts, micro over the queries.",
                document.Plot(
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
            document.Section(
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
            document.Section(
                "Staged search",
                ["Each stage varied one dimension and kept its best level (PR-AUC).", stages_table(results["stages"])],
            )
        )
    sections.append(document.Section("Configurations", [configurations_table(configurations)]))
    if results.get("notes"):
        sections.append(document.Section("Notes", [document.BulletList(list(results["notes"]))]))
    return document.Document(f"Configuration selection: {results['queries']['count']} queries", sections)


def best_title(best: Mapping[str, Any] | None) -> str:
    if best is None:
        return "No winner: a tie"
    return (
        "The best configuration: your own retriever" if best.get("outside") else "The best configuration, ready to use"
    )


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


def best_callout(results: Mapping[str, Any]) -> document.Callout:
    top = results["configurations"][0]
    precision_first, recall_first = results["precision_first"], results["recall_first"]
    text = (
        f"PR-AUC {top['pr_auc']:.3f} ({interval_text(top['pr_auc_interval'])}). "
        f"{results['separation']['text']} "
        f"Precision first: {describe_pick(precision_first)}. Recall first: {describe_pick(recall_first)}."
    )
    if results.get("best") is None:
        return document.Callout(f"No winner: {', '.join(results['tied'])} are tied", text)
    return document.Callout(f"Best configuration: {top['name']}", text)


def describe_pick(pick: Mapping[str, Any]) -> str:
    return (
        f"{pick['configuration']} with its top {pick['k']} (F{pick['beta']:g} {pick['f_beta']:.3f}, "
        f"{interval_text(pick['interval'])})"
    )


def interval_text(interval: Mapping[str, Any] | None) -> str:
    if not interval or interval.get("low") is None:
        return "no interval: fewer than 2 queries"
    return f"{interval['low']:.3f}–{interval['high']:.3f}"


def judgments_summary(judgments: Mapping[str, Any]) -> document.BulletList:
    whole = judgments["whole_corpus_pairs"]
    share = judgments["pool_pairs"] / whole if whole else 0.0
    return document.BulletList(
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
    if best.get("outside"):
        return [
            f"{best['configuration']} is your own retriever (an outside configuration): none of select's "
            "configurations beat it on these queries, so there is nothing of select's to ship and no "
            "best-configuration.yaml was written."
        ]
    return [
        f"Saved as {best['space_file']} in the run directory: a strategy space of this one configuration, which "
        "benchsmith select --space takes as it is.",
        document.Code(best["yaml"].rstrip("\n")),
        f"Retriever spec (the --retriever grammar of benchsmith evaluate): {settings['retriever']}"
        + (f", embedder {best['embedder']}" if "dense" in settings["retriever"] else "")
        + f"; chunking {settings['chunking']}; hand the generator the top {settings['top_k']}.",
    ]


def ranking_table(configurations: Sequence[Mapping[str, Any]], betas: Sequence[float]) -> document.Table:
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
                document.Cell(str(rank)),
                document.Cell(c["name"]),
                document.Cell(
                    f"{c['pr_auc']:.3f}", bold=top is not None and round(c["pr_auc"], 3) == round(top, 3), numeric=True
                ),
                document.Cell(interval_text(c["pr_auc_interval"])),
                document.Cell(_value(c["precision_at_k"].get("1")), numeric=True),
                document.Cell(_value(c["precision_at_k"].get(depth)), numeric=True),
                document.Cell(_value(c["recall_at_k"].get(depth)), numeric=True),
                document.Cell(_value(c["recall_at_k_per_query_mean"].get(depth)), numeric=True),
                *[
                    document.Cell(f"{c['f_beta'][f'{beta:g}']['best']:.3f} ({c['f_beta'][f'{beta:g}']['best_k']})")
                    for beta in betas
                ],
                document.Cell("–" if c.get("best_beats_it") is None else f"{c['best_beats_it']:.0%}", numeric=True),
            ]
        )
    return document.Table(columns, rows)


def at_k_table(configurations: Sequence[Mapping[str, Any]]) -> document.Table:
    """Precision / recall at each k (micro) of the given configurations."""
    depth = max((len(c["precision_at_k"]) for c in configurations), default=0)
    cutoffs = [str(k) for k in range(1, depth + 1)][:K_COLUMNS_MAX]
    rows = [
        [
            document.Cell(c["name"]),
            *[
                document.Cell(
                    f"{c['precision_at_k'][k]:.2f} / {c['recall_at_k'][k]:.2f}"
                    if k in c["precision_at_k"]
                    else document.MISSING
                )
                for k in cutoffs
            ],
        ]
        for c in configurations
    ]
    return document.Table(["configuration (P@k / R@k)", *[f"k={k}" for k in cutoffs]], rows)


def main_effects_table(effects: Sequence[Mapping[str, Any]]) -> document.Table:
    rows = [
        [
            document.Cell(effect["dimension"]),
            document.Cell(str(effect["level"])),
            document.Cell(str(effect["configurations"]), numeric=True),
            document.Cell(f"{effect['mean']:.3f}", numeric=True),
            document.Cell(
                "reference"
                if effect["level"] == effect["reference"]
                else document.MISSING
                if effect["change"] is None
                else f"{effect['change']:+.3f}",
                numeric=True,
            ),
            document.Cell(str(effect["pairs"]), numeric=True),
        ]
        for effect in effects
    ]
    return document.Table(
        ["dimension", "level", "configurations", "mean PR-AUC", "change from the first level", "pairs"], rows
    )


def stages_table(stages: Sequence[Mapping[str, Any]]) -> document.Table:
    rows = [
        [
            document.Cell(str(int(stage["stage"]) + 1)),
            document.Cell(stage["dimension"]),
            document.Cell(", ".join(f"{level}: {value:.3f}" for level, value in stage["pr_auc"].items())),
            document.Cell(str(stage["chosen"]), bold=True),
        ]
        for stage in stages
    ]
    return document.Table(["stage", "dimension", "PR-AUC by level", "kept"], rows)


def configurations_table(configurations: Sequence[Mapping[str, Any]]) -> document.Table:
    dimensions = ["chunking", "retriever", "rewrite", "rerank", "filter", "top_k"]
    rows = [
        [
            document.Cell(c["name"]),
            *[document.Cell(str(c["settings"][d])) for d in dimensions],
            document.Cell(str(c.get("run_file", document.MISSING))),
        ]
        for c in configurations
    ]
    return document.Table(["configuration", *dimensions, "run file"], rows)


def _value(value: float | None) -> str:
    return document.MISSING if value is None else f"{value:.3f}"
