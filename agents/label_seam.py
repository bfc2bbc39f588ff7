"""A judge that answers from known relevance labels: the ``qrels:FILE`` judge.

It looks each (query, passage) pair up in the labels instead of asking a model, through an
agent's ``from_labels`` method (agents/pool_judge.py), and goes wherever a model seam goes.
It serves validation ("on my small labelled sample, does the selection agree with the
labels?") and the check of SEARA's proof, where the labels are the truth. A pair the labels
do not judge is not relevant (the usual reading of qrels). Calls are counted and cost nothing.
"""

from __future__ import annotations

from typing import Any

from benchsmith.agents.pool_judge import LabelLookup
from benchsmith.agents.seam.backends import Completion
from benchsmith.agents.seam.models import Agent, ModelSeam, NoBaselineError, Out, UsageRecorder

LABELS_PREFIX = "qrels:"


class LabelSeam(ModelSeam):
    """A seam whose every answer comes from relevance labels (no model, no cache)."""

    def __init__(self, labels: LabelLookup, name: str, usage: UsageRecorder | None = None):
        super().__init__(None, usage=usage)
        self.labels = labels
        self.label_name = name  # e.g. "qrels:qrels.tsv": names the labels in records
        self.pairs_looked_up = 0  # (query, passage) pairs answered, over all calls

    @property
    def model(self) -> str:
        return self.label_name

    @property
    def is_baseline(self) -> bool:
        return False

    def run(self, agent: Agent[Out], **inputs: Any) -> Out:
        answer = getattr(agent, "from_labels", None)
        if answer is None:
            raise NoBaselineError(f"the {agent.name} agent cannot answer from relevance labels: give it a model")
        result: Out = answer(self.labels, **inputs)
        with self._lock:
            self.pairs_looked_up += len(inputs.get("passage_ids") or ())
        self._account(agent, Completion(result), retries=0, cached=False)
        return result
