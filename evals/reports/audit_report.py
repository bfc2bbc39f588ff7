"""The report of a benchmark audit: ``audit.json`` for programs, ``audit-report.md`` and a
self-contained ``audit-report.html`` for people, rendered from one document model.

An audit grades a benchmark with an ensemble of LLM judges: whether each gold document answers
its query (alignment), whether judges pick the gold out of a pool of hard negatives
(discriminability: a miss suggests an unlabelled answering document), and, when the
benchmark has answers, their faithfulness to the gold and their quality. The report leads
with the verdict and then gives the evidence for it, down to the judges' own words on the
worst instances.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchsmith.evals.measures import shortcuts
from benchsmith.evals.reports import audit_plots, document, figures
from benchsmith.evals.reports.audit_turns import (
    DEFAULT_REVIEW_ADDRESS,
    REVIEW_TURN_LINK,
    TurnLink,
    ill_formed_section,
    missing_gold_section,
    review_command,
    turn_labels_section,
    turn_linker,
    worst_section,
)

AUDIT_FILES = document.ReportFileNames(results="audit.json", markdown="audit-report.md", html="audit-report.html")
# What each judged dimension asks, for readers who meet the audit here first.
DIMENSION_QUESTIONS = {
    "alignment": "does the gold document answer the query in its conversational context? "
    "Low scores point to annotation noise.",
    "faithfulness": "is the benchmark's answer supported by the gold document?",
    "quality": "is the benchmark's answer a good answer to the query?",
}


def audit_report_files(results: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """``audit.json``, ``audit-report.md`` and ``audit-report.html``: ``{kind: (file name, text)}``."""
    return document.render_report(results, build_audit_document(results), AUDIT_FILES)


def build_audit_document(results: Mapping[str, Any]) -> document.Document:
    """The sections of an audit report; those without data (one judge: no agreement; no
    flagged instances) are left out."""
    dimensions = results.get("dimensions") or {}
    judges = list(results.get("settings", {}).get("judges", []))
    review = results.get("review")
    link = turn_linker(review)
    sections = [verdict_section(results["verdict"]), overview_section(results)]
    if results.get("shortcuts"):
        sections.append(shortcuts_section(results["shortcuts"], bool(results["benchmark"].get("conversational")), link))
    if results.get("quality_gate"):
        sections.append(quality_gate_section(results["quality_gate"], review, link))
    if dimensions:
        sections.append(scores_section(dimensions, judges))
    if results.get("discriminability"):
        sections.append(discriminability_section(results["discriminability"]))
    if results.get("agreement"):
        sections.append(agreement_section(results["agreement"], dimensions))
    if (results.get("labels") or {}).get("checked"):
        sections.append(turn_labels_section(results["labels"], link))
    if results.get("ill_formed"):
        sections.append(ill_formed_section(results["ill_formed"], link))
    if results.get("worst"):
        sections.append(worst_section(results["worst"], link))
    if results.get("missing_gold"):
        sections.append(missing_gold_section(results["missing_gold"], link))
    if results.get("notes"):
        sections.append(document.Section("Notes", [document.BulletList(list(results["notes"]))]))
    return document.Document(f"Benchmark audit: {results['benchmark']['name']}", sections)


def verdict_section(verdict: Mapping[str, Any]) -> document.Section:
    label = str(verdict["label"])
    return document.Section(
        "Verdict", [document.Callout(label[:1].upper() + label[1:], str(verdict.get("explanation", "")))]
    )


def overview_section(results: Mapping[str, Any]) -> document.Section:
    blocks: list[document.Block] = [benchmark_summary(results["benchmark"])]
    if results.get("sampling"):
        blocks.append(str(results["sampling"]))
    blocks.append(settings_summary(results.get("settings", {})))
    if results.get("review"):
        blocks.append(
            f"The turn ids below link to the turn on the review page ({REVIEW_TURN_LINK.format('ID')}: "
            f"`benchsmith review`'s default address, {DEFAULT_REVIEW_ADDRESS}); the page must be running: "
            f"`{review_command(results['review'])}`."
        )
    return document.Section("Benchmark and sample", blocks)


def benchmark_summary(benchmark: Mapping[str, Any]) -> str:
    traits = [
        "conversational" if benchmark.get("conversational") else "single-turn",
        "with answers" if benchmark.get("has_answers") else "without answers",
    ]
    return (
        f"Benchmark {benchmark['name']} ({', '.join(traits)}): {benchmark['queries']:,} queries, "
        f"{benchmark['instances']:,} instances, {benchmark['documents']:,} documents; "
        f"read from {benchmark.get('path', 'an unnamed path')}."
    )


def settings_summary(settings: Mapping[str, Any]) -> str:
    judges = list(settings.get("judges", []))
    parts = [f"Judges ({len(judges)}): {', '.join(judges) or document.MISSING}"]
    if "negatives" in settings:
        parts.append(f"discriminability pools of the gold document and {settings['negatives']} hard negatives")
    parts.append(
        "position check on (each pool judged again, rotated)" if settings.get("position_check") else "no position check"
    )
    return "; ".join(parts) + "."


def shortcuts_section(summary: Mapping[str, Any], conversational: bool, link: TurnLink) -> document.Section:
    """What a retriever can exploit without understanding the questions, beside the human
    reference (evals/measures/shortcuts.py), and the ill-formed questions found."""
    flags = list(summary.get("flags") or [])
    overlap = summary["lexical_overlap"]
    blocks: list[document.Block] = [
        "Measured without a model over every turn with a relevant document "
        f"({summary['turns']:,}). Lexical overlap is the share of a question's content words (stemmed) found in "
        "its gold passage: questions that copy their gold let BM25 find it without understanding them. "
        "Query-only retrieval is BM25 with the question alone (as `benchsmith evaluate --retriever bm25 --history "
        "current`). The human reference is the hand-written stdlib questions of data/stdlib-validity.jsonl.",
        document.Callout(
            "Shortcuts flagged" if flags else "No shortcut flagged",
            "; ".join(f"{flag}: {shortcuts.FLAG_MEANINGS[flag]}" for flag in flags)
            if flags
            else "No figure crosses its limit: no shortcut found that a retriever could exploit.",
        ),
        shortcuts_table(summary, conversational),
    ]
    if overlap.get("histogram"):
        blocks.append(
            document.Plot(
                "Grouped bars of the share of turns in each lexical overlap bin from 0 to 1, this benchmark beside the "
                "human stdlib questions; counts on the bars",
                lambda: audit_plots.overlap_histograms(
                    overlap["histogram"], shortcuts.REFERENCE_OVERLAP_HISTOGRAM, "stdlib human questions"
                ),
            )
        )
    examples = (summary.get("ill_formed") or {}).get("examples") or []
    if examples:
        flagged = summary["ill_formed"].get("count", len(examples))
        blocks += [
            f"Ill-formed questions, the first {len(examples)} of {flagged:,}:",
            document.Table(
                ["turn", "question", "reason"],
                [
                    [
                        document.Cell(str(item["turn"]), link=link(item["turn"])),
                        document.Cell(str(item["question"])),
                        document.Cell("; ".join(item["reasons"])),
                    ]
                    for item in examples
                ],
            ),
        ]
    return document.Section("Shortcuts", blocks)


def quality_gate_section(
    summary: Mapping[str, Any], review: Mapping[str, Any] | None, link: TurnLink
) -> document.Section:
    """The offline quality gate's flags per rubric class, with examples (evals/quality_gate/), and its
    agreement with the benchmark's reviewer where there is a review."""
    share, bound = summary["flagged_share"], summary["max_flagged_share"]
    blocks: list[document.Block] = [
        f"Every turn ({summary['turns']:,}) read without a model for the reading rubric's broken classes "
        "(data/readings/RUBRIC.md): a question no user would ask, a topic that is no thing, a reply that answers "
        "something else, a referent nothing names, a fake ambiguity, an unanswerable turn the corpus answers, a "
        "question that copies its passage. The rules were calibrated on readers' verdicts of generated turns.",
        document.Callout(
            "Over the bound: never usable" if summary["over_limit"] else "Under the bound",
            f"{summary['flagged']:,} of {summary['turns']:,} turns flagged ({share:.0%}); a benchmark with more "
            f"than {bound:.0%} flagged is never called usable.",
        ),
        document.Table(
            ["class", "turns", "rate"],
            [
                [
                    document.Cell(klass.replace("_", " ")),
                    document.Cell(f"{item['turns']:,}"),
                    document.Cell(figures.percent(item["rate"])),
                ]
                for klass, item in summary["classes"].items()
            ],
        ),
    ]
    examples = [(klass, example) for klass, item in summary["classes"].items() for example in item["examples"]]
    if examples:
        blocks += [
            "Examples:",
            document.Table(
                ["class", "turn", "question", "why"],
                [
                    [
                        document.Cell(klass.replace("_", " ")),
                        document.Cell(str(example["turn"]), link=link(example["turn"])),
                        document.Cell(str(example["question"])),
                        document.Cell(str(example["why"])),
                    ]
                    for klass, example in examples
                ],
            ),
        ]
    blocks += frame_blocks(summary.get("frames"), link)
    blocks += reviewer_agreement_blocks(review)
    return document.Section("Quality gate", blocks)


