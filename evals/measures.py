"""Standard IR measures through ir_measures (MacAvaney, Macdonald and Ounis, ECIR 2022),
which delegates to pytrec_eval (trec_eval) and its own providers (Judged@k).

Measures are named as ir_measures writes them: ``R@5``, ``nDCG@10``, ``RR@10``, ``AP``,
``Judged@10``. Per-query values come first; an aggregate is the mean over the queries of
the qrels. A query that has judgments but no retrieved documents counts as 0 on every
measure (trec_eval's ``-c``), so a retriever cannot gain by returning nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import ir_measures
from ir_measures import Measure

DEFAULT_MEASURES = ("R@1", "R@5", "R@20", "R@100", "R@1000", "nDCG@3", "nDCG@10", "nDCG@20", "RR@10", "RR@20", "AP",
                    "Judged@10", "Judged@20")

Run = Mapping[str, Mapping[str, float]]
Qrels = Mapping[str, Mapping[str, int]]


class UnknownMeasure(ValueError):
    """A measure name ir_measures cannot parse."""


def parse_measures(names: Sequence[str]) -> list[Measure]:
    """ir_measures measure objects, in the given order, without duplicates."""
    measures: dict[str, Measure] = {}
    for name in names:
        try:
            measure = ir_measures.parse_measure(name)
            key = str(measure)  # ir_measures checks some parameters only here
        except (NameError, ValueError, SyntaxError, TypeError, KeyError, AttributeError) as error:
            raise UnknownMeasure(f"unknown measure {name!r} ({error}); examples: nDCG@10, R@100, RR@10, AP, "
                                 "Judged@10, P(rel=2)@5") from None
        measures.setdefault(key, measure)
    return list(measures.values())


@dataclass
class MeasureResults:
    measures: list[str]
    per_query: dict[str, dict[str, float]]  # {query id: {measure: value}}
    aggregate: dict[str, float]  # {measure: mean over the qrels' queries}
    unjudged_queries: int  # queries of the run without qrels (not measured)


def evaluate_run(measures: Sequence[Measure], qrels: Qrels, run: Run) -> MeasureResults:
    names = [str(measure) for measure in measures]
    per_query: dict[str, dict[str, float]] = {query_id: dict.fromkeys(names, 0.0) for query_id in qrels}
    # Empty rankings are left out (ir_measures' Judged@k divides by their length); they stay 0.
    retrieved = {query_id: ranking for query_id, ranking in run.items() if ranking}
    for metric in ir_measures.iter_calc(list(measures), qrels, retrieved):
        if metric.query_id in per_query:
            per_query[metric.query_id][str(metric.measure)] = float(metric.value)
    aggregate = {name: (sum(values[name] for values in per_query.values()) / len(per_query) if per_query else 0.0)
                 for name in names}
    return MeasureResults(names, per_query, aggregate, unjudged_queries=len(set(run) - set(qrels)))
