"""Does a benchmark rank retriever configurations as the user's own labelled questions do?

* Kendall's τ-b between the configurations' mean scores on the two sets (Kendall, 1945, "The
  treatment of ties in ranking problems", Biometrika 33(3):239–251), computed by
  ``scipy.stats.kendalltau(variant="b")`` with its p-value (the test of τ = 0). Over n
  configurations, with n_c concordant and n_d discordant pairs, n_0 = n(n − 1)/2, and t_i, u_j
  the sizes of the groups of tied values in the first and the second set,

      τ_b = (n_c − n_d) / √((n_0 − n_1)(n_0 − n_2)),   n_1 = Σ_i t_i(t_i − 1)/2,   n_2 = Σ_j u_j(u_j − 1)/2.

  1: the same order; 0: unrelated; −1: reversed. This is how synthetic test collections are
  validated against human ones (e.g. Rahmani et al., 2024, "SynDL"; Voorhees, 2000, for τ
  between system rankings).
* Its uncertainty: a percentile bootstrap over the queries of both sets (Efron and Tibshirani,
  1993, ch. 13), drawn by ``scipy.stats.bootstrap`` (as evals.measures.intervals.bootstrap_interval):
  each resample draws each set's queries with replacement, independently, recomputes every
  configuration's mean on both sets and τ-b between them; the interval is
  evals.measures.intervals.percentile_interval of those τ-b. Its draw stays apart from
  evals.measures.intervals.bootstrap_interval because it resamples two samples of different sizes at once
  and a statistic of both (τ-b), not a mean of one; its resamples (``--bootstrap``, 1,000) are
  its own, the README's figures were computed with them.
* Whether the human set's queries separate two configurations at all: for each adjacent pair of
  the human ranking and the synthetic ranking's top two, the paired bootstrap interval of their
  mean per-query difference on the human set (evals/measures/separability.py); a pair whose interval
  contains 0 is not separated, and the verdict says so for a top pair.
* Each judge's agreement with the human labels on (query, chunk) pairs: Cohen's κ and
  Krippendorff's α (nominal), from evals.measures.agreement, with the 2×2 confusion matrix.

Per-query values come first (a queries × configurations matrix per set), means after.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from benchsmith.evals.defaults import DEFAULT_BOOTSTRAP, DEFAULT_CONFIDENCE
from benchsmith.evals.measures.agreement import cohen_kappa, krippendorff_alpha_nominal
from benchsmith.evals.measures.intervals import Interval, percentile_interval
from benchsmith.evals.measures.separability import Separation, adjacent_pairs

AGREES_TAU = 0.6  # τ at or above this, with an interval above 0 and the same best configuration: "agrees"
WEAK_TAU = 0.2  # τ above this: "weak agreement"; at or below it: "disagrees"
TIE_TOLERANCE = 1e-9  # scores closer than this are one rank


@dataclass(frozen=True)
class RankCorrelation:
    tau: float | None  # None where undefined: fewer than 2 configurations, or either set's scores all equal
    p_value: float | None


def kendall_tau_b(human: Sequence[float], synthetic: Sequence[float]) -> RankCorrelation:
    """Kendall's τ-b and scipy's p-value between two score vectors over the same configurations
    (module docstring)."""
    if len(human) != len(synthetic):
        raise ValueError(f"τ needs scores of the same configurations, got {len(human)} and {len(synthetic)}")
    tau = _tau_b(np.asarray(human, dtype=float), np.asarray(synthetic, dtype=float))
    if tau is None:
        return RankCorrelation(None, None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        p_value = float(stats.kendalltau(human, synthetic, variant="b").pvalue)
    return RankCorrelation(tau, None if math.isnan(p_value) else p_value)


def _tau_b(first: np.ndarray, second: np.ndarray) -> float | None:
    if len(first) < 2 or np.ptp(first) == 0 or np.ptp(second) == 0:
        return None
    tau = float(stats.kendalltau(first, second, variant="b").statistic)
    return None if math.isnan(tau) else tau


def tau_interval(
    human: np.ndarray,
    synthetic: np.ndarray,
    resamples: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Interval:
    """Percentile bootstrap interval of τ-b (module docstring). ``human`` and ``synthetic``: the
    per-query values, queries × configurations (the same configurations, in the same order).
    ``mean`` is τ-b of the full sets; ``n`` the resamples where τ-b was defined (a resample whose
    means are all equal on one set has none, and is left out). Bounds are None with fewer than 2
    queries in a set or fewer than 2 defined resamples. The same values and seed give the same interval."""
    human, synthetic = np.asarray(human, dtype=float), np.asarray(synthetic, dtype=float)
    if human.ndim != 2 or synthetic.ndim != 2 or human.shape[1] != synthetic.shape[1]:
        raise ValueError("per-query values must be queries × configurations, with the same configurations")
    tau = _tau_b(human.mean(axis=0), synthetic.mean(axis=0)) if len(human) and len(synthetic) else None
    if len(human) < 2 or len(synthetic) < 2:
        return Interval(tau, None, None, 0)

    def resampled_tau(human_rows: np.ndarray, synthetic_rows: np.ndarray) -> float:
        value = _tau_b(human[human_rows.astype(int)].mean(axis=0), synthetic[synthetic_rows.astype(int)].mean(axis=0))
        return math.nan if value is None else value

    # The samples are row indices, so scipy resamples whole queries (rows) of each set independently.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns on a degenerate distribution; the bounds below say it
        result = stats.bootstrap(
            (np.arange(len(human)), np.arange(len(synthetic))),
            resampled_tau,
            paired=False,
            vectorized=False,
            n_resamples=resamples,
            confidence_level=confidence,
            method="percentile",
            rng=np.random.default_rng(seed),
        )
    distribution = np.asarray(result.bootstrap_distribution, dtype=float)
    defined = distribution[~np.isnan(distribution)]
    # The percentile interval, over the resamples where τ is defined.
    return percentile_interval(tau, defined, len(defined), confidence)


def paired_configurations(
    synthetic: Sequence[Mapping[str, Any]], human: Sequence[Mapping[str, Any]], match_history: bool
) -> list[tuple[str, str]]:
    """``(synthetic configuration, its human counterpart)`` in the synthetic evaluation's order:
    the same retriever and reranking (and history, when both sets were evaluated with the same
    modes), or the same run file."""

    def key(entry: Mapping[str, Any], with_history: bool) -> tuple[Any, ...]:
        if str(entry["retriever"]).startswith("run file"):
            return ("run file", entry["name"])
        return (entry["retriever"], entry["rerank"], entry["history"] if with_history else None)

    human_by_key = {key(entry, match_history): entry["name"] for entry in human}
    return [
        (entry["name"], human_by_key[key(entry, match_history)])
        for entry in synthetic
        if key(entry, match_history) in human_by_key
    ]


def per_query_matrix(
    per_query: Mapping[str, Mapping[str, Mapping[str, float]]], configurations: Sequence[str], measure: str
) -> np.ndarray:
    """Queries × configurations of ``measure``, the queries every configuration was measured on."""
    queries = sorted(set.intersection(*(set(per_query[name]) for name in configurations))) if configurations else []
    return np.array(
        [[per_query[name][query][measure] for name in configurations] for query in queries], dtype=float
    ).reshape(len(queries), len(configurations))


def separation_pairs(human: Mapping[str, float], synthetic_order: Sequence[str]) -> list[tuple[str, str, str]]:
    """The ``(first, second, ranking)`` pairs whose separation on the human set is reported: each
    adjacent pair of the human ranking by ``human`` (``"yours i–i+1"``), and the synthetic
    ranking's top two (``synthetic_order``: the configurations best first on the synthetic set,
    by their names on the human set) where the human ranking does not pair them already."""
    pairs = [
        (first, second, f"yours {rank}–{rank + 1}")
        for rank, (first, second) in enumerate(adjacent_pairs(human), start=1)
    ]
    top = list(dict.fromkeys(synthetic_order))[:2]
    if len(top) == 2 and not any({first, second} == set(top) for first, second, _ in pairs):
        pairs.append((top[0], top[1], "synthetic 1–2"))
    return pairs


def top_not_separated(
    found: Sequence[Separation], human: Mapping[str, float], synthetic_order: Sequence[str]
) -> list[Separation]:
    """The pairs of ``found`` that are the top two of either ranking and are not separated."""
    tops = [set(adjacent_pairs(human)[0]) if len(human) > 1 else set(), set(list(dict.fromkeys(synthetic_order))[:2])]
    return [pair for pair in found if not pair.separated and {pair.first, pair.second} in tops]


def configuration_rows(
    pairs: Sequence[tuple[str, str]],
    synthetic_entries: Mapping[str, Mapping[str, Any]],
    human_entries: Mapping[str, Mapping[str, Any]],
    human_means: Mapping[str, float],
    synthetic_means: Mapping[str, float],
) -> list[dict[str, Any]]:
    """A row per ``(synthetic, human)`` configuration pair (``*_entries``: each evaluation's
    configurations by name): its name on each set (``name`` on the synthetic set,
    ``human_configuration``) and the history mode each ran with, a ``label`` naming both, and its
    score and competition rank on each set (``*_means`` keyed by the synthetic set's names)."""
    human_ranks, synthetic_ranks = competition_ranks(human_means), competition_ranks(synthetic_means)
    rows = []
    for synthetic, human in pairs:
        synthetic_entry, human_entry = synthetic_entries[synthetic], human_entries[human]
        rows.append(
            {
                "name": synthetic,
                "human_configuration": human,
                "label": configuration_label(synthetic_entry, human_entry),
                "synthetic_history": synthetic_entry["history"],
                "human_history": human_entry["history"],
                "human": human_means[synthetic],
                "synthetic": synthetic_means[synthetic],
                "human_rank": human_ranks[synthetic],
                "synthetic_rank": synthetic_ranks[synthetic],
            }
        )
    return rows


def configuration_label(synthetic: Mapping[str, Any], human: Mapping[str, Any]) -> str:
    """One name for a configuration on both sets: its name where both ran it alike, else its
    retriever with the history mode of each, e.g. ``bm25 (yours @full, synthetic @oracle)``."""
    if synthetic["name"] == human["name"]:
        return str(synthetic["name"])
    retriever = f"{synthetic['retriever']}{'+rerank' if synthetic['rerank'] else ''}"
    return f"{retriever} (yours @{human['history']}, synthetic @{synthetic['history']})"


def competition_ranks(scores: Mapping[str, float]) -> dict[str, int]:
    """Competition ranks, 1 = best; scores within ``TIE_TOLERANCE`` share a rank."""
    return {name: 1 + sum(other > score + TIE_TOLERANCE for other in scores.values()) for name, score in scores.items()}


def ranked_first(scores: Mapping[str, float]) -> list[str]:
    """The configurations ranked first (several when tied), in the given order."""
    return [name for name, rank in competition_ranks(scores).items() if rank == 1]


def top1_agrees(human: Mapping[str, float], synthetic: Mapping[str, float]) -> bool:
    """True when a configuration ranked first on the human set is also ranked first on the synthetic one."""
    return bool(set(ranked_first(human)) & set(ranked_first(synthetic)))


@dataclass(frozen=True)
class Verdict:
    """The comparison in words: ``label`` (agrees, weak agreement, disagrees, undetermined) and
    ``text``, the reasons, which do not repeat the label."""

    label: str
    text: str

    def to_json(self) -> dict[str, str]:
        return {"label": self.label, "text": self.text}


def verdict(
    human: Mapping[str, float],
    synthetic: Mapping[str, float],
    tau: float | None,
    interval: Interval,
    unseparated: Sequence[Separation] = (),
    human_names: Mapping[str, str] | None = None,
) -> Verdict:
    """The comparison in words. "agrees": τ ≥ AGREES_TAU, the interval's low bound above 0 and the
    same configuration first; "weak agreement": τ > WEAK_TAU otherwise; "disagrees": τ ≤ WEAK_TAU;
    "undetermined": τ undefined (all scores equal on one set). ``human`` and ``synthetic`` are
    keyed alike (by the synthetic set's names); ``human_names`` gives each configuration's name on
    the human set, where it ran otherwise (another history mode), so that each set's first is named
    as it ran there. The text ends saying which top pairs the human set's queries do not separate
    (``unseparated``, from :func:`top_not_separated`)."""
    said = _verdict(human, synthetic, tau, interval, human_names or {})
    if unseparated and said.label != "undetermined":
        return Verdict(said.label, said.text + "; " + "; ".join(_not_separated(pair) for pair in unseparated))
    return said


def _not_separated(pair: Separation) -> str:
    which = "your questions'" if pair.ranking.startswith("yours") else "the synthetic benchmark's"
    bounds = (
        f", 95% interval [{pair.low:+.3f}, {pair.high:+.3f}]"
        if pair.low is not None and pair.high is not None
        else ", no interval"
    )
    return (
        f"your {pair.queries} questions do not separate {which} top two, {pair.first} and {pair.second} "
        f"(difference {pair.difference or 0.0:+.3f}{bounds})"
    )


def _verdict(
    human: Mapping[str, float],
    synthetic: Mapping[str, float],
    tau: float | None,
    interval: Interval,
    human_names: Mapping[str, str],
) -> Verdict:
    first_human = _named([human_names.get(name, name) for name in ranked_first(human)])
    top = (
        f"the synthetic benchmark ranks {_named(ranked_first(synthetic))} first, your questions rank {first_human} "
        "first"
    )
    if tau is None:
        return Verdict(
            "undetermined", "every configuration scores the same on one of the sets, so there is no order to compare"
        )
    described = f"τ-b = {tau:+.2f}" + (
        f", 95% interval [{interval.low:+.2f}, {interval.high:+.2f}]"
        if interval.low is not None and interval.high is not None
        else ""
    )
    same_top = top1_agrees(human, synthetic)
    both = _both_first(human, synthetic, human_names)
    if tau >= AGREES_TAU and interval.low is not None and interval.low > 0 and same_top:
        return Verdict(
            "agrees",
            f"the synthetic benchmark orders the configurations as your questions do "
            f"({described}), and both rank {both} first",
        )
    if tau > WEAK_TAU:
        why = (
            "no interval: too few queries to resample"
            if interval.low is None
            else "the interval reaches 0 or below"
            if interval.low <= 0
            else "τ is moderate"
            if tau < AGREES_TAU
            else ""
        )
        detail = "; ".join(part for part in (why, "" if same_top else top) if part)
        return Verdict(
            "weak agreement",
            f"the synthetic benchmark orders the configurations only partly as your "
            f"questions do ({described}){': ' + detail if detail else ''}",
        )
    return Verdict(
        "disagrees",
        f"{top} ({described})"
        if not same_top
        else f"both rank {both} first, but the other configurations are ordered differently ({described})",
    )


def _both_first(human: Mapping[str, float], synthetic: Mapping[str, float], human_names: Mapping[str, str]) -> str:
    """The configurations both sets rank first, each named as it ran on each set where that differs."""
    common = [name for name in ranked_first(synthetic) if name in set(ranked_first(human))]
    return _named(
        [
            name if human_names.get(name, name) == name else f"{name} ({human_names[name]} on your questions)"
            for name in common
        ]
    )


def _named(names: Sequence[str]) -> str:
    """Configurations tied for first, by name: a few joined by " = ", many counted."""
    if len(names) <= 3:
        return " = ".join(names)
    return f"{len(names)} tied configurations ({', '.join(names[:3])}, …)"


def relevance_agreement(human: Sequence[bool], judge: Sequence[bool]) -> dict[str, Any]:
    """A judge's relevant / not relevant labels against the human ones on the same pairs:
    Cohen's κ, Krippendorff's α (nominal, the two raters as coders), and the confusion matrix
    ``{human label: {judge label: pairs}}`` with labels "relevant" and "not relevant"."""
    if len(human) != len(judge):
        raise ValueError(f"labels of the same pairs needed, got {len(human)} and {len(judge)}")
    names = {True: "relevant", False: "not relevant"}
    confusion = {
        names[h]: {
            names[j]: sum(1 for a, b in zip(human, judge) if bool(a) == h and bool(b) == j) for j in (True, False)
        }
        for h in (True, False)
    }
    return {
        "pairs": len(human),
        "agreement": (sum(a == b for a, b in zip(human, judge)) / len(human)) if human else None,
        "cohen_kappa": cohen_kappa(list(human), list(judge)),
        "krippendorff_alpha": krippendorff_alpha_nominal([[a, b] for a, b in zip(human, judge)]),
        "confusion": confusion,
    }