def frame_blocks(frames: Mapping[str, Any] | None, link: TurnLink) -> list[document.Block]:
    """How the questions spread over their frames (evals/measures/question_frames.py), with the
    questions of each frame above the cap; nothing for a gate file written before frames were read."""
    if not frames or not frames["questions"]:
        return []
    line = (
        f"Question frames: {frames['frames']:,} among {frames['questions']:,} questions; the most used, "
        f"'{frames['top_frame']}', holds {frames['top_share']:.0%} (users' questions keep each under "
        f"{frames['cap']:.0%})."
    )
    if not frames["above_cap"]:
        return [line]
    return [
        line,
        document.Table(
            ["frame", "questions", "share", "turn", "question"],
            [
                [
                    document.Cell(item["frame"]),
                    document.Cell(f"{item['questions']:,}"),
                    document.Cell(figures.percent(item["share"])),
                    document.Cell(str(example["turn"]), link=link(example["turn"])),
                    document.Cell(str(example["question"])),
                ]
                for item in frames["above_cap"]
                for example in item["examples"]
            ],
        ),
    ]


def reviewer_agreement_blocks(review: Mapping[str, Any] | None) -> list[document.Block]:
    """The gate against the reviewer (evals/quality_gate/reader_agreement.py), or the one line that says
    why there is none."""
    if review is None:
        return ["No review to compare the gate with: only a synthesis run's turns are reviewed (`benchsmith review`)."]
    agreement = review.get("agreement")
    if not agreement:
        return [
            f"No review of the run {review['synthesis_run']} to compare the gate with: "
            f"`{review_command(review)}` reads its turns in the browser."
        ]
    reviewers = ", ".join(review.get("reviewers") or []) or document.MISSING
    rows = [
        ("turns both read", f"{agreement['turns']:,}"),
        ("rejected by the reviewer", f"{agreement['reader_broken']:,}"),
        ("flagged by the gate", f"{agreement['gate_flagged']:,}"),
        ("both", f"{agreement['both_broken']:,}"),
        ("agreement", figures.percent(agreement["agreement"])),
        ("gate's recall on the rejections", figures.percent(agreement["recall"])),
        ("gate's precision on the rejections", figures.percent(agreement["precision"])),
        ("Cohen's κ", figures.decimal(agreement["cohen_kappa"])),
    ]
    return [
        f"Against the review {review['review_run']} ({reviewers}; {review.get('reviewed', 0):,} turns with a "
        "verdict): a rejected turn is broken for the reviewer, an accepted or edited one is not. Recall is the "
        "share of the rejected turns the gate flags, precision the share of the flagged turns the reviewer "
        "rejected; κ corrects the agreement for chance (1 = full agreement, 0 = no more than chance).",
        document.Table(
            ["gate against the reviewer", "value"],
            [[document.Cell(name), document.Cell(value, numeric=True)] for name, value in rows],
        ),
    ]


