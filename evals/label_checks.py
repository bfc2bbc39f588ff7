"""Checking a benchmark's turn labels (issue 22): pure functions of the judges' answers.

Which label a turn's check is about (:func:`checked_label`):

* ``unanswerable``: nothing in the corpus answers it. Each judge reads the retrievers' pool and
  names the chunks that answer; the label is *rejected* when the missing-gold vote rule holds for
  finding one (at least ``min_votes`` judges, and a strict majority, found a supporting chunk:
  a rejection claims an unlabelled answering chunk, which is what confirming missing gold
  claims). A smaller minority leaves the label confirmed and the turn *suspected*.
* ``underspecified``: the question fits at least two of its candidates (or, where the benchmark
  names none, two chunks of the retrievers' pool);
* ``multi-passage`` (an answerable turn with more than one gold): every gold contributes;
* ``partial``: the gold answers part of the question and not all of it, and no chunk of the
  retrievers' pool answers the part the reference answer says is missing.

For underspecified and multi-passage turns, and the partial turn's alignment, a judge accepts or
rejects the label and the strict majority of the judges decides (one judge alone decides for
itself): their rejections say the turn lacks the shape its label claims, not that the corpus
holds something unlabelled. A pooled chunk that answers a partial turn's missing part does claim
that: the missing-gold vote rule decides, as for unanswerable turns.

A per-turn check is ``{"turn", "label", "question", "against", "verdicts": {judge: verdict}}``;
:func:`decide` adds ``confirmed``, ``votes``, ``reason`` and ``chunks``, and
:func:`label_summary` aggregates them into ``audit.json``'s ``labels``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from benchsmith.evals.defaults import DEFAULT_MIN_VOTES
from benchsmith.evals.measures.audit_verdicts import is_confirmed

CHECKED_LABELS = ("unanswerable", "underspecified", "multi-passage", "partial")
# The alignment judge's scale (agents/judges.py): 3 = partly answers, 4 = answers with minor gaps.
PARTIAL_SCORES = range(3, 5)


def checked_label(answerability: str | None, gold_count: int) -> str | None:
    """The label a turn's check is about; None for an unlabelled turn and for a single-gold
    answerable one (the alignment judge already checks that its gold answers)."""
    if answerability in ("unanswerable", "underspecified", "partial"):
        return answerability
    if answerability == "answerable" and gold_count > 1:
        return "multi-passage"
    return None


def judge_rejects(label: str, verdict: Mapping[str, Any]) -> bool:
    """Whether one judge's verdict contradicts the label."""
    if label == "unanswerable":
        return bool(verdict["supporting"])
    if label == "underspecified":
        return len(verdict["fits"]) < 2
    if label == "multi-passage":
        return bool(verdict["idle"])
    if label == "partial":
        return _misaligned(verdict) or bool(verdict.get("supporting"))
    raise ValueError(f"no check for label {label!r}")


def _misaligned(verdict: Mapping[str, Any]) -> bool:
    """A partial turn's gold answers all of the question or none of it."""
    return verdict["score"] not in PARTIAL_SCORES


def decide(check: Mapping[str, Any], min_votes: int = DEFAULT_MIN_VOTES) -> dict[str, Any]:
    """The check with the judges' decision: ``confirmed``, ``votes`` (judges rejecting), ``reason``
    (why it is rejected, or suspected), ``chunks`` (the chunks involved, most votes first) and the
    rejecting judges' ``rationales``."""
    label, verdicts = check["label"], check["verdicts"]
    rejecting = [judge for judge, verdict in verdicts.items() if judge_rejects(label, verdict)]
    votes, judges = len(rejecting), len(verdicts)
    if label == "unanswerable":
        rejected = is_confirmed(votes, judges, min_votes)
    elif label == "partial":  # "supporting" is absent from checks recorded before the missing part was judged
        answered = sum(bool(verdict.get("supporting")) for verdict in verdicts.values())
        rejected = sum(_misaligned(verdict) for verdict in verdicts.values()) * 2 > judges or is_confirmed(
            answered, judges, min_votes
        )
    else:
        rejected = votes * 2 > judges
    chunks = _chunks_involved(label, [verdicts[judge] for judge in rejecting])
    reason = _reason(label, check, [verdicts[judge] for judge in rejecting], chunks) if votes else None
    return {
        **check,
        "confirmed": not rejected,
        "suspected": bool(votes) and not rejected,
        "votes": votes,
        "judges": judges,
        "reason": reason,
        "chunks": chunks,
        "rationales": {judge: verdicts[judge].get("rationale", "") for judge in rejecting},
    }


