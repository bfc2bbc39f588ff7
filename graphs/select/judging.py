"""Judging a configuration search's pool (graphs/select/graph.py): batches of (query, chunk) pairs
by a judge ensemble with the audit's vote rule, and the minimal facts matched across chunks.

A pair is a query and a chunk *text* (its content hash): the same text reached through two
chunkings or two documents is one pair, judged once. Each judge's verdict on a pair is kept
in the workspace's verdict store (``select-judgments.sqlite``, keyed by the judge, its
sampling, the prompt, the conversation and the passage), so a later run, or a run with one
more configuration, pays only for pairs no run has judged. Offline baselines and label judges
answer instantly and are not stored.

A stored verdict names the run that paid for it: one a run finds that it stored itself (its
killed attempt judged the pair, then died before logging it) is that run's own model verdict,
not one "reused from an earlier run", so a resumed run counts what an uninterrupted one counts.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from benchsmith.agents.label_seam import LabelSeam
from benchsmith.agents.pool_judge import (
    POOL_JUDGE_SYSTEM_PROMPT,
    POOL_JUDGE_TASK,
    FactMatchJudge,
    PoolJudge,
)
from benchsmith.agents.seam.models import ModelSeam
from benchsmith.agents.text import WordStatistics
from benchsmith.evals.measures.audit_verdicts import is_confirmed
from benchsmith.stores.formats.beir import BenchmarkQuery
from benchsmith.stores.persistence.llm_cache import LLMCache
from benchsmith.stores.persistence.write_behind import drain_all
from benchsmith.tools.benchmark.fact_matching import cluster_facts
from benchsmith.tools.retrieval.query_building import HistoryMode, build_query

VERDICT_STORE = "select-judgments.sqlite"
PROMPT_VERSION = hashlib.sha256((POOL_JUDGE_SYSTEM_PROMPT + POOL_JUDGE_TASK).encode("utf-8")).hexdigest()[:12]

Judges = Sequence[tuple[str, ModelSeam]]  # (spec, seam) in ensemble order


def pair_id(query_id: str, key: str) -> str:
    """One judged item: a query and a chunk text (its content hash)."""
    return f"{query_id}::{key}"


def stores_verdicts(seam: ModelSeam) -> bool:
    """Model verdicts are kept across runs; label judges and offline baselines answer for free."""
    return not isinstance(seam, LabelSeam) and not seam.is_baseline


def verdict_key(spec: str, seam: ModelSeam, query: BenchmarkQuery, passage: str) -> str:
    canonical = json.dumps(
        {
            "judge": spec,
            "model": seam.model,
            "endpoint": getattr(seam.backend, "endpoint", None),
            "sampling": seam.settings.sampling(),
            "prompt": PROMPT_VERSION,
            "history": query.history,
            "question": query.question,
            "passage": passage,
        },
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def run_identity(run_id: str, created: float | None) -> str:
    """A run as the verdict store names it: its id and when it was created (a later run reusing a
    deleted run's id is another run)."""
    return f"{run_id}@{created!r}" if created is not None else run_id


def judge_batch(
    pairs: Sequence[Mapping[str, Any]],
    query: BenchmarkQuery,
    judges: Judges,
    store: LLMCache,
    min_votes: int,
    statistics: WordStatistics | None = None,
    run: str = "",
) -> list[dict[str, Any]]:
    """Every judge's verdict on each pair of one query (stored verdicts reused, the rest asked
    in one call per judge), and the ensemble's: relevant when ``is_confirmed`` (the audit's rule).
    ``run`` names the run judging (:func:`run_identity`): verdicts are stored under it, and a
    stored verdict counts as ``cached`` (reused from an earlier run) only when another run stored it.

    The offline baseline reads a pair's ``title`` (its heading path) when the record has one, and
    weighs query terms by ``statistics`` (the collection's) when given, else by the batch's own
    texts; it keeps the passages whose support is near the batch's best, so it judges best with a
    query's whole pool in one batch (agents/pool_judge.py measured both)."""
    verdicts: dict[str, dict[str, dict[str, Any]]] = {record["pair"]: {} for record in pairs}
    for spec, seam in judges:
        pending = []
        for record in pairs:
            stored = store.get(verdict_key(spec, seam, query, record["text"])) if stores_verdicts(seam) else None
            if stored is not None:
                verdict = json.loads(stored)
                stored_by = verdict.pop("run", None)
                verdicts[record["pair"]][spec] = {**verdict, "cached": not run or stored_by != run}
            else:
                pending.append(record)
        if not pending:
            continue
        answer = seam.run(
            PoolJudge(len(pending)),
            history=query.history,
            question=query.question,
            passages=[record["text"] for record in pending],
            query_id=query.id,
            passage_ids=[record["chunk_id"] for record in pending],
            passage_documents=[record["doc_id"] for record in pending],
            passage_titles=[record.get("title", "") for record in pending],
            statistics=statistics,
        )
        for record, judgment in zip(pending, answer.judgments):
            verdict = {"relevant": judgment.relevant, "facts": judgment.facts, "rationale": judgment.rationale}
            if stores_verdicts(seam):
                store.put(
                    verdict_key(spec, seam, query, record["text"]), seam.model, json.dumps({**verdict, "run": run})
                )
            verdicts[record["pair"]][spec] = {**verdict, "cached": False}
        if stores_verdicts(seam):
            # a judge's verdicts, and the calls they cost, are on file before the next judge is asked:
            # a kill loses neither (a resumed run reuses the verdicts and counts what they cost)
            drain_all()
    results = []
    for record in pairs:
        votes = sum(1 for verdict in verdicts[record["pair"]].values() if verdict["relevant"])
        results.append(
            {
                "pair": record["pair"],
                "query_id": record["query_id"],
                "key": record["key"],
                "chunk_id": record["chunk_id"],
                "doc_id": record["doc_id"],
                "votes": votes,
                "relevant": is_confirmed(votes, len(judges), min_votes),
                "verdicts": verdicts[record["pair"]],
            }
        )
    return results


def query_facts(
    query: BenchmarkQuery, judged: Sequence[Mapping[str, Any]], judges: Judges, min_votes: int
) -> dict[str, Any]:
    """The facts of one query's relevant pairs, clustered across chunks and chunkings: facts
    equal after normalization or overlapping enough are one; near-matches are put to the
    judges (same vote rule)."""
    relevant = [record for record in judged if record["relevant"]]
    quotes: list[tuple[str, str]] = []  # (pair key, quoted fact)
    for record in sorted(relevant, key=lambda record: record["key"]):
        quoted = dict.fromkeys(
            fact for verdict in record["verdicts"].values() if verdict["relevant"] for fact in verdict["facts"]
        )
        quotes += [(record["key"], fact) for fact in quoted]
    question = build_query(query, HistoryMode("full"))

    def same_fact(first: str, second: str) -> bool:
        votes = sum(
            1 for _, seam in judges if seam.run(FactMatchJudge(), question=question, first=first, second=second).same
        )
        return is_confirmed(votes, len(judges), min_votes)

    clusters = cluster_facts([fact for _, fact in quotes], same_fact)
    facts: dict[int, set[str]] = {}
    keys: dict[str, set[str]] = {}
    for (key, fact), cluster in zip(quotes, clusters):
        facts.setdefault(cluster, set()).add(fact)
        keys.setdefault(key, set()).add(f"f{cluster}")
    return {
        "query_id": query.id,
        "facts": [
            {"id": f"f{cluster}", "text": min(texts, key=lambda text: (len(text), text)), "quotes": sorted(texts)}
            for cluster, texts in sorted(facts.items())
        ],
        "keys": {key: sorted(ids) for key, ids in sorted(keys.items())},
    }