def shortcuts_table(summary: Mapping[str, Any], conversational: bool) -> document.Table:
    """Figure × this benchmark, the human reference and the limit that raises a flag."""
    overlap, reference = summary["lexical_overlap"], shortcuts.REFERENCE_OVERLAP
    bm25 = summary["query_only"]["bm25"]
    current, rewrite = bm25.get("current") or {}, bm25.get("rewrite") or {}
    none = "reported only"
    rows = [
        (
            "lexical overlap, mean",
            figures.decimal(overlap.get("mean")),
            figures.decimal(reference["mean"]),
            f"> {shortcuts.TRIVIAL_MEAN_OVERLAP:.2f}: lexically_trivial",
        ),
        ("lexical overlap, median", figures.decimal(overlap.get("median")), figures.decimal(reference["median"]), none),
        (
            "lexical overlap, 90th percentile",
            figures.decimal(overlap.get("p90")),
            figures.decimal(reference["p90"]),
            none,
        ),
        (
            "BM25 R@10, question alone",
            figures.decimal(current.get("R@10")),
            figures.decimal(shortcuts.REFERENCE_QUERY_ONLY["R@10"]),
            none,
        ),
        (
            "BM25 RR@10, question alone",
            figures.decimal(current.get("RR@10")),
            figures.decimal(shortcuts.REFERENCE_QUERY_ONLY["RR@10"]),
            none,
        ),
    ]
    if rewrite:
        rows += [
            ("BM25 R@10, rewrite alone", figures.decimal(rewrite.get("R@10")), document.MISSING, none),
            ("BM25 RR@10, rewrite alone", figures.decimal(rewrite.get("RR@10")), document.MISSING, none),
        ]
    rows += [
        (
            "answer leak rate",
            figures.percent(summary.get("answer_leak_rate")),
            document.MISSING,
            f"> {shortcuts.ANSWER_LEAK_LIMIT:.0%}: answer_leak",
        ),
        (
            "ill-formed rate",
            figures.percent((summary.get("ill_formed") or {}).get("rate")),
            figures.percent(shortcuts.REFERENCE_ILL_FORMED_RATE),
            f"> {shortcuts.ILL_FORMED_LIMIT:.0%}: ill_formed",
        ),
    ]
    if conversational:
        rows.append(
            (
                "history gain (BM25 nDCG@10, full history − question alone)",
                figures.signed(summary.get("history_gain")),
                document.MISSING,
                f"≤ {shortcuts.HISTORY_FREE_GAIN:.2f}: history_free",
            )
        )
    return document.Table(
        ["figure", "this benchmark", "human reference", "flag when"],
        [
            [
                document.Cell(name),
                document.Cell(value, numeric=True),
                document.Cell(human, numeric=True),
                document.Cell(limit),
            ]
            for name, value, human, limit in rows
        ],
    )


