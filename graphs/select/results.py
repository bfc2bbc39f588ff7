"""Measuring a configuration search (graphs/select/graph.py) once its pool is judged: each
configuration's counts from its run file and the judged pool, the configurations measured and
ranked, the precision-first and recall-first picks, the winner as a ready-to-use space file,
and the notes that say how every number was made."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from benchsmith.evals.measures.selection_measures import (
    QueryCounts,
    bootstrap_standard_error,
    intervals_overlap,
    queries_to_separate,
    query_counts,
    win_share,
)
from benchsmith.graphs.select.judging import pair_id
from benchsmith.graphs.select.retrieval import ChunkIndex
from benchsmith.stores.formats.trec import Run
from benchsmith.tools.retrieval.embedded_text import EMBEDDED_TEXT_NOTE
from benchsmith.tools.retrieval.strategy_space import DIMENSIONS, SelectConfiguration

BEST_FILE = "best-configuration.yaml"


@dataclass
class JudgedPool:
    query_ids: list[str]
    relevant: dict[str, bool]  # by pair id
    facts_of: dict[str, list[str]]  # fact ids by pair id
    facts_per_query: dict[str, int]

    @classmethod
    def of(
        cls,
        judgments: Mapping[str, Mapping[str, Any]],
        facts_records: Sequence[Mapping[str, Any]],
        query_ids: list[str],
    ) -> JudgedPool:
        """From judgments.jsonl (by pair) and facts.jsonl (per query)."""
        return cls(
            query_ids,
            {pair: bool(record["relevant"]) for pair, record in judgments.items()},
            {pair_id(record["query_id"], key): ids for record in facts_records for key, ids in record["keys"].items()},
            {record["query_id"]: len(record["facts"]) for record in facts_records},
        )


def configuration_counts(
    name: str, configuration: SelectConfiguration, index: ChunkIndex, run: Run, judged: JudgedPool
) -> QueryCounts:
    """The configuration's ranking per query read as (relevant, facts) per rank, counted at k = 1..K."""
    rankings = {}
    for query_id, ranked in run.items():
        ordered = sorted(ranked.items(), key=lambda item: (-item[1], item[0]))
        pairs = [pair_id(query_id, index.by_id[chunk_id].key) for chunk_id, _ in ordered]
        missing = [pair for pair in pairs if pair not in judged.relevant]
        if missing:
            raise RuntimeError(f"configuration {name!r}: pair {missing[0]!r} of its run was never judged")
        rankings[query_id] = [(judged.relevant[pair], frozenset(judged.facts_of.get(pair, ()))) for pair in pairs]
    return query_counts(rankings, judged.facts_per_query, judged.query_ids, configuration.top_k)


