"""What the labelling page asks of a labelling run: its questions, each question's pool (built once
and kept in the run's pools.jsonl), the queue of (question, document) pairs an assessor labels
(every pair for the run's first assessor, a seeded sample for any other), each judgment saved as
it is made, progress, Cohen's κ between assessors, and the BEIR export `validate` reads.

The page never sees a model's verdict: none is computed (in the assessment studies issue 33 cites,
labels made with model assistance shown did not agree better with fully manual ones)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchsmith.evals.measures.agreement import cohen_kappa
from benchsmith.graphs.runtime.corpus_indexes import CorpusFile, document_text
from benchsmith.graphs.runtime.resources import chroma_client, embedder_for
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.beir import BenchmarkQuery
from benchsmith.stores.formats.benchmark_files import write_beir_qrels
from benchsmith.stores.persistence.files import write_json_atomic
from benchsmith.stores.persistence.jsonl import write_jsonl_atomic
from benchsmith.stores.persistence.judgments import (
    JUDGMENTS_FILE,
    Judgment,
    JudgmentLog,
    append_pool,
    read_pools,
)
from benchsmith.stores.persistence.vectors import VectorStore
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.retrieval.bm25 import BM25Index
from benchsmith.tools.retrieval.dense_retrieval import DenseIndex
from benchsmith.tools.retrieval.embedding import ChromaEmbeddingFunction
from benchsmith.tools.retrieval.fusion import fuse_runs
from benchsmith.tools.retrieval.label_pools import (
    excerpt_bounds,
    pooled,
    question_terms,
    second_sample,
    shown_order,
    term_spans,
)
from benchsmith.tools.retrieval.retriever_specs import RetrieverSpec, parse_retriever

BEIR_DIR = "beir"  # corpus.jsonl (the collection's chunks), queries.jsonl, qrels/test.tsv
AGREEMENT_FILE = "agreement.json"
FUSION_CANDIDATES = 100  # documents per component run a fusion ranks


@dataclass(frozen=True)
class Agreement:
    """Cohen's κ between the run's first assessor and each other one, over the pairs both graded."""

    assessor: str
    other: str
    pairs: int
    cohen_kappa: float | None

    def to_json(self) -> dict[str, Any]:
        return {"assessor": self.assessor, "other": self.other, "pairs": self.pairs, "cohen_kappa": self.cohen_kappa}


def write_collection_corpus(workspace: Workspace, chroma_host: str | None, collection: str, path: Path) -> None:
    """The collection's chunks as a BEIR corpus (once: the run's corpus stays the one it labelled)."""
    if path.is_file():
        return
    store = VectorStore.open_existing(
        chroma_client(workspace, chroma_host), collection, lambda spec: ChromaEmbeddingFunction(spec=spec)
    )
    records = (
        {"_id": chunk_id, "title": str((metadata or {}).get("title") or ""), "text": text}
        for page in store.iter_all()
        for chunk_id, text, metadata in zip(page["ids"], page["documents"], page["metadatas"])
    )
    if write_jsonl_atomic(path, records) == 0:
        path.unlink(missing_ok=True)
        raise InputError(f"collection {collection!r} is empty")


def build_pools(
    questions: Sequence[BenchmarkQuery],
    corpus: CorpusFile,
    retrievers: Sequence[str],
    depth: int,
    seed: int,
    dense: tuple[DenseIndex, Any] | None,
    pools_path: Path,
) -> dict[str, list[str]]:
    """Each question's pool, read from ``pools_path`` or built (and appended there) once."""
    pools = read_pools(pools_path)
    missing = [question for question in questions if question.id not in pools]
    if not missing:
        return pools
    specs = [parse_retriever(spec) for spec in retrievers]
    queries = {question.id: question.text for question in missing}
    runs: dict[str, dict[str, dict[str, float]]] = {}
    wanted = max(depth, FUSION_CANDIDATES)
    if any(part.kind == "bm25" for spec in specs for part in (spec, *spec.components)):
        bm25 = BM25Index.from_stream((doc_id, document_text(*corpus[doc_id])) for doc_id in corpus)
        runs["bm25"] = bm25.search(queries, wanted)
    if any(part.kind == "dense" for spec in specs for part in (spec, *spec.components)):
        assert dense is not None
        index, embedder = dense
        ids = list(queries)
        runs["dense"] = index.search(ids, embedder.encode([queries[query_id] for query_id in ids]), wanted)
    for question in missing:
        rankings = [_ranking(spec, runs, question.id) for spec in specs]
        order = shown_order(pooled(rankings, depth), seed, question.id)
        append_pool(pools_path, question.id, order)
        pools[question.id] = order
    return pools


