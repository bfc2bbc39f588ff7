"""Standard IR measures through ir_measures (MacAvaney, Macdonald and Ounis, ECIR 2022),
which delegates to pytrec_eval (trec_eval) and its own providers (Judged@k).

Measures are named as ir_measures writes them: ``R@5``, ``nDCG@10``, ``RR@10``, ``AP``,
``Judged@10``. Per-query values come first; an aggregate is the mean over the queries of
the qrels. A query that has judgments but no retrieved documents counts as 0 on every
measure (trec_eval's ``-c``), so a retriever cannot gain by returning nothing.

Runs are measured a batch of queries at a time (:func:`evaluate_batches`): ir_measures is
given one batch's rankings and those queries' judgments, and keeps nothing between batches,
so memory holds one batch of rankings and a row of floats per judged query. Per-query values
do not depend on the batching.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import ir_measures
import numpy as np
from ir_measures import Measure

from benchsmith.evals.defaults import DEFAULT_MEASURES, DEFAULT_QUERIES_PER_BATCH  # noqa: F401 (re-exported)

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
            raise UnknownMeasure(
                f"unknown measure {name!r} ({error}); examples: nDCG@10, R@100, RR@10, AP, Judged@10, P(rel=2)@5"
            ) from None
        measures.setdefault(key, measure)
    return list(measures.values())


@dataclass
class MeasureResults:
    """Per-query values as one row of floats per judged query (the qrels' queries, in their order)."""

    measures: list[str]
    query_ids: list[str]  # the qrels' queries
    values: np.ndarray  # float64, (queries, measures)
    unjudged_queries: int  # queries of the run without qrels (not measured)
    unjudged_examples: list[str]  # the first few of them

    @property
    def aggregate(self) -> dict[str, float]:
        """{measure: mean over the qrels' queries}."""
        if not self.query_ids:
            return dict.fromkeys(self.measures, 0.0)
        return {name: float(mean) for name, mean in zip(self.measures, self.values.mean(axis=0).tolist())}

    @property
    def per_query(self) -> dict[str, dict[str, float]]:
        """{query id: {measure: value}}."""
        return {query_id: dict(zip(self.measures, row)) for query_id, row in zip(self.query_ids, self.values.tolist())}

    def column(self, measure: str) -> np.ndarray:
        return self.values[:, self.measures.index(measure)]


def evaluate_run(
    measures: Sequence[Measure], qrels: Qrels, run: Run, queries_per_batch: int = DEFAULT_QUERIES_PER_BATCH
) -> MeasureResults:
    """The measures of a run held in memory (measured in batches of queries all the same)."""
    query_ids = list(run)
    batches = (
        {query_id: run[query_id] for query_id in query_ids[start : start + queries_per_batch]}
        for start in range(0, len(query_ids), queries_per_batch)
    )
    return evaluate_batches(measures, qrels, batches)


UNJUDGED_EXAMPLES = 5


def evaluate_batches(measures: Sequence[Measure], qrels: Qrels, batches: Iterable[Run]) -> MeasureResults:
    """The measures of a run given as batches of queries (each query in one batch)."""
    names = [str(measure) for measure in measures]
    column = {name: index for index, name in enumerate(names)}
    query_ids = list(qrels)
    row = {query_id: index for index, query_id in enumerate(query_ids)}
    values = np.zeros((len(query_ids), len(names)))
    unjudged: list[str] = []
    unjudged_count = 0
    for batch in batches:
        judged = {query_id: qrels[query_id] for query_id in batch if query_id in row}
        unjudged_count += len(batch) - len(judged)
        if len(unjudged) < UNJUDGED_EXAMPLES and len(batch) > len(judged):
            unjudged += [query_id for query_id in batch if query_id not in row][: UNJUDGED_EXAMPLES - len(unjudged)]
        # Empty rankings are left out (ir_measures' Judged@k divides by their length); they stay 0.
        retrieved = {query_id: batch[query_id] for query_id in judged if batch[query_id]}
        if not retrieved or not names:  # no measures (ir_measures refuses an empty list): only the counts
            continue
        for metric in ir_measures.iter_calc(list(measures), judged, retrieved):
            values[row[metric.query_id], column[str(metric.measure)]] = metric.value
    return MeasureResults(names, query_ids, values, unjudged_count, unjudged)
