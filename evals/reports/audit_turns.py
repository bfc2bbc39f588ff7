"""The audit report's sections that list turns (turn labels, ill-formed questions, the worst-aligned
instances, missing gold), each turn linked to its review page (`benchsmith review`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import quote

from benchsmith.evals.reports import document, figures

EXTRA_QRELS = "extra_qrels.tsv"  # the judges' confirmed candidates (graphs/audit writes them)
# The review page's address of one turn (benchsmith/pages/static/review.js opens the turn ?turn= names) at
# the address `benchsmith review` serves by default, so a report opened from its file links to it too.
DEFAULT_REVIEW_ADDRESS = "http://127.0.0.1:8766/"
REVIEW_TURN_LINK = DEFAULT_REVIEW_ADDRESS + "?turn={}"
TurnLink = Callable[[str], str | None]  # a turn's query id → its review page address, None where there is none


def turn_linker(review: Mapping[str, Any] | None) -> TurnLink:
    """Each listed turn's link to the review page: only a synthesis run's turns are reviewed."""
    if review is None:
        return lambda turn: None
    return lambda turn: REVIEW_TURN_LINK.format(quote(str(turn), safe=""))


def review_command(review: Mapping[str, Any]) -> str:
    """The command that serves the review page: the newest review resumed, or a first one."""
    resumed = f" --run-id {review['review_run']}" if review.get("review_run") else ""
    return f"benchsmith review {review['synthesis_run']}{resumed}"


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
        f"confirm{f', flagged below {figures.percent(threshold)}' if threshold is not None else ''}. What is checked:",
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
                        figures.percent(counts["agreement"])
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
                figures.by_judge(item.get("rationales") or {}),
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
            document.Cell(figures.decimal(item.get("alignment")), numeric=True),
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
        blocks += _judged_instance(
            instance,
            link,
            f"{rank}. {instance['instance']}: alignment {figures.decimal(instance.get('alignment'))}",
            f"Gold document {instance['gold_id']}:",
            excerpt="gold_excerpt",
            reasons="rationales",
        )
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
        blocks += _judged_instance(
            candidate,
            link,
            f"{rank}. {candidate['instance']}: {candidate['candidate_id']} ({status}, "
            f"{candidate['votes']} of {candidate['judges']} judges)",
            f"Candidate {candidate['candidate_id']}, in place of the labelled gold document {candidate['gold_id']}:",
            excerpt="candidate_excerpt",
            reasons="reasons",
        )
    return document.Section("Candidate missing gold documents", blocks)


def _judged_instance(
    item: Mapping[str, Any], link: TurnLink, heading: str, caption: str, *, excerpt: str, reasons: str
) -> list[document.Block]:
    """An instance as the judges read it: its heading (linked to its turn), the query, the document
    under ``caption`` (its ``excerpt`` field), and each judge's words (its ``reasons`` field)."""
    return [
        document.Subheading(heading, link=link(item["instance"])),
        "Query:",
        document.Quote(str(item["query"])),
        caption,
        document.Quote(str(item.get(excerpt, ""))),
        figures.by_judge(item.get(reasons) or {}),
    ]