def scores_section(dimensions: Mapping[str, Mapping[str, Any]], judges: Sequence[str]) -> document.Section:
    questions = [
        f"{dimension['label']}: {DIMENSION_QUESTIONS[key]}"
        for key, dimension in dimensions.items()
        if key in DIMENSION_QUESTIONS
    ]
    blocks: list[document.Block] = [
        "Each instance's score is the mean of the judges' scores from 1 to 5 (5 best); the table gives the "
        "mean over the instances with its 95% confidence interval, and each judge's own mean.",
    ]
    if questions:
        blocks.append(document.BulletList(questions))
    blocks += [
        scores_table(dimensions, judges),
        document.Plot(
            "Bar charts of how many instances got each score from 1 to 5 (the judges' mean, rounded), "
            "one per dimension",
            lambda: audit_plots.score_distributions(dimensions),
        ),
    ]
    return document.Section("Scores", blocks)


def scores_table(dimensions: Mapping[str, Mapping[str, Any]], judges: Sequence[str]) -> document.Table:
    """Dimensions × mean, interval, n and one mean per judge."""
    # Judges in the settings' order, then any the settings did not list.
    shown = list(dict.fromkeys([*judges, *(judge for d in dimensions.values() for judge in d["per_judge_mean"])]))
    rows = [
        [
            document.Cell(dimension["label"]),
            document.Cell(figures.decimal(dimension["mean"]), numeric=True),
            document.Cell(figures.interval(dimension["ci_low"], dimension["ci_high"], figures.decimal), numeric=True),
            document.Cell(f"{dimension['n']:,}", numeric=True),
            *(document.Cell(figures.decimal(dimension["per_judge_mean"].get(judge)), numeric=True) for judge in shown),
        ]
        for dimension in dimensions.values()
    ]
    return document.Table(["dimension", "mean", "95% CI", "n", *(f"mean by {judge}" for judge in shown)], rows)