def _chunks_involved(label: str, rejecting: Sequence[Mapping[str, Any]]) -> list[str]:
    key = {"unanswerable": "supporting", "underspecified": "fits", "multi-passage": "idle", "partial": "supporting"}[
        label
    ]
    votes = Counter(chunk for verdict in rejecting for chunk in verdict.get(key, []))
    return sorted(votes, key=lambda chunk: (-votes[chunk], chunk))


def _reason(label: str, check: Mapping[str, Any], rejecting: Sequence[Mapping[str, Any]], chunks: Sequence[str]) -> str:
    if label == "unanswerable":
        return f"a chunk of the retrievers' pool answers it: {', '.join(chunks)}"
    if label == "underspecified":
        shown = "candidates" if check.get("against") == "candidates" else "pooled chunks"
        fits = ", ".join(chunks) or "none"
        return f"the question fits fewer than two of its {shown} (fits: {fits})"
    if label == "multi-passage":
        return f"a gold chunk does not contribute: {', '.join(chunks)}"
    reasons = []
    if scores := sorted(verdict["score"] for verdict in rejecting if _misaligned(verdict)):
        whole = (
            "the gold answers all of it"
            if min(scores) >= max(PARTIAL_SCORES) + 1
            else "the gold answers none of it"
            if max(scores) < min(PARTIAL_SCORES)
            else "the gold answers all or none of it"
        )
        reasons.append(
            f"{whole} (alignment {', '.join(map(str, scores))} of 5; partial is "
            f"{min(PARTIAL_SCORES)}-{max(PARTIAL_SCORES)})"
        )
    if chunks:
        reasons.append(
            f"a chunk of the retrievers' pool answers the part the reference answer says is missing: "
            f"{', '.join(chunks)}"
        )
    return "; ".join(reasons)


def label_summary(
    checks: Iterable[Mapping[str, Any]], unlabelled: int, not_checked: Mapping[str, int], threshold: float
) -> dict[str, Any]:
    """``audit.json``'s ``labels``: per label, turns checked, confirmed, rejected, suspected and
    the agreement (the share confirmed); the rejected turns; the labels whose agreement is below
    ``threshold``."""
    checks = list(checks)
    by_label: dict[str, dict[str, Any]] = {}
    for label in CHECKED_LABELS:
        mine = [check for check in checks if check["label"] == label]
        if not mine:
            continue
        confirmed = sum(check["confirmed"] for check in mine)
        by_label[label] = {
            "checked": len(mine),
            "confirmed": confirmed,
            "rejected": len(mine) - confirmed,
            "suspected": sum(check["suspected"] for check in mine),
            "agreement": confirmed / len(mine),
            "against_pool": sum(check["against"] == "pool" for check in mine),
        }
    rejected = [
        {
            key: check[key]
            for key in ("turn", "label", "question", "against", "reason", "chunks", "votes", "judges", "rationales")
            if key in check
        }
        for check in sorted(checks, key=lambda check: (check["label"], check["turn"]))
        if not check["confirmed"]
    ]
    return {
        "checked": len(checks),
        "unlabelled": unlabelled,
        "not_checked": dict(not_checked),
        "threshold": threshold,
        "by_label": by_label,
        "rejected": rejected,
        "below_threshold": [label for label, counts in by_label.items() if counts["agreement"] < threshold],
    }


def label_note(summary: Mapping[str, Any] | None) -> str | None:
    """The verdict's sentence on labels whose agreement is below the threshold, if any."""
    if not summary or not summary.get("below_threshold"):
        return None
    parts = [
        f"{label} {summary['by_label'][label]['agreement']:.0%} of {summary['by_label'][label]['checked']}"
        for label in summary["below_threshold"]
    ]
    return (
        f"The judges confirmed fewer turn labels than {summary['threshold']:.0%} for: {'; '.join(parts)} "
        "(see Turn labels); breakdowns by those labels are not to be trusted as they stand."
    )
