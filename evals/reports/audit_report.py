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

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import quote

from benchsmith.evals.measures import shortcuts
from benchsmith.evals.reports import audit_plots, document

AUDIT_FILES = document.ReportFileNames(results="audit.json", markdown="audit-report.md", html="audit-report.html")
EXTRA_QRELS = "extra_qrels.tsv"
# The review page's address of one turn (benchsmith/pages/static/review.js opens the turn ?turn= names),
# relative: the page runs where `benchsmith review` serves it (http://127.0.0.1:8766/ unless --host/--port).
REVIEW_TURN_LINK = "/?turn={}"
DEFAULT_REVIEW_ADDRESS = "http://127.0.0.1:8766/"
TurnLink = Callable[[str], str | None]  # a turn's query id → its review page address, None where there is none
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


def turn_linker(review: Mapping[str, Any] | None) -> TurnLink:
    """Each listed turn's link to the review page: only a synthesis run's turns are reviewed."""
    if review is None:
        return lambda turn: None
    return lambda turn: REVIEW_TURN_LINK.format(quote(str(turn), safe=""))


def review_command(review: Mapping[str, Any]) -> str:
    """The command that serves the review page: the newest review resumed, or a first one."""
    resumed = f" --run-id {review['review_run']}" if review.get("review_run") else ""
    return f"benchsmith review {review['synthesis_run']}{resumed}"


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
            f"The turn ids below link to the turn on the review page ({REVIEW_TURN_LINK.format('ID')}, under the "
            f"page's address: {DEFAULT_REVIEW_ADDRESS} by default); the page must be running: "
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
                    document.Cell(_percent(item["rate"])),
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
    blocks += reviewer_agreement_blocks(review)
    return document.Section("Quality gate", blocks)


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
        ("agreement", _percent(agreement["agreement"])),
        ("gate's recall on the rejections", _percent(agreement["recall"])),
        ("gate's precision on the rejections", _percent(agreement["precision"])),
        ("Cohen's κ", _decimal(agreement["cohen_kappa"])),
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
            _decimal(overlap.get("mean")),
            _decimal(reference["mean"]),
            f"> {shortcuts.TRIVIAL_MEAN_OVERLAP:.2f}: lexically_trivial",
        ),
        ("lexical overlap, median", _decimal(overlap.get("median")), _decimal(reference["median"]), none),
        ("lexical overlap, 90th percentile", _decimal(overlap.get("p90")), _decimal(reference["p90"]), none),
        (
            "BM25 R@10, question alone",
            _decimal(current.get("R@10")),
            _decimal(shortcuts.REFERENCE_QUERY_ONLY["R@10"]),
            none,
        ),
        (
            "BM25 RR@10, question alone",
            _decimal(current.get("RR@10")),
            _decimal(shortcuts.REFERENCE_QUERY_ONLY["RR@10"]),
            none,
        ),
    ]
    if rewrite:
        rows += [
            ("BM25 R@10, rewrite alone", _decimal(rewrite.get("R@10")), document.MISSING, none),
            ("BM25 RR@10, rewrite alone", _decimal(rewrite.get("RR@10")), document.MISSING, none),
        ]
    rows += [
        (
            "answer leak rate",
            _percent(summary.get("answer_leak_rate")),
            document.MISSING,
            f"> {shortcuts.ANSWER_LEAK_LIMIT:.0%}: answer_leak",
        ),
        (
            "ill-formed rate",
            _percent((summary.get("ill_formed") or {}).get("rate")),
            _percent(shortcuts.REFERENCE_ILL_FORMED_RATE),
            f"> {shortcuts.ILL_FORMED_LIMIT:.0%}: ill_formed",
        ),
    ]
    if conversational:
        rows.append(
            (
                "history gain (BM25 nDCG@10, full history − question alone)",
                _signed(summary.get("history_gain")),
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
            document.Cell(_decimal(dimension["mean"]), numeric=True),
            document.Cell(_interval(dimension["ci_low"], dimension["ci_high"], _decimal), numeric=True),
            document.Cell(f"{dimension['n']:,}", numeric=True),
            *(document.Cell(_decimal(dimension["per_judge_mean"].get(judge)), numeric=True) for judge in shown),
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
    interval = _interval(discriminability["ci_low"], discriminability["ci_high"], _percent)
    rows = [
        ("gold pick rate", f"{_percent(discriminability['gold_pick_rate'])} (95% CI {interval})"),
        ("instances tested", f"{tested:,}"),
        ("suspected sparsity", _count_of(discriminability["suspected_sparsity"], tested)),
        ("confirmed missing gold", _count_of(discriminability["confirmed_missing_gold"], tested)),
        ("pool size", f"{pool_size} (the gold document and {pool_size - 1} hard negatives)"),
    ]
    return document.Table(
        ["measure", "value"], [[document.Cell(measure), document.Cell(value)] for measure, value in rows]
    )


def position_bias_summary(position_bias: Mapping[str, Any]) -> str:
    return (
        f"Position check on {position_bias['checked']:,} picks, each made again with the pool rotated: "
        f"the judges picked the same document {_percent(position_bias['same_document'])} of the time, and the "
        f"same position {_percent(position_bias['same_position'])} of the time. The same document means the "
        "pick follows the content; the same position means it followed the slot instead, a position bias."
    )


def agreement_section(agreement: Mapping[str, Any], dimensions: Mapping[str, Mapping[str, Any]]) -> document.Section:
    rows = [
        [
            document.Cell(dimensions.get(key, {}).get("label", key)),
            document.Cell(_decimal(correlation.get("pearson")), numeric=True),
            document.Cell(_decimal(correlation.get("spearman")), numeric=True),
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
            f"On the discriminability pick, Fleiss' κ is {_decimal(choice.get('fleiss_kappa'))} "
            f"over {choice.get('judges', document.MISSING)} judges (1 = full agreement, 0 = no more than chance)."
        )
    return document.Section("Agreement between judges", blocks)


LABEL_CHECKS = {
    "unanswerable": "no chunk of the retrievers' pool answers it (rejected by the missing-gold vote rule)",
    "underspecified": "the question fits at least two of its candidates (or pooled chunks, where it names none)",
    "multi-passage": "every gold chunk contributes to the answer",
    "partial": "the gold answers part of the question, not all of it (alignment 3-4 of 5)",
}


def turn_labels_section(labels: Mapping[str, Any], link: TurnLink) -> document.Section:
    """Per checked label: turns checked, confirmed, rejected and the agreement; then each turn
    whose label the judges reject, with the reason and the chunks involved."""
    by_label = labels["by_label"]
    threshold = labels.get("threshold")
    skipped = [f"{labels.get('unlabelled', 0):,} unlabelled turns skipped"] + [
        f"{count:,} {label} turns not checked here"
        + (" (single gold: the alignment judge checks it)" if label == "answerable" else "")
        for label, count in sorted((labels.get("not_checked") or {}).items())
    ]
    blocks: list[document.Block] = [
        "Each judge checks every labelled turn's label; agreement is the share of a label's turns the judges "
        f"confirm{f', flagged below {_percent(threshold)}' if threshold is not None else ''}. What is checked:",
        document.BulletList([f"{label}: {meaning}" for label, meaning in LABEL_CHECKS.items() if label in by_label]),
        document.Table(
            ["label", "checked", "confirmed", "rejected", "suspected", "agreement", "judged against the pool"],
            [
                [
                    document.Cell(label),
                    document.Cell(f"{counts['checked']:,}", numeric=True),
                    document.Cell(f"{counts['confirmed']:,}", numeric=True),
                    document.Cell(f"{counts['rejected']:,}", numeric=True),
                    document.Cell(f"{counts['suspected']:,}", numeric=True),
                    document.Cell(
                        _percent(counts["agreement"])
                        + (" (below)" if label in labels.get("below_threshold", []) else ""),
                        numeric=True,
                    ),
                    document.Cell(f"{counts['against_pool']:,}", numeric=True),
                ]
                for label, counts in by_label.items()
            ],
        ),
        "Suspected: some judges rejected the label, too few to reject it. Judged against the pool: an "
        "underspecified turn whose benchmark names no candidates is judged against the retrievers' top chunks. "
        + "; ".join(skipped)[:1].upper()
        + "; ".join(skipped)[1:]
        + ".",
    ]
    rejected = labels.get("rejected") or []
    if rejected:
        blocks.append(f"Turns whose label the judges reject ({len(rejected):,}):")
        for rank, item in enumerate(rejected, start=1):
            blocks += [
                document.Subheading(
                    f"{rank}. {item['turn']}: {item['label']} rejected ({item['votes']} of {item['judges']} judges)",
                    link=link(item["turn"]),
                ),
                "Query:",
                document.Quote(str(item["question"])),
                f"Reason: {item['reason']}." + (f" Chunks: {', '.join(item['chunks'])}." if item.get("chunks") else ""),
                _by_judge(item.get("rationales") or {}),
            ]
    else:
        blocks.append("The judges reject no turn's label.")
    return document.Section("Turn labels", blocks)


def ill_formed_section(flagged: Sequence[Mapping[str, Any]], link: TurnLink) -> document.Section:
    rows = [
        [
            document.Cell(str(item["instance"]), link=link(item["instance"])),
            document.Cell(str(item["question"])),
            document.Cell("; ".join(item["reasons"])),
            document.Cell(_decimal(item.get("alignment")), numeric=True),
        ]
        for item in flagged
    ]
    return document.Section(
        "Ill-formed questions",
        [
            f"{len(flagged):,} questions are ill-formed: fragments, keyword templates, heading paths, markup or its "
            "leftovers, or a quote of markup or of a span that many documents contain (the question could be about "
            "any of them). They count as noise in the "
            "verdict, whatever alignment the judges gave them.",
            document.Table(["instance", "question", "reason", "alignment"], rows),
        ],
    )


def worst_section(worst: Sequence[Mapping[str, Any]], link: TurnLink) -> document.Section:
    blocks: list[document.Block] = [
        "The instances whose gold document the judges found least able to answer the query, "
        "lowest alignment first, with each judge's rationale."
    ]
    for rank, instance in enumerate(worst, start=1):
        blocks += [
            document.Subheading(
                f"{rank}. {instance['instance']}: alignment {_decimal(instance.get('alignment'))}",
                link=link(instance["instance"]),
            ),
            "Query:",
            document.Quote(str(instance["query"])),
            f"Gold document {instance['gold_id']}:",
            document.Quote(str(instance.get("gold_excerpt", ""))),
            _by_judge(instance.get("rationales") or {}),
        ]
    return document.Section("Worst-aligned instances", blocks)


def missing_gold_section(candidates: Sequence[Mapping[str, Any]], link: TurnLink) -> document.Section:
    # Confirmed first, then by votes; sorted() is stable, so ties keep the audit's order.
    ordered = sorted(candidates, key=lambda candidate: (not candidate["confirmed"], -candidate["votes"]))
    confirmed = sum(bool(candidate["confirmed"]) for candidate in candidates)
    blocks: list[document.Block] = [
        "Documents the judges picked over the gold one in the discriminability test, confirmed candidates "
        "(picked by a majority of the judges) first.",
        (
            f"The confirmed candidates ({confirmed:,}) are in {EXTRA_QRELS}; to count them as relevant when "
            f"evaluating, run `benchsmith evaluate BENCH --extra-qrels {EXTRA_QRELS}`."
            if confirmed
            else f"No candidate is confirmed by a majority of the judges, so none is in {EXTRA_QRELS}."
        ),
    ]
    for rank, candidate in enumerate(ordered, start=1):
        status = "confirmed" if candidate["confirmed"] else "not confirmed"
        blocks += [
            document.Subheading(
                f"{rank}. {candidate['instance']}: {candidate['candidate_id']} ({status}, "
                f"{candidate['votes']} of {candidate['judges']} judges)",
                link=link(candidate["instance"]),
            ),
            "Query:",
            document.Quote(str(candidate["query"])),
            f"Candidate {candidate['candidate_id']}, in place of the labelled gold document {candidate['gold_id']}:",
            document.Quote(str(candidate.get("candidate_excerpt", ""))),
            _by_judge(candidate.get("reasons") or {}),
        ]
    return document.Section("Candidate missing gold documents", blocks)


def _by_judge(texts: Mapping[str, str]) -> document.BulletList:
    return document.BulletList([f"{judge}: {text}" for judge, text in texts.items()])


def _decimal(value: float | None) -> str:
    """A score or a coefficient, to two decimals."""
    return document.MISSING if _undefined(value) else f"{value:.2f}"


def _signed(value: float | None) -> str:
    return document.MISSING if _undefined(value) else f"{value:+.2f}"


def _percent(value: float | None) -> str:
    return document.MISSING if _undefined(value) else f"{value:.1%}"


def _undefined(value: float | None) -> bool:
    # A correlation or a kappa of judges that never vary is NaN: undefined, not a number to show.
    return value is None or math.isnan(value)


def _interval(low: float | None, high: float | None, show: Callable[[float | None], str]) -> str:
    return f"{show(low)}–{show(high)}"


def _count_of(count: int, total: int) -> str:
    return f"{count:,} ({_percent(count / total)} of the instances)" if total else f"{count:,}"
