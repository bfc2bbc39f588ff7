"""What an audit's results say beside the measures (evals/measures/audit_verdicts.py): how its instances
were drawn, the notes that say how each figure was made, and the run's short summary (the audit
graph's output) read from the full results (``audit.json``)."""

from __future__ import annotations

from typing import Any

from benchsmith.evals.measures.audit_verdicts import NOISE_SCORE, vote_rule


def sampling_note(instances: int, population: int, seed: int) -> str:
    """How the audited instances were drawn, and what the intervals assume of them."""
    if instances < population:
        return (
            f"Audited a random sample of {instances:,} of {population:,} instances (seed {seed}); "
            "intervals include the finite-population correction."
        )
    return (
        f"Audited all {instances:,} instances; intervals treat them as a sample of the process that made the benchmark."
    )


def audit_notes(
    *,
    negatives: int,
    many_documents: int,
    min_votes: int,
    shortcuts_file: str,
    shortcut_turns: int,
    label_checks_file: str,
    label_pool_depth: int,
    labels_checked: bool,
    embedded_text_note: str,
) -> list[str]:
    """The notes under an audit's figures: instances, pools, noise, vote rule, shortcuts, turn labels."""
    return [
        (
            "Each instance is one judged query (for conversations, the current turn with its history); its gold "
            "document is its most relevant judged one."
        ),
        (
            f"Pools hold the gold document and {negatives} hard negatives, the best-ranked unjudged documents "
            "of BM25 and the dense retriever taken in turn; the gold's slot is balanced across instances."
        ),
        embedded_text_note,
        (
            f"Noise: an instance whose judge-averaged alignment is at most {NOISE_SCORE}, or whose question is "
            "ill-formed (a fragment, a keyword template, a heading path, markup or its leftovers, quoting markup "
            f"or a span found in at least {many_documents} documents). Suspected sparsity: a judge "
            f"picked a non-gold document. Vote rule: {vote_rule(min_votes)}; only confirmed "
            "documents go to extra_qrels.tsv."
        ),
        (
            f"Shortcuts ({shortcuts_file}) are measured without a model over every turn with a relevant document "
            f"({shortcut_turns:,}), not only the audited sample; query-only BM25 is measured as "
            "`benchsmith evaluate --retriever bm25 --history current` measures it."
        ),
        *(
            [
                (
                    f"Turn labels are checked on every labelled turn ({label_checks_file}): an unanswerable turn against "
                    f"each retriever's top {label_pool_depth} chunks, rejected by the missing-gold vote rule when "
                    "the judges find one that answers; the other labels by the judges' majority."
                )
            ]
            if labels_checked
            else []
        ),
    ]


def audit_summary(results: dict[str, Any], confirmed_missing: int, report_paths: dict[str, str]) -> dict[str, Any]:
    """The audit graph's output: the verdict, each dimension's mean, the counts of missing gold
    documents, ill-formed questions and flagged turns, from the full ``results``."""
    means = {name: values["mean"] for name, values in results["dimensions"].items()}
    means["gold_pick_rate"] = results["discriminability"]["gold_pick_rate"]
    shortcuts, gate = results["shortcuts"], results["quality_gate"]
    return {
        "instances": results["benchmark"]["instances"],
        "report": report_paths,
        "verdict": results["verdict"],
        "means": means,
        "confirmed_missing_gold": confirmed_missing,
        "suspected_missing_gold": len(results["missing_gold"]) - confirmed_missing,
        "ill_formed_questions": len(results["ill_formed"]),
        "shortcut_flags": shortcuts["flags"],
        "lexical_overlap": {key: shortcuts["lexical_overlap"][key] for key in ("mean", "median", "p90")},
        "label_agreement": {
            label: counts["agreement"] for label, counts in (results["labels"] or {}).get("by_label", {}).items()
        },
        "quality_gate": {
            "turns": gate["turns"],
            "flagged": gate["flagged"],
            "by_class": {klass: values["turns"] for klass, values in gate["classes"].items()},
            # the most used frame's share of the questions (evals/measures/question_frames.py)
            "top_frame_share": (gate.get("frames") or {}).get("top_share"),
            # Against the benchmark's newest review (`benchsmith review`): None when it has none.
            "reviewer_agreement": (results.get("review") or {}).get("agreement"),
        },
    }