def discriminability_section(discriminability: Mapping[str, Any]) -> document.Section:
    pool_size = discriminability["pool_size"]
    blocks: list[document.Block] = [
        f"Each judge was shown the gold document among {pool_size - 1} hard negatives, shuffled, and picked the "
        "document that best answers the query. A pick other than the gold suggests sparsity: a document that "
        "answers but is not labelled. A non-gold document picked by a majority of the judges is a confirmed "
        "candidate missing gold.",
        discriminability_table(discriminability),
        document.Plot(
            "Grouped bars of the share of instances whose gold document was shown at each position of the pool, "
            "beside the share of the judges' picks at that position; counts on the bars",
            lambda: audit_plots.position_counts(
                discriminability["gold_position_counts"], discriminability["choice_position_counts"], pool_size
            ),
        ),
    ]
    if discriminability.get("position_bias"):
        blocks.append(position_bias_summary(discriminability["position_bias"]))
    return document.Section("Evidence completeness (discriminability)", blocks)


def discriminability_table(discriminability: Mapping[str, Any]) -> document.Table:
    tested, pool_size = discriminability["n"], discriminability["pool_size"]
    interval = figures.interval(discriminability["ci_low"], discriminability["ci_high"], figures.percent)
    rows = [
        ("gold pick rate", f"{figures.percent(discriminability['gold_pick_rate'])} (95% CI {interval})"),
        ("instances tested", f"{tested:,}"),
        ("suspected sparsity", figures.count_of(discriminability["suspected_sparsity"], tested)),
        ("confirmed missing gold", figures.count_of(discriminability["confirmed_missing_gold"], tested)),
        ("pool size", f"{pool_size} (the gold document and {pool_size - 1} hard negatives)"),
    ]
    return document.Table(
        ["measure", "value"], [[document.Cell(measure), document.Cell(value)] for measure, value in rows]
    )


def position_bias_summary(position_bias: Mapping[str, Any]) -> str:
    return (
        f"Position check on {position_bias['checked']:,} picks, each made again with the pool rotated: "
        f"the judges picked the same document {figures.percent(position_bias['same_document'])} of the time, and the "
        f"same position {figures.percent(position_bias['same_position'])} of the time. The same document means the "
        "pick follows the content; the same position means it followed the slot instead, a position bias."
    )


def agreement_section(agreement: Mapping[str, Any], dimensions: Mapping[str, Mapping[str, Any]]) -> document.Section:
    rows = [
        [
            document.Cell(dimensions.get(key, {}).get("label", key)),
            document.Cell(figures.decimal(correlation.get("pearson")), numeric=True),
            document.Cell(figures.decimal(correlation.get("spearman")), numeric=True),
        ]
        for key, correlation in agreement.items()
        if key != "choice"
    ]
    blocks: list[document.Block] = [
        "How far the judges agree: the correlation of their per-instance scores "
        "(1 = the same ranking of instances, 0 = unrelated)."
    ]
    if rows:
        blocks.append(document.Table(["dimension", "Pearson r", "Spearman ρ"], rows))
    if agreement.get("choice"):
        choice = agreement["choice"]
        blocks.append(
            f"On the discriminability pick, Fleiss' κ is {figures.decimal(choice.get('fleiss_kappa'))} "
            f"over {choice.get('judges', document.MISSING)} judges (1 = full agreement, 0 = no more than chance)."
        )
    return document.Section("Agreement between judges", blocks)
