"""The one rule for the text a passage is embedded with, in every job that embeds passages.

A passage (an ingested chunk, a BEIR document) is embedded as its text alone: the text `benchsmith
ingest` stores in the collection for a chunk. Its title (a chunk's heading path) is not embedded
(a job's BM25 and rerankers say what they read). One rule makes a passage's vector
the same whichever job computes it, so a question scores the same in `validate` (which reads the
collection's vectors) and in `evaluate` of the same BEIR folder (which may embed it anew); and an
evaluation over passages a collection already holds under the same ids, texts and embedder reads
that collection's vectors instead of embedding again (graphs/runtime/corpus_indexes.py).
"""

from __future__ import annotations

EMBEDDED_TEXT_NOTE = (
    "Dense retrieval embeds each passage as its text alone, the text `benchsmith ingest` embeds for a chunk (a title, "
    "such as a chunk's heading path, is not embedded); passages a collection already holds (same ids, texts and "
    "embedder) are searched with that collection's vectors."
)


def embedded_text(title: str, text: str) -> str:
    """What a passage is embedded as: its text; its title only when it has no text."""
    return text if text.strip() else title
