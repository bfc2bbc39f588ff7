"""The dense evidence validate's offline pool judge weighs (agents/calibrated_pool_judge.py): how
close the question is to each judged passage and to its closest sentence, under the embedder the
judge's threshold was calibrated with (vectors cached in the workspace)."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from benchsmith.agents.calibrated_pool_judge import CALIBRATED_EMBEDDER
from benchsmith.graphs.runtime.corpus_indexes import document_text
from benchsmith.graphs.runtime.resources import embedder_for
from benchsmith.passages import sentences
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.retrieval.cached_embedding import cached_embedder

_encoding = threading.Lock()  # the judge's threads share one model


def dense_evidence(
    workspace: Workspace, question: str, documents: Sequence[tuple[str, str]]
) -> tuple[list[float], list[float]]:
    """``(similarities, sentence_similarities)``: per ``(title, text)`` document, the cosine of
    the question with the whole document and the best cosine with one sentence of its text."""
    embedder = cached_embedder(embedder_for(CALIBRATED_EMBEDDER), workspace)
    spans = [sentences(text) or [text] for _, text in documents]
    with _encoding:
        asked = embedder.encode([question])[0]
        whole = embedder.encode([document_text(title, text) for title, text in documents])
        parts = embedder.encode([span for group in spans for span in group])
    similarities = [float(row @ asked) for row in whole]
    sentence_similarities, start = [], 0
    for group in spans:
        sentence_similarities.append(float(np.max(parts[start : start + len(group)] @ asked)))
        start += len(group)
    return similarities, sentence_similarities
