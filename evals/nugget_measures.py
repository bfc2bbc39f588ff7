"""Nugget-based retrieval measures (FreshStack, Thakur et al. 2025), per query first, then the
mean over the queries of the nugget qrels.

A question q has nuggets N_q; the nugget qrels say which documents support which nugget
(label ≥ 1) and which were judged and do not (label 0). A ranking's top k documents are
D_k(q). Every measure sees the ranking in one order: descending score, ties by document id.

* alpha-nDCG@k (Clarke et al., SIGIR 2008), through ir_measures and pyndeval (the nugget id in
  the qrels' iteration column):
      alpha-DCG@k = Σ_{r=1..k} Σ_{n ∈ N_q} J(d_r, n) · (1 − α)^{c_{n,r−1}} / log2(1 + r),
  c_{n,r−1} = the documents above rank r that support n; alpha-nDCG divides by the same sum
  over the ideal (greedily built) ranking. α = 0.5 unless written ``alpha_nDCG(alpha=A)@k``.
  A document that supports two nuggets gains for both; a nugget found again gains less.
* Coverage@k = |{n ∈ N_q : ∃ d ∈ D_k(q), J(d, n) > 0}| / |N_q| (FreshStack's nugget coverage,
  ``freshstack.retrieval.metrics.coverage``). N_q holds every nugget the qrels list for q,
  supported or not: a nugget no document supports still counts in the denominator.
* Recall@k (``R@k``, and every other ir_measures measure) on the query-level qrels derived
  from the nugget qrels: a document's label is the sum of its nugget labels (how many
  nuggets it supports), so it is relevant when it supports at least one nugget
  (FreshStack's ``nuggets_to_query_qrels``).

Nugget ids are matched exactly. FreshStack groups nuggets into questions by id prefix
(``nugget_id.startswith(query_id)``), which gives question ``q1`` the nuggets of ``q10``;
here the question is the qrels' own first column, never inferred from the nugget id.
A query with judgments and no retrieved document scores 0 on every measure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import ir_measures
import numpy as np

from benchsmith.evals.measures.standard import MeasureResults, evaluate_batches

Run = Mapping[str, Mapping[str, float]]
NuggetQrels = Mapping[str, Mapping[str, Mapping[str, int]]]  # {qid: {nugget id: {doc id: label}}}
COVERAGE = re.compile(r"^Coverage@(\d+)$")
DEFAULT_NUGGET_MEASURES = ("alpha_nDCG@10", "Coverage@20", "R@50")


class UnknownNuggetMeasure(ValueError):
    """A measure name neither Coverage@k nor one ir_measures can parse."""


@dataclass
class NuggetMeasureResults:
    measures: list[str]  # the names as given
    per_query: dict[str, dict[str, float]]  # {query id: {measure: value}}, every query of the qrels
    aggregate: dict[str, float]  # {measure: mean over the queries of the qrels}


def ranked(run: Run) -> dict[str, list[str]]:
    """Each query's documents, best first: descending score, ties by document id."""
    return {
        query_id: [doc_id for doc_id, _ in sorted(documents.items(), key=lambda item: (-item[1], item[0]))]
        for query_id, documents in run.items()
    }


def query_qrels(nugget_qrels: NuggetQrels) -> dict[str, dict[str, int]]:
    """Query-level qrels: each judged document's label is the sum of its nugget labels."""
    qrels: dict[str, dict[str, int]] = {}
    for query_id, nuggets in nugget_qrels.items():
        judged = qrels.setdefault(query_id, {})
        for documents in nuggets.values():
            for doc_id, label in documents.items():
                judged[doc_id] = judged.get(doc_id, 0) + max(0, int(label))
    return qrels


def coverage(run: Run, nugget_qrels: NuggetQrels, k: int) -> dict[str, float]:
    """Coverage@k per query of the qrels (module docstring)."""
    if k < 1:
        raise UnknownNuggetMeasure(f"Coverage@{k}: k must be at least 1")
    order = ranked(run)
    values: dict[str, float] = {}
    for query_id, nuggets in nugget_qrels.items():
        if not nuggets:
            continue
        top = set(order.get(query_id, [])[:k])
        covered = sum(
            1
            for documents in nuggets.values()
            if any(label > 0 and doc_id in top for doc_id, label in documents.items())
        )
        values[query_id] = covered / len(nuggets)
    return values


def _rank_scores(run: Run) -> dict[str, dict[str, float]]:
    """Scores that put every library's ranking in :func:`ranked`'s order (no ties left)."""
    return {
        query_id: {doc_id: float(len(documents) - position) for position, doc_id in enumerate(documents)}
        for query_id, documents in ranked(run).items()
        if documents
    }


def _nugget_qrels_for_ir_measures(nugget_qrels: NuggetQrels) -> list[ir_measures.Qrel]:
    return [
        ir_measures.Qrel(query_id, doc_id, int(label), nugget_id)
        for query_id, nuggets in nugget_qrels.items()
        for nugget_id, documents in nuggets.items()
        for doc_id, label in documents.items()
    ]


def _parse(name: str) -> ir_measures.Measure | int:
    """Coverage@k as its k; anything else as an ir_measures measure."""
    if match := COVERAGE.match(name):
        if int(match.group(1)) < 1:
            raise UnknownNuggetMeasure(f"{name}: Coverage@k needs k of at least 1")
        return int(match.group(1))
    try:
        measure = ir_measures.parse_measure(name)
        str(measure)  # ir_measures checks some parameters only here
    except (NameError, ValueError, SyntaxError, TypeError, KeyError, AttributeError) as error:
        raise UnknownNuggetMeasure(
            f"unknown measure {name!r} ({error}); with nugget qrels: alpha_nDCG@10, "
            "alpha_nDCG(alpha=0.5)@20, Coverage@20, R@50, nDCG@10, ..."
        ) from None
    if measure.NAME == "alpha_nDCG":
        cutoff = measure["cutoff"]
        if not isinstance(cutoff, int) or not 1 <= cutoff <= 20:  # ndeval's limit (pyndeval asserts it)
            raise UnknownNuggetMeasure(
                f"{name}: alpha_nDCG needs a cutoff from 1 to 20 (ndeval's limit), e.g. alpha_nDCG@10"
            )
    return measure