def _ranking(spec: RetrieverSpec, runs: Mapping[str, Mapping[str, Mapping[str, float]]], query_id: str) -> list[str]:
    if spec.kind != "hybrid":
        scores = runs["bm25" if spec.kind == "bm25" else "dense"].get(query_id, {})
        return sorted(scores, key=lambda doc_id: -scores[doc_id])
    components = [{query_id: dict(runs[part.kind].get(query_id, {}))} for part in spec.components]
    fused = fuse_runs(components, spec.method, spec.weights)  # type: ignore[arg-type]
    scores = fused.get(query_id, {})
    return sorted(scores, key=lambda doc_id: -scores[doc_id])


def collection_dense(
    workspace: Workspace, chroma_host: str | None, collection: str, retrievers: Sequence[str]
) -> tuple[DenseIndex, Any] | None:
    """The collection's stored vectors and the embedder that made them, when a retriever is dense:
    a dense retriever over the collection uses its own embedder (jobs/label.py checks it is asked for)."""
    specs = [parse_retriever(spec) for spec in retrievers]
    if not any(part.kind == "dense" for spec in specs for part in (spec, *spec.components)):
        return None
    store = VectorStore.open_existing(
        chroma_client(workspace, chroma_host), collection, lambda spec: ChromaEmbeddingFunction(spec=spec)
    )
    built_with = str((store.collection.metadata or {}).get("embedder") or "")
    return DenseIndex.from_store(store), embedder_for(built_with, workspace)


