"""Aggregating an audit's verdicts (MTR-Eval): pure functions of the judges' answers.

Inputs are the run's files as dictionaries:

* ``judgments``: ``{instance: {judge: verdict}}``, a verdict being ``{"alignment": {"score",
  "rationale"}, "choice": {"slot", "doc_id", "rationale"}, "choice_rotated"?: …,
  "faithfulness"?: …, "quality"?: …}``;
* ``instances``: ``{instance: {"gold_id", "pool", "rotated_pool"?}}``.

The vote rule for missing gold: a non-gold document a judge preferred is a *suspected*
missing gold document; it is *confirmed* only when at least ``min_votes`` judges (default 2)
and a strict majority of the instance's judges picked it. One judge alone therefore never
confirms anything: its picks are exactly what an audit must not trust unchecked.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from benchsmith.evals.defaults import DEFAULT_MIN_VOTES, MIN_RANKING_QUERIES
from benchsmith.evals.measures.agreement import fleiss_kappa, score_correlations
from benchsmith.evals.measures.intervals import mean_interval, proportion_interval

Judgments = Mapping[str, Mapping[str, Mapping[str, Any]]]
Instances = Mapping[str, Mapping[str, Any]]

SCORE_DIMENSIONS = {
    "alignment": "query–evidence alignment",
    "faithfulness": "answer–evidence faithfulness",
    "quality": "answer quality",
}
NOISE_SCORE = 2  # an instance whose mean alignment is at most this has a gold that does not answer
WORST_SHOWN = 10
RELIABLE_RATE, UNRELIABLE_RATE = 0.05, 0.20


def is_confirmed(votes: int, judges: int, min_votes: int = DEFAULT_MIN_VOTES) -> bool:
    """At least ``min_votes`` judges, and a strict majority of them, picked the candidate."""
    return votes >= min_votes and votes * 2 > judges


def vote_rule(min_votes: int = DEFAULT_MIN_VOTES) -> str:
    """The rule in words, for the report."""
    return (
        f"a non-gold document is confirmed missing gold when at least {min_votes} judges, and a majority of "
        "them, picked it; otherwise it is only suspected"
    )


def scores_by_judge(judgments: Judgments, dimension: str) -> dict[str, dict[str, int]]:
    """``{judge: {instance: score}}`` for one dimension."""
    scores: dict[str, dict[str, int]] = {}
    for instance, verdicts in judgments.items():
        for judge, verdict in verdicts.items():
            if dimension in verdict:
                scores.setdefault(judge, {})[instance] = verdict[dimension]["score"]
    return scores


def instance_means(judgments: Judgments, dimension: str) -> dict[str, float]:
    """Each instance's score on one dimension, averaged over its judges."""
    means = {}
    for instance, verdicts in judgments.items():
        values = [verdict[dimension]["score"] for verdict in verdicts.values() if dimension in verdict]
        if values:
            means[instance] = sum(values) / len(values)
    return means


def _nearest(value: float) -> int:
    return math.floor(value + 0.5)  # half up: 2.5 is 3, not Python's banker's 2


def dimension_summaries(judgments: Judgments, judges: list[str], population: int | None) -> dict[str, Any]:
    """Per scored dimension: mean with a 95% interval, distribution of instance means, per-judge means."""
    dimensions = {}
    for name, label in SCORE_DIMENSIONS.items():
        means = instance_means(judgments, name)
        if not means:
            continue
        interval = mean_interval(list(means.values()), population)
        by_judge = scores_by_judge(judgments, name)
        dimensions[name] = {
            "label": label,
            "mean": interval.mean,
            "ci_low": interval.low,
            "ci_high": interval.high,
            "n": interval.n,
            "distribution": {
                str(score): sum(1 for value in means.values() if _nearest(value) == score) for score in range(1, 6)
            },
            "per_judge_mean": {
                judge: sum(by_judge[judge].values()) / len(by_judge[judge]) for judge in judges if by_judge.get(judge)
            },
        }
    return dimensions


def majority_pick(verdicts: Mapping[str, Mapping[str, Any]]) -> tuple[str, int]:
    """The document most judges picked (ties by id) and its votes."""
    votes = Counter(verdict["choice"]["doc_id"] for verdict in verdicts.values())
    doc_id = min(votes, key=lambda candidate: (-votes[candidate], candidate))
    return doc_id, votes[doc_id]


