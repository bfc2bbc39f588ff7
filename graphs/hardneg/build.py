"""Multi-condition queries with hard negatives (MultiConIR: Lu et al., 2025).

    load ─→ dispatch ─→ Send × source documents not yet built ─→ build ─→ export ─→ END
                └──────────────────── (all built) ───────────────────────┘

``load`` reads the source documents once (a collection's chunks, or files cleaned as ingestion
cleans them), cuts each to ``max_chars`` and samples them (``sources.jsonl``). ``build`` makes
one dataset row per source document:

1. the condition extractor picks N sentences; only those found verbatim (up to whitespace),
   once, and not overlapping are kept; fewer than N drops the document;
2. the query writer states each sentence's condition and writes the descriptive-style queries
   for k = 1..N; the instruction-style ones follow a fixed template;
3. the negative rewriter rewrites each sentence so that its condition no longer holds
   (``subtle``: one critical fact changed; ``misleading``: a clause added, keywords kept);
4. hard-negative documents by sentence replacement: the ladder HN_1..HN_N (conditions 1..j
   rewritten) and the single-miss set Miss_1..Miss_N (condition k rewritten);
5. the judge lists the query's conditions each document satisfies; a document whose count
   disagrees with its construction has its blamed sentences rewritten once and is judged
   again, then dropped if it still disagrees; a positive that fails drops the row.

Each finished row (kept or dropped, with the reason) is appended to ``rows.jsonl`` once, so a
resumed run rebuilds no finished document; model calls go through the seam's cache.
``export`` writes the CSVs in the reference layout (``multiconir/``), a BEIR export per task
(``beir/task1``, ``beir/task2``, ``beir/task3``) and ``stats.json`` with every count.
"""

from __future__ import annotations

import functools
import operator
import random
from pathlib import Path
from typing import Annotated, Any, Literal, Required

from langgraph.graph import END, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send
from typing_extensions import TypedDict

from benchsmith.graphs.contexts.hardneg import HardnegContext
from benchsmith.graphs.hardneg.exports import beir_exports, build_statistics, dataset_row
from benchsmith.graphs.hardneg.rows import RowAgents, build_row
from benchsmith.graphs.runtime.fanout import add_fan_out, sends_for_missing
from benchsmith.graphs.runtime.job_runtime import JobRuntime
from benchsmith.graphs.runtime.progress import progress_reporter, report_advance
from benchsmith.graphs.runtime.resources import chroma_client, run_seam
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.benchmark_files import canonicalize, write_beir
from benchsmith.stores.formats.multiconir import write_dataset
from benchsmith.stores.persistence.files import write_json_atomic
from benchsmith.stores.persistence.jsonl import RecordLog, load_jsonl, record_log, records_by, write_jsonl_atomic
from benchsmith.stores.persistence.vectors import VectorStore
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.benchmark.condition_documents import (
    RelatedDocuments,
    leading_part,
)
from benchsmith.tools.corpus.cleaning import clean_documents
from benchsmith.tools.corpus.loaders import load_sources
from benchsmith.tools.retrieval.embedding import ChromaEmbeddingFunction

SOURCES_FILE, ROWS_FILE, STATS_FILE = "sources.jsonl", "rows.jsonl", "stats.json"
MULTICONIR_DIR, BEIR_DIR = "multiconir", "beir"


class HardnegInput(TypedDict, total=False):
    run_id: Required[str]
    sources: list[str]  # directories, files, a BEIR corpus.jsonl or 'stdlib'...
    collection: str  # ...or an ingested collection, one source document per chunk


class HardnegOutput(TypedDict, total=False):
    run_id: str
    documents: int  # source documents after sampling
    rows: int  # kept rows (at least one task complete)
    task_rows: dict[str, int]  # rows with a complete single-miss set (task1) and ladder (task2, task3)
    dropped: dict[str, int]  # source documents dropped, by reason
    verification: dict[str, int]  # documents verified first time, rebuilt then verified, dropped
    files: dict[str, str]


class HardnegState(HardnegInput, HardnegOutput, total=False):  # type: ignore[misc]  # LangGraph's state merges input and output: a key required on input may be left out of the output
    built: Annotated[int, operator.add]


class BuildTask(TypedDict):
    run_id: str
    document_id: str


job = JobRuntime(HardnegContext)  # the runtime's settings, workspace and run directories


def _rows_log(runtime: Runtime[HardnegContext], run_id: str) -> RecordLog:
    return record_log(job.run_dir(runtime, run_id).file(ROWS_FILE), "id")


def _sources(runtime: Runtime[HardnegContext], run_id: str) -> dict[str, dict[str, Any]]:
    return records_by(job.run_dir(runtime, run_id).file(SOURCES_FILE), "id")


@functools.lru_cache(maxsize=2)
def _related_in(path: Path, modified: float) -> RelatedDocuments:
    return RelatedDocuments({document_id: record["text"] for document_id, record in records_by(path, "id").items()})


def _related_texts(runtime: Runtime[HardnegContext], run_id: str, document_id: str) -> list[str]:
    """The texts of the source documents most like this one (where baseline swaps find names)."""
    path = job.run_dir(runtime, run_id).file(SOURCES_FILE)
    sources = records_by(path, "id")
    return [sources[other]["text"] for other in _related_in(path, path.stat().st_mtime).of(document_id)]