class LabelSession:
    """One assessor's page over a labelling run."""

    def __init__(
        self,
        run_dir: Path,
        questions: Sequence[BenchmarkQuery],
        corpus: CorpusFile,
        pools: Mapping[str, Sequence[str]],
        *,
        assessor: str,
        first_assessor: str,
        second_share: float,
        seed: int,
    ):
        self.run_dir = run_dir
        self.questions = {question.id: question for question in questions}
        self.corpus = corpus
        self.pools = pools
        self.assessor = assessor
        self.first_assessor = first_assessor
        self.log = JudgmentLog(run_dir / JUDGMENTS_FILE)
        self.all_pairs = [(question.id, doc_id) for question in questions for doc_id in pools[question.id]]
        self.sample = second_sample(self.all_pairs, second_share, seed)
        self.queue = self.all_pairs if assessor == first_assessor else self.sample
        self._terms = {question_id: question_terms(question.text) for question_id, question in self.questions.items()}

    # What the page asks (benchsmith/pages/server.py routes /api/<route> here).

    page = "label"

    def answer(self, method: str, route: str, query: dict[str, str], body: dict[str, Any] | None) -> Any:
        if (method, route) == ("GET", "state"):
            return self.state()
        if (method, route) == ("GET", "item"):
            return self.item(int(query.get("index", "0")))
        if (method, route) == ("POST", "judge") and body is not None:
            grade = body.get("grade")
            if grade is not None and (isinstance(grade, bool) or grade not in (0, 1, 2, 3)):
                raise ValueError(f"grade {grade!r}: use 0, 1, 2 or 3 (or null to skip)")
            note = body.get("note") or ""
            if not isinstance(note, str):
                raise ValueError("note: a string")
            return self.judge(int(body["index"]), grade, note[:2000], float(body.get("seconds") or 0.0))
        raise LookupError(route)

    def state(self) -> dict[str, Any]:
        judged = [self.log.get(question, doc_id, self.assessor) for question, doc_id in self.queue]
        done = sum(judgment is not None for judgment in judged)
        times = [judgment.seconds for judgment in judged if judgment is not None and judgment.grade is not None]
        first_open = next((index for index, judgment in enumerate(judged) if judgment is None), len(self.queue))
        return {
            "assessor": self.assessor,
            "role": "first" if self.assessor == self.first_assessor else "second",
            "total": len(self.queue),
            "done": done,
            "left": len(self.queue) - done,
            "mean_seconds": round(sum(times) / len(times), 2) if times else None,
            "questions": len(self.questions),
            "next": first_open,
        }

    def item(self, index: int) -> dict[str, Any]:
        if not 0 <= index < len(self.queue):
            raise IndexError(index)
        question_id, doc_id = self.queue[index]
        title, text = self.corpus[doc_id]
        terms = self._terms[question_id]
        start, end = excerpt_bounds(text, terms)
        judgment = self.log.get(question_id, doc_id, self.assessor)
        pool = self.pools[question_id]
        return {
            "index": index,
            "total": len(self.queue),
            "question_id": question_id,
            "question": self.questions[question_id].text,
            "doc_id": doc_id,
            "title": title,
            "text": text,
            "excerpt": [start, end],
            "marks": term_spans(text, terms),
            "in_pool": [pool.index(doc_id) + 1, len(pool)],
            "grade": judgment.grade if judgment else None,
            "judged": judgment is not None,
            "note": judgment.note if judgment else "",
        }

    def judge(self, index: int, grade: int | None, note: str = "", seconds: float = 0.0) -> dict[str, Any]:
        question_id, doc_id = self.queue[index]
        self.log.record(Judgment(question_id, doc_id, self.assessor, grade, note, round(float(seconds), 3)))
        return self.state()

    # What the run reports and exports.

    def agreements(self) -> list[Agreement]:
        latest = self.log.latest()
        grades: dict[str, dict[tuple[str, str], int]] = {}
        for judgment in latest:
            if judgment.grade is not None:
                grades.setdefault(judgment.assessor, {})[(judgment.question, judgment.doc_id)] = judgment.grade
        first = grades.get(self.first_assessor, {})
        found = []
        for other, theirs in sorted(grades.items()):
            if other == self.first_assessor:
                continue
            common = [pair for pair in theirs if pair in first]
            found.append(
                Agreement(
                    self.first_assessor,
                    other,
                    len(common),
                    cohen_kappa([first[pair] for pair in common], [theirs[pair] for pair in common]),
                )
            )
        return found

    def export(self) -> dict[str, Any]:
        """The first assessor's grades as BEIR qrels over the collection (queries judged at least
        once; skipped pairs left out), and the agreement between assessors; returns the summary."""
        beir = self.run_dir / BEIR_DIR
        graded = [
            judgment
            for judgment in self.log.latest()
            if judgment.assessor == self.first_assessor and judgment.grade is not None
        ]
        judged_questions = {judgment.question for judgment in graded}
        write_jsonl_atomic(
            beir / "queries.jsonl",
            ({"_id": q.id, "text": q.text} for q in self.questions.values() if q.id in judged_questions),
        )
        rows = sorted((j.question, j.doc_id, j.grade) for j in graded if j.grade is not None)
        write_beir_qrels(beir / "qrels" / "test.tsv", rows)
        agreements = [agreement.to_json() for agreement in self.agreements()]
        write_json_atomic(self.run_dir / AGREEMENT_FILE, {"agreements": agreements})
        seconds = [j.seconds for j in graded]
        return {
            "assessor": self.first_assessor,
            "questions": len(self.questions),
            "questions_judged": len(judged_questions),
            "pairs": len(self.all_pairs),
            "judged": len(graded),
            "relevant": sum(1 for j in graded if j.grade and j.grade > 0),
            "mean_seconds": round(sum(seconds) / len(seconds), 2) if seconds else None,
            "agreements": agreements,
            "beir": str(beir),
        }