def missing_gold(
    judgments: Judgments,
    instances: Instances,
    describe: Callable[[str, str], dict[str, Any]],
    min_votes: int = DEFAULT_MIN_VOTES,
) -> list[dict[str, Any]]:
    """Non-gold documents judges preferred, confirmed by the vote rule; ``describe(instance,
    candidate)`` adds what a reader needs to check one (the query, an excerpt)."""
    candidates = []
    for instance, verdicts in sorted(judgments.items()):
        gold = instances[instance]["gold_id"]
        picked: dict[str, dict[str, str]] = {}
        for judge, verdict in verdicts.items():
            if verdict["choice"]["doc_id"] != gold:
                picked.setdefault(verdict["choice"]["doc_id"], {})[judge] = verdict["choice"]["rationale"]
        for candidate, reasons in picked.items():
            candidates.append(
                {
                    "instance": instance,
                    "gold_id": gold,
                    "candidate_id": candidate,
                    **describe(instance, candidate),
                    "votes": len(reasons),
                    "judges": len(verdicts),
                    "confirmed": is_confirmed(len(reasons), len(verdicts), min_votes),
                    "reasons": reasons,
                }
            )
    return sorted(candidates, key=lambda item: (not item["confirmed"], -item["votes"], item["instance"]))


def discriminability(
    judgments: Judgments, instances: Instances, population: int | None, missing: list[dict[str, Any]]
) -> dict[str, Any]:
    """How often the judges' majority picked the gold out of its pool, and where golds and picks sat."""
    majorities = {instance: majority_pick(verdicts) for instance, verdicts in judgments.items()}
    gold_picked = sum(
        1
        for instance, (doc_id, votes) in majorities.items()
        if doc_id == instances[instance]["gold_id"] and votes * 2 > len(judgments[instance])
    )
    interval = proportion_interval(gold_picked, len(judgments), population)
    pool_size = max((len(record["pool"]) for record in instances.values()), default=0)
    slots = Counter(str(instances[i]["pool"].index(instances[i]["gold_id"]) + 1) for i in judgments)
    picks = Counter(str(verdict["choice"]["slot"]) for verdicts in judgments.values() for verdict in verdicts.values())
    return {
        "gold_pick_rate": interval.mean,
        "ci_low": interval.low,
        "ci_high": interval.high,
        "n": interval.n,
        "suspected_sparsity": len({item["instance"] for item in missing}),
        "confirmed_missing_gold": sum(1 for item in missing if item["confirmed"]),
        "pool_size": pool_size,
        "gold_position_counts": {str(slot): slots.get(str(slot), 0) for slot in range(1, pool_size + 1)},
        "choice_position_counts": {str(slot): picks.get(str(slot), 0) for slot in range(1, pool_size + 1)},
        "position_bias": position_bias(judgments),
    }


def position_bias(judgments: Judgments) -> dict[str, Any] | None:
    """With the pool rotated, did the judge keep its document (content) or its slot (position)?"""
    pairs = [
        (verdict["choice"], verdict["choice_rotated"])
        for verdicts in judgments.values()
        for verdict in verdicts.values()
        if "choice_rotated" in verdict
    ]
    if not pairs:
        return None
    return {
        "checked": len(pairs),
        "same_document": sum(first["doc_id"] == second["doc_id"] for first, second in pairs) / len(pairs),
        "same_position": sum(first["slot"] == second["slot"] for first, second in pairs) / len(pairs),
    }


def agreement(judgments: Judgments, instances: Instances, judges: list[str]) -> dict[str, Any]:
    """Pearson and Spearman between judges per scored dimension; Fleiss' kappa on gold-or-not picks."""
    result: dict[str, Any] = {}
    for name in SCORE_DIMENSIONS:
        scores = scores_by_judge(judgments, name)
        if len(scores) > 1:
            correlations = score_correlations(scores)
            result[name] = {"pearson": correlations["pearson"], "spearman": correlations["spearman"]}
    # Fleiss' kappa on "picked the gold or not": which other document is a separate question.
    ratings = [
        [
            "gold" if verdicts[judge]["choice"]["doc_id"] == instances[instance]["gold_id"] else "other"
            for judge in judges
        ]
        for instance, verdicts in judgments.items()
        if all(judge in verdicts for judge in judges)
    ]
    result["choice"] = {"fleiss_kappa": fleiss_kappa(ratings), "judges": len(judges)}
    return result