def check_nugget_measures(names: Sequence[str]) -> list[str]:
    """The names, each checked (an :class:`UnknownNuggetMeasure` names the bad one)."""
    for name in names:
        _parse(name)
    return list(dict.fromkeys(names))


def is_nugget_measure(name: str) -> bool:
    """Coverage@k and alpha_nDCG need nugget qrels; other measures work on query-level qrels."""
    parsed = _parse(name)
    return isinstance(parsed, int) or parsed.NAME == "alpha_nDCG"


def nugget_measures(run: Run, nugget_qrels: NuggetQrels, names: Sequence[str]) -> NuggetMeasureResults:
    """The named measures of ``run`` per query of ``nugget_qrels``, and their means.

    ``names`` may mix Coverage@k, alpha_nDCG[(alpha=A)]@k (nugget qrels) and any other
    ir_measures measure (R@k, nDCG@k, ...: query-level qrels, :func:`query_qrels`)."""
    names = check_nugget_measures(names)
    parsed = {name: _parse(name) for name in names}
    queries = [query_id for query_id, nuggets in nugget_qrels.items() if nuggets]
    per_query = {query_id: dict.fromkeys(names, 0.0) for query_id in queries}
    scored = _rank_scores({query_id: run[query_id] for query_id in queries if query_id in run})
    measured = {name: measure for name, measure in parsed.items() if not isinstance(measure, int)}
    alpha = [name for name, measure in measured.items() if measure.NAME == "alpha_nDCG"]
    other = [name for name, measure in measured.items() if measure.NAME != "alpha_nDCG"]
    groups: list[tuple[list[str], Any]] = [([name], None) for name in alpha]  # nugget qrels
    if other:
        groups.append((other, query_qrels(nugget_qrels)))
    for group, qrels in groups if scored else []:
        # One alpha-nDCG per call: ir_measures hands pyndeval's invocations one shared run
        # iterator, so a second alpha (or rel) in the same call scores 0 everywhere.
        qrels = qrels if qrels is not None else _nugget_qrels_for_ir_measures(nugget_qrels)
        names_of: dict[str, list[str]] = {}
        for name in group:
            names_of.setdefault(str(measured[name]), []).append(name)
        for metric in ir_measures.iter_calc([measured[name] for name in group], qrels, scored):
            if metric.query_id in per_query:
                for name in names_of[str(metric.measure)]:
                    per_query[metric.query_id][name] = float(metric.value)
    for name, measure in parsed.items():
        if isinstance(measure, int):
            for query_id, value in coverage(run, nugget_qrels, measure).items():
                per_query[query_id][name] = value
    aggregate = {
        name: (sum(values[name] for values in per_query.values()) / len(per_query) if per_query else 0.0)
        for name in names
    }
    return NuggetMeasureResults(names, per_query, aggregate)


def split_measures(names: Sequence[str]) -> tuple[list[str], list[str]]:
    """``(measures on query-level qrels, measures that need nugget qrels)``, each in the given order."""
    nugget = [name for name in names if is_nugget_measure(name)]
    return [name for name in names if name not in nugget], nugget


def evaluate_batches_with_nuggets(
    measures: Sequence[ir_measures.Measure],
    nugget_names: Sequence[str],
    qrels: Mapping[str, Mapping[str, int]],
    nugget_qrels: NuggetQrels,
    batches: Iterable[Run],
) -> MeasureResults:
    """An evaluation's per-query values, a batch of queries at a time: ``measures`` against
    ``qrels`` (:func:`evals.measures.standard.evaluate_batches`), and the nugget measures ``nugget_names``
    (Coverage@k, alpha_nDCG@k) against ``nugget_qrels`` as each batch goes by.

    One pass over the batches; memory holds one batch of rankings and a row of floats per
    judged query. The rows are the queries of ``qrels`` (the columns: ``measures``, then
    ``nugget_names``); a query the nugget qrels lack scores 0 on the nugget measures, and a query
    only the nugget qrels judge is not measured. Each query's nugget values depend on its own
    ranking and nuggets alone, so they do not depend on the batching."""
    nugget_names = check_nugget_measures(nugget_names)
    row = {query_id: index for index, query_id in enumerate(qrels)}
    nugget_values = np.zeros((len(row), len(nugget_names)))

    def measured_as_they_pass(batches: Iterable[Run]) -> Iterator[Run]:
        for batch in batches:
            judged = {
                query_id: nugget_qrels[query_id] for query_id in batch if query_id in row and query_id in nugget_qrels
            }
            if nugget_names and judged:
                scored = nugget_measures({query_id: batch[query_id] for query_id in judged}, judged, nugget_names)
                for query_id, values in scored.per_query.items():
                    nugget_values[row[query_id]] = [values[name] for name in nugget_names]
            yield batch

    standard = evaluate_batches(measures, qrels, measured_as_they_pass(batches))
    return MeasureResults(
        [*standard.measures, *nugget_names],
        standard.query_ids,
        np.hstack([standard.values, nugget_values]),
        standard.unjudged_queries,
        standard.unjudged_examples,
    )