def measured_configurations(
    scores: Mapping[str, Mapping[str, Any]], records: Mapping[str, Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Every configuration with its settings and measures, best first: by PR-AUC, ties to the
    higher precision at K (the same area with fewer chunks handed on), then by name. Each
    carries the share of bootstrap resamples in which the best one beats it."""
    ranking = sorted(scores, key=lambda name: (-scores[name]["pr_auc"], -_last(scores[name]["precision_at_k"]), name))
    best_resampled = scores[ranking[0]]["resampled_pr_auc"]
    return [
        {
            "name": name,
            "settings": records[name]["settings"],
            "stage": records[name]["stage"],
            **{key: value for key, value in scores[name].items() if key != "resampled_pr_auc"},
            "run_file": records[name]["run_file"],
            "best_beats_it": None
            if name == ranking[0]
            else win_share(best_resampled, scores[name]["resampled_pr_auc"]),
        }
        for name in ranking
    ]


def separation(
    configurations: Sequence[Mapping[str, Any]],
    scores: Mapping[str, Mapping[str, Any]],
    queries: int,
    confidence: float,
) -> dict[str, Any]:
    """Is the top configuration (``configurations`` ranked, best first) a winner? Only when its
    PR-AUC interval does not overlap the runner-up's. Otherwise ``best`` is None and ``tied``
    lists the configurations whose intervals overlap the top one's, with the queries that would
    separate the top two (evals/measures/selection_measures.queries_to_separate)."""
    top = configurations[0]
    if len(configurations) == 1:
        return {"best": top["name"], "tied": [], "runner_up": None}
    runner_up = configurations[1]
    difference = top["pr_auc"] - runner_up["pr_auc"]
    top_error, runner_up_error = (
        bootstrap_standard_error(scores[c["name"]]["resampled_pr_auc"]) for c in (top, runner_up)
    )
    errors = [top_error, runner_up_error]
    needed = queries_to_separate(difference, top_error, runner_up_error, queries, confidence)
    compared = {
        "runner_up": runner_up["name"],
        "difference": difference,
        "standard_errors": errors,
        "queries": queries,
        "queries_needed": needed,
        "more_queries": None if needed is None else max(needed - queries, 0),
    }
    if not intervals_overlap(top["pr_auc_interval"], runner_up["pr_auc_interval"]):
        return {"best": top["name"], "tied": [], **compared}
    tied = [c["name"] for c in configurations if intervals_overlap(top["pr_auc_interval"], c["pr_auc_interval"])]
    return {"best": None, "tied": tied, **compared}


def separation_text(decision: Mapping[str, Any], confidence: float) -> str:
    """The decision in words, for the report and the console."""
    if decision["best"] is not None:
        if decision["runner_up"] is None:
            return f"{decision['best']} is the only configuration."
        return (
            f"{decision['best']} wins: its {confidence:.0%} PR-AUC interval does not overlap the runner-up's "
            f"({decision['runner_up']})."
        )
    top, others = decision["tied"][0], ", ".join(decision["tied"][1:])
    text = (
        f"No winner: the {confidence:.0%} PR-AUC interval of {top} overlaps those of {others}, so these queries "
        "do not tell them apart. "
    )
    if decision["queries_needed"] is None:
        return text + (
            "The top two scored exactly the same: no number of queries like these separates them; "
            "compare them on other queries or other settings."
        )
    return text + (
        f"About {decision['queries_needed']:,} queries in all ({decision['more_queries']:,} more than the "
        f"{decision['queries']:,} judged) would separate {decision['tied'][0]} from {decision['runner_up']} "
        f"if their PR-AUC difference ({decision['difference']:.3f}) held: n · (z · (se₁ + se₂) / d)², "
        "with the bootstrap standard errors se₁, se₂."
    )


def _last(by_k: Mapping[str, float]) -> float:
    return by_k[str(len(by_k))] if by_k else 0.0


def best_by_f_beta(configurations: Sequence[Mapping[str, Any]], beta: float) -> dict[str, Any]:
    """The configuration, and its cut k, with the highest F-beta (ties: the higher PR-AUC)."""
    key = f"{beta:g}"
    best = max(configurations, key=lambda c: (c["f_beta"][key]["best"], c["pr_auc"]))
    return {
        "configuration": best["name"],
        "beta": beta,
        "k": best["f_beta"][key]["best_k"],
        "f_beta": best["f_beta"][key]["best"],
        "interval": best["f_beta"][key]["interval"],
        "settings": {**best["settings"], "top_k": best["f_beta"][key]["best_k"]},
    }


def best_configuration_yaml(settings: Mapping[str, Any], embedder: str) -> str:
    """The best configuration as a strategy space of one configuration: ``--space`` takes it as it is."""
    header = (
        f"# The best configuration of a benchsmith select run; the dense retriever's embedder: {embedder}.\n"
        f"# Re-run it alone with: benchsmith select QUERIES --corpus ... --space {BEST_FILE}\n"
    )
    body = {dimension: [settings[dimension]] for dimension in DIMENSIONS}
    return header + str(yaml.safe_dump(body, sort_keys=False, allow_unicode=True))


def selection_notes(
    judges: Sequence[str], votes: int, batch_size: int, resamples: int, confidence: float, rerank_depth: int
) -> list[str]:
    return [
        "Pool: the union of every configuration's top K per query; each (query, chunk text) pair is judged once "
        f"({batch_size} pairs of one query per call) by {', '.join(judges)}. Vote rule (the audit's): a chunk "
        f"counts as relevant when at least {votes} of the {len(judges)} judge(s), and a majority of them, found it "
        "relevant.",
        "Facts: the judges quote each relevant chunk's minimal facts; facts equal after normalization (case, "
        "punctuation, Unicode form) or overlapping enough in words are one fact, near-matches are decided by the "
        "judges, so a fact found through several chunks or chunkings counts once.",
        "Precision@k counts the relevant chunks among those retrieved (every retrieved chunk was judged, so it is the "
        "true precision wherever the judges are right); recall@k counts facts against every fact of the pool, a subset "
        "of all true facts: it orders configurations as true recall does (SEARA), but is an upper bound of it.",
        "Micro values pool the counts over the queries (SEARA's proof assumes it); per-query means are given beside.",
        f"Intervals: percentile bootstrap over the queries, {resamples} resamples shared by all configurations, "
        f"{confidence:.0%} level. 'Best beats it' is the share of resamples in which the best configuration's PR-AUC "
        "is higher (ties count half).",
        EMBEDDED_TEXT_NOTE,
        "BM25: bm25s, Lucene scoring, over each chunk's text; dense: exact inner product of L2-normalized embeddings; "
        "hybrid: fusion "
        "(tools/retrieval/fusion.py: RRF k = 60, or min-max normalized sums) of each component's top 100; a query's "
        f"expansions are fused by RRF; a reranker re-scores the top {rerank_depth} before the cut to K; a filter "
        "ranks only the chunks it lets through.",
    ]