def worst_instances(
    judgments: Judgments, describe: Callable[[str], dict[str, Any]], shown: int = WORST_SHOWN
) -> list[dict[str, Any]]:
    """The instances with the lowest mean alignment, with every judge's rationale."""
    means = instance_means(judgments, "alignment")
    lowest = sorted(means, key=lambda instance: (means[instance], instance))[:shown]
    return [
        {
            "instance": instance,
            **describe(instance),
            "alignment": means[instance],
            "rationales": {judge: verdict["alignment"]["rationale"] for judge, verdict in judgments[instance].items()},
        }
        for instance in lowest
    ]


def ill_formed_summary(
    judgments: Judgments, flagged: Mapping[str, list[str]], question: Callable[[str], str]
) -> list[dict[str, Any]]:
    """The audited instances whose question is ill-formed, with the reasons, and whether their
    alignment already counts them as noise (so the verdict counts each instance once)."""
    means = instance_means(judgments, "alignment")
    return [
        {
            "instance": instance,
            "question": question(instance),
            "reasons": list(reasons),
            "alignment": means.get(instance),
            "low_alignment": means.get(instance, NOISE_SCORE + 1) <= NOISE_SCORE,
        }
        for instance, reasons in sorted(flagged.items())
        if instance in judgments
    ]


def overall_verdict(
    judgments: Judgments,
    discriminability_summary: Mapping[str, Any],
    noise_flags: int = 0,
    shortcut_flags: Sequence[str] = (),
    label_note: str | None = None,
    gate_note: str | None = None,
    gate_over_limit: bool = False,
    queries: int | None = None,
) -> dict[str, str]:
    """reliable / usable with caveats / unreliable, from the noise and sparsity rates and the
    shortcut flags (evals/measures/shortcuts.py).

    Noise counts instances whose mean alignment is at most ``NOISE_SCORE`` plus
    ``noise_flags`` more instances flagged as ill-formed (and not already counted). A benchmark
    with any shortcut flag is never reliable: judges grade each question against its gold, and
    a benchmark a retriever can game (questions that copy their gold, answers leaked in the
    questions) passes that grading while it ranks retrievers wrongly; it is at best usable with
    caveats. ``label_note`` (evals/measures/label_checks.py) says which turn labels the judges confirm too
    rarely: such a benchmark is not reliable either, for its breakdowns by label. ``gate_note``
    (evals/quality_gate/summary.py) says what the offline quality gate flagged: any flag makes the
    benchmark at best usable with caveats, and ``gate_over_limit`` (more than 20% of the turns
    flagged) makes it unreliable, whatever the judges said. So do fewer than ``MIN_RANKING_QUERIES`` ``queries``
    (the benchmark's, audited or not; None: not known)."""
    audited = max(len(judgments), 1)
    low_alignment = sum(1 for mean in instance_means(judgments, "alignment").values() if mean <= NOISE_SCORE)
    noise = (low_alignment + noise_flags) / audited
    sparsity = discriminability_summary["confirmed_missing_gold"] / audited
    worst = max(noise, sparsity)
    label = "reliable" if worst <= RELIABLE_RATE else "unreliable" if worst > UNRELIABLE_RATE else "usable with caveats"
    if (shortcut_flags or label_note or gate_note) and label == "reliable":
        label = "usable with caveats"
    too_few = queries is not None and queries < MIN_RANKING_QUERIES
    if gate_over_limit or too_few:
        label = "unreliable"
    explanation = (
        f"{noise:.0%} of the audited instances are noise (a gold document judged not to answer, alignment ≤ "
        f"{NOISE_SCORE}, or an ill-formed question); for {sparsity:.0%} the judges confirmed an unlabelled "
        f"document as missing gold (sparsity); judges picked the gold document in "
        f"{discriminability_summary['gold_pick_rate']:.0%} of pools. Thresholds: reliable when both rates "
        f"are at most {RELIABLE_RATE:.0%}, unreliable when either exceeds {UNRELIABLE_RATE:.0%}."
    )
    if shortcut_flags:
        explanation += (
            f" Shortcut flags: {', '.join(shortcut_flags)}; a benchmark with a shortcut flag is never "
            "reliable (see Shortcuts)."
        )
    if label_note:
        explanation += f" {label_note}"
    if gate_note:
        explanation += f" {gate_note}"
    if too_few:
        explanation += (
            f" The benchmark has {queries:,} {'query' if queries == 1 else 'queries'}, fewer than {MIN_RANKING_QUERIES}: "
            "too few to rank retrievers, since which one wins changes with another set of questions of that "
            "size (Voorhees and Buckley, 2002)."
        )
    return {"label": label, "explanation": explanation}
