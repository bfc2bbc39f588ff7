"""Leaving held-out chunks out of an exported corpus, with their near-duplicates.

An unanswerable turn asks about chunks held out of the benchmark's corpus: the question is
unanswerable only if no exported document carries their text. A copy of a held-out chunk
(the same passage under another heading, in another file) would answer it, so every document
whose MinHash Jaccard with a held-out chunk is at least the dedup threshold (0.8) is left out
too: the shingling, the LSH candidate margin and the exact check of tools/corpus/dedup.py, so
"near-duplicate" means the same here as at ingestion.

Labels made over the whole collection (a user's own questions, for `validate`) may name such a
chunk: :func:`drop_held_out` takes those rows out of the judgments and says which, so that both
sets are measured over the benchmark's corpus.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np
from datasketch import MinHash, MinHashLSH

from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.integrity import EXAMPLES
from benchsmith.tools.corpus.dedup import BATCH, CANDIDATE_MARGIN, DuplicateMatch, _fingerprint, char_shingles, jaccard
from benchsmith.tools.defaults import DEFAULT_DEDUP_NUM_PERM, DEFAULT_DEDUP_THRESHOLD


class HeldOutFilter:
    """Tells, document by document, whether it is a held-out chunk or a near-duplicate of one."""

    def __init__(
        self,
        held_out: Mapping[str, str],
        threshold: float = DEFAULT_DEDUP_THRESHOLD,
        num_perm: int = DEFAULT_DEDUP_NUM_PERM,
        seed: int = 1,
    ):
        if not 0 < threshold <= 1:
            raise ValueError(f"near-duplicate threshold must be in (0, 1], got {threshold}")
        self.threshold, self.num_perm, self.seed = threshold, num_perm, seed
        self.ids = set(held_out)
        self.index = MinHashLSH(threshold=max(0.05, threshold - CANDIDATE_MARGIN), num_perm=num_perm)
        self.fingerprints: dict[str, np.ndarray] = {}
        shingle_sets = [char_shingles(text) for text in held_out.values()]
        for chunk_id, shingles, signature in zip(
            held_out, shingle_sets, MinHash.bulk(shingle_sets, num_perm=num_perm, seed=seed)
        ):
            self.index.insert(chunk_id, signature)
            self.fingerprints[chunk_id] = _fingerprint(shingles)

    def matches(self, ids: list[str], texts: list[str]) -> list[DuplicateMatch | None]:
        """For each document, the held-out chunk it is or copies (None: it may be exported)."""
        shingle_sets = [char_shingles(text) for text in texts]
        signatures = MinHash.bulk(shingle_sets, num_perm=self.num_perm, seed=self.seed)
        found: list[DuplicateMatch | None] = []
        for doc_id, shingles, signature in zip(ids, shingle_sets, signatures):
            if doc_id in self.ids:
                found.append(DuplicateMatch(doc_id, doc_id, 1.0))
                continue
            fingerprint = _fingerprint(shingles)
            best_id, best = None, 0.0
            for candidate in self.index.query(signature):
                similarity = jaccard(fingerprint, self.fingerprints[candidate])
                if similarity > best:
                    best_id, best = candidate, similarity
            found.append(
                DuplicateMatch(doc_id, best_id, round(best, 4))
                if best_id is not None and best >= self.threshold
                else None
            )
        return found


def without_held_out(
    documents: Iterable[dict[str, Any]],
    held_out: Mapping[str, str],
    removed: list[DuplicateMatch] | None = None,
    threshold: float = DEFAULT_DEDUP_THRESHOLD,
    num_perm: int = DEFAULT_DEDUP_NUM_PERM,
) -> Iterator[dict[str, Any]]:
    """The BEIR documents (``_id``, ``text``...) that are neither a held-out chunk (``held_out``:
    ``{chunk id: text}``) nor a near-duplicate of one, in their order; each one left out is
    appended to ``removed`` (``removed_id``, the held-out ``kept_id`` it matched, ``jaccard``).
    With nothing held out, the documents pass through untouched."""
    iterator = iter(documents)
    if not held_out:
        yield from iterator
        return
    matcher = HeldOutFilter(held_out, threshold, num_perm)
    while batch := list(islice(iterator, BATCH)):
        for document, match in zip(batch, matcher.matches([str(d["_id"]) for d in batch], [d["text"] for d in batch])):
            if match is None:
                yield document
            elif removed is not None:
                removed.append(match)


@dataclass(frozen=True)
class HeldOutLabels:
    """What leaving held-out chunks out of a set of judgments dropped."""

    chunks: dict[str, str] = field(default_factory=dict)  # the held-out chunks labels name -> the one each is or copies
    rows: tuple[tuple[str, str], ...] = ()  # (question id, chunk id) judgments dropped, in label order
    questions_left_out: tuple[str, ...] = ()  # questions whose every relevant chunk was held out
    documents: int = 0  # held-out chunks a set's own corpus held, left out of it
    benchmark_chunks: int = 0  # the chunks the benchmark holds out, in all

    def __bool__(self) -> bool:
        return bool(self.rows or self.documents)

    def to_json(self) -> dict[str, Any]:
        return {
            "chunks": dict(self.chunks),
            "rows": [{"question_id": q, "chunk_id": c} for q, c in self.rows],
            "questions_left_out": list(self.questions_left_out),
            "documents": self.documents,
            "benchmark_chunks": self.benchmark_chunks,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> HeldOutLabels:
        return cls(
            dict(data.get("chunks") or {}),
            tuple((row["question_id"], row["chunk_id"]) for row in data.get("rows") or []),
            tuple(data.get("questions_left_out") or ()),
            int(data.get("documents") or 0),
            int(data.get("benchmark_chunks") or 0),
        )


def drop_held_out(
    qrels: Mapping[str, Mapping[str, int]], held_out: Mapping[str, str], documents: int = 0
) -> tuple[dict[str, dict[str, int]], HeldOutLabels]:
    """``qrels`` (``{question id: {chunk id: relevance}}``) without the judgments of held-out
    chunks (``held_out``: ``{chunk id: the held-out chunk it is or copies}``, Benchmark.held_out),
    and without the questions that had a relevant chunk and have none left; with what was dropped
    (``documents``: the held-out chunks the set's own corpus held, reported as given)."""
    kept: dict[str, dict[str, int]] = {}
    rows: list[tuple[str, str]] = []
    left_out: list[str] = []
    for question_id, judged in qrels.items():
        remaining = {doc_id: relevance for doc_id, relevance in judged.items() if doc_id not in held_out}
        rows += [(question_id, doc_id) for doc_id in judged if doc_id in held_out]
        if any(relevance > 0 for relevance in judged.values()) and not any(r > 0 for r in remaining.values()):
            left_out.append(question_id)
        elif remaining:
            kept[question_id] = remaining
    chunks = {doc_id: held_out[doc_id] for _, doc_id in rows}
    return kept, HeldOutLabels(chunks, tuple(rows), tuple(left_out), documents, len(held_out))


def check_judged_ids(
    path: Path, judged: Sequence[tuple[str, str]], documents: Collection[str], held_out: Mapping[str, str], corpus: Path
) -> None:
    """Every judged ``(where, chunk id)`` of ``path`` names a document of the corpus or a held-out
    chunk; an InputError names the others (where: a line, a question id), the first few and the count."""
    unknown = [
        (where, chunk_id) for where, chunk_id in judged if chunk_id not in documents and chunk_id not in held_out
    ]
    if unknown:
        listed = ", ".join(f"{chunk_id!r} ({where})" for where, chunk_id in unknown[:EXAMPLES])
        raise InputError(
            f"{path}: gold chunk ids neither in the synthetic benchmark's corpus ({corpus}) nor among "
            f"the {len(held_out):,} chunks it holds out, {len(unknown)}: {listed}"
            f"{', …' if len(unknown) > EXAMPLES else ''}; label the questions against the same "
            "collection (re-find the ids by evidence: benchmarks/validity.py --update-data)"
        )