def read_source_documents(
    workspace: Workspace, chroma_host: str | None, sources: list[str] | None, collection: str | None
) -> list[dict[str, str]]:
    """``{"id", "title", "text"}`` per source document: a collection's chunks, or the cleaned documents
    of the sources (as ingestion loads and cleans them)."""
    if collection:
        client = chroma_client(workspace, chroma_host)
        store = VectorStore.open_existing(client, collection, lambda spec: ChromaEmbeddingFunction(spec=spec))
        return [
            {"id": chunk_id, "title": str((metadata or {}).get("title", "")), "text": text}
            for page in store.iter_all()
            for chunk_id, text, metadata in zip(page["ids"], page["documents"], page["metadatas"])
        ]
    if not sources:
        raise InputError("give source files or directories, or --collection")
    documents = clean_documents(load_sources(list(sources)).documents)
    return [{"id": document.id, "title": document.title, "text": document.text} for document in documents]


def load(state: HardnegState, runtime: Runtime[HardnegContext]) -> dict[str, Any]:
    """Read, cut and sample the source documents once (``sources.jsonl``); a resumed run keeps them."""
    path = job.run_dir(runtime, state["run_id"]).file(SOURCES_FILE)
    if path.exists():
        return {"documents": len(load_jsonl(path))}
    context = job.context(runtime)
    documents = read_source_documents(
        job.workspace(runtime), context.chroma_host, state.get("sources"), state.get("collection")
    )
    if not documents:
        raise InputError(f"collection {state.get('collection')!r} is empty")
    if context.sample is not None and context.sample < len(documents):
        chosen = set(random.Random(f"{context.seed}:sample").sample(sorted(d["id"] for d in documents), context.sample))
        documents = [document for document in documents if document["id"] in chosen]
    records = [
        {
            **document,
            "text": leading_part(document["text"], context.max_chars),
            "cut": len(document["text"]) > context.max_chars,
        }
        for document in documents
    ]
    return {"documents": write_jsonl_atomic(path, records)}


def dispatch(state: HardnegState, runtime: Runtime[HardnegContext]) -> list[Send] | Literal["export"]:
    """One build per source document not yet in rows.jsonl (kept or dropped)."""
    built = _rows_log(runtime, state["run_id"]).ids()
    sources = _sources(runtime, state["run_id"])
    progress_reporter("documents")(len(built & sources.keys()), len(sources))
    return sends_for_missing("build", state["run_id"], "document_id", sources, built) or "export"


def build(task: BuildTask, runtime: Runtime[HardnegContext]) -> dict[str, Any]:
    """One source document's row, appended to rows.jsonl once."""
    run_id = task["run_id"]
    source = _sources(runtime, run_id)[task["document_id"]]
    record = job.run_item(
        runtime,
        run_id,
        built_row,
        {"run_id": run_id, "source": source, "related": _related_texts(runtime, run_id, task["document_id"])},
    )
    job.run_dir(runtime, run_id).usage.sync()  # the calls this row paid for are durable before the row
    _rows_log(runtime, run_id).append_once(record)
    report_advance("documents")
    return {"built": 1}


def built_row(task: dict[str, Any], context: HardnegContext) -> dict[str, Any]:
    """One source document's row: the work of one item, here or on a Ray node. The task carries
    the document and the related texts: a node reads no run file."""
    workspace = Workspace.resolve(context.workspace)
    seams = [run_seam(workspace, task["run_id"], spec, context) for spec in (context.llm, context.judge or context.llm)]
    return build_row(task["source"], RowAgents(*seams), context, task["related"])


def export(state: HardnegState, runtime: Runtime[HardnegContext]) -> HardnegOutput:
    """The reference-layout CSVs, a BEIR export per task and the counts."""
    context = job.context(runtime)
    run_dir = job.run_dir(runtime, state["run_id"])
    order = {document_id: position for position, document_id in enumerate(_sources(runtime, state["run_id"]))}
    records = sorted(canonicalize(run_dir.file(ROWS_FILE), key="id"), key=lambda record: order.get(record["id"], 0))
    kept = [dataset_row(record) for record in records if record["status"] == "kept"]
    files = {
        kind: str(path) for kind, path in write_dataset(run_dir.file(MULTICONIR_DIR), kept, context.conditions).items()
    }
    for task, (corpus, queries, qrels) in beir_exports(kept, context.conditions).items():
        write_beir(run_dir.file(BEIR_DIR) / task, corpus, queries, qrels)
        files[f"beir_{task}"] = str(run_dir.file(BEIR_DIR) / task)
    stats = build_statistics(records, context.conditions)
    write_json_atomic(run_dir.file(STATS_FILE), stats)
    files.update(rows=str(run_dir.file(ROWS_FILE)), stats=str(run_dir.file(STATS_FILE)))
    return {
        "documents": len(order),
        "rows": len(kept),
        "task_rows": stats["task_rows"],
        "dropped": stats["dropped"],
        "verification": stats["verification"],
        "files": files,
    }


builder = StateGraph(
    HardnegState, context_schema=HardnegContext, input_schema=HardnegInput, output_schema=HardnegOutput
)
add_fan_out(builder, plan=load, dispatch=dispatch, work=build, finish=export, in_batches=False)
builder.add_edge("export", END)

graph = builder.compile(name="hardneg")  # the Studio copy: no checkpointer (the server brings its own)
