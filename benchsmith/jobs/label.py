"""``benchsmith.label``: the user's own questions labelled in the browser over pooled passages of an
ingested collection (TREC pooling, 0-3 grades), each judgment saved as it is made, a second
assessor's sample for Cohen's κ, and a BEIR folder that `benchsmith validate` reads as ``--human``.

A labelling run is resumable like every job: the same call with the same ``run_id`` reopens the
page where the assessor stopped (its pools, its judgments and its corpus are in the run's folder).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import chromadb.errors

from benchsmith.graphs.runtime.corpus_indexes import CorpusFile
from benchsmith.graphs.runtime.resources import chroma_client
from benchsmith.jobs.common import check_collection_name, check_within, checked_run_id
from benchsmith.jobs.label_session import (
    BEIR_DIR,
    Agreement,
    LabelSession,
    build_pools,
    collection_dense,
    write_collection_corpus,
)
from benchsmith.jobs.page_runs import recorded_config, run_page
from benchsmith.pages.server import LOOPBACK, Address, Listener, check_host
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.beir import BenchmarkQuery
from benchsmith.stores.formats.query_files import read_user_queries
from benchsmith.stores.persistence.judgments import read_pools
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.retrieval.label_pools import DEFAULT_POOL_DEPTH, DEFAULT_SECOND_SAMPLE
from benchsmith.tools.retrieval.retriever_specs import parse_retriever

LABEL_RETRIEVERS = ("bm25", "dense", "hybrid:rrf(dense,bm25)")
DEFAULT_ASSESSOR = "assessor"
DEFAULT_PORT = 8765
MAX_POOL_DEPTH = 100


@dataclass(frozen=True)
class LabelResult:
    run_id: str
    run_dir: Path
    assessor: str  # the run's first assessor, whose grades are the qrels
    questions: int
    questions_judged: int
    pairs: int  # (question, passage) pairs in the pools
    judged: int  # pairs the first assessor graded
    relevant: int  # of them graded 1 or more
    mean_seconds: float | None  # per judgment, the first assessor's
    agreements: tuple[Agreement, ...]  # κ between the first assessor and each other one
    beir: Path  # corpus.jsonl, queries.jsonl, qrels/test.tsv: `validate --human` reads it


def label(
    questions: str | Path | None = None,
    *,
    collection: str | None = None,
    retrievers: Sequence[str] | None = None,
    depth: int = DEFAULT_POOL_DEPTH,
    assessor: str = DEFAULT_ASSESSOR,
    second_sample: float = DEFAULT_SECOND_SAMPLE,
    seed: int = 0,
    host: str = LOOPBACK,
    port: int = DEFAULT_PORT,
    serve_page: bool = True,
    on_ready: Callable[[Address], None] | None = None,
    run_id: str | None = None,
    workspace: str | Path | None = None,
    chroma_host: str | None = None,
) -> LabelResult:
    """Pool the passages of ``collection`` for each question of ``questions`` (a text file, one
    question a line; a JSONL file; BEIR queries.jsonl or its folder): the union of the top ``depth`` of
    each of ``retrievers`` (default BM25, dense, and their RRF fusion), shown in a seeded random order;
    then serve the labelling page on ``host``:``port`` (``on_ready`` gets its address) until Ctrl-C,
    SIGTERM or ``KeyboardInterrupt``, and write the BEIR export. ``assessor`` names who labels: the
    run's first assessor labels every pair, any other ``second_sample`` of them (for Cohen's κ).
    ``serve_page=False`` only builds the pools and writes the export. The same ``run_id`` resumes."""
    check_host(host, port)
    labelled = _checked_run(locals())
    listener = Listener(host, port) if serve_page else None  # a port in use stops here, before the run record
    summary = run_page(
        labelled.run_dir,
        "label",
        labelled.settings,
        lambda: labelled.session(assessor),
        listener,
        on_ready,
        resume=_resume_command(labelled.run_dir.run_id),
    )
    return LabelResult(
        run_id=labelled.run_dir.run_id,
        run_dir=labelled.run_dir.path,
        assessor=summary["assessor"],
        questions=summary["questions"],
        questions_judged=summary["questions_judged"],
        pairs=summary["pairs"],
        judged=summary["judged"],
        relevant=summary["relevant"],
        mean_seconds=summary["mean_seconds"],
        agreements=tuple(Agreement(**agreement) for agreement in summary["agreements"]),
        beir=labelled.run_dir.file(BEIR_DIR),
    )


def open_label_session(
    questions: str | Path,
    *,
    collection: str,
    retrievers: Sequence[str] | None = None,
    depth: int = DEFAULT_POOL_DEPTH,
    assessor: str = DEFAULT_ASSESSOR,
    second_sample: float = DEFAULT_SECOND_SAMPLE,
    seed: int = 0,
    run_id: str,
    workspace: str | Path | None = None,
    chroma_host: str | None = None,
) -> LabelSession:
    """The page's session of a labelling run, without a server (for an app's own page, and for
    measuring the page's answers: benchmarks/label_page_latency.py). Holds no claim on the run."""
    labelled = _checked_run(locals())
    labelled.run_dir.start("label", labelled.settings, resume=_resume_command(labelled.run_dir.run_id))
    return labelled.session(assessor)


@dataclass(frozen=True)
class _LabelRun:
    """A labelling run as a call names it: its folder, its settings (checked, or as recorded) and
    its questions, over a collection found in the workspace."""

    workspace: Workspace
    chroma_host: str | None
    run_dir: RunDirectory
    settings: dict[str, Any]
    queries: list[BenchmarkQuery]

    def session(self, assessor: str) -> LabelSession:
        """The page's session for ``assessor``: the corpus written and every missing pool built."""
        settings, run_dir = self.settings, self.run_dir
        corpus_path = run_dir.file(BEIR_DIR) / "corpus.jsonl"
        write_collection_corpus(self.workspace, self.chroma_host, settings["collection"], corpus_path)
        corpus = CorpusFile(corpus_path)
        dense = (
            collection_dense(self.workspace, self.chroma_host, settings["collection"], settings["retrievers"])
            if _missing_pools(run_dir, self.queries)
            else None  # every pool built: no index is loaded again
        )
        pools = build_pools(
            self.queries,
            corpus,
            settings["retrievers"],
            settings["depth"],
            settings["seed"],
            dense,
            run_dir.file("pools.jsonl"),
        )
        return LabelSession(
            run_dir.path,
            self.queries,
            corpus,
            pools,
            assessor=assessor,
            first_assessor=settings["assessor"],
            second_share=settings["second_sample"],
            seed=settings["seed"],
        )


# What a labelling run records; the other arguments say where it runs and who labels now.
_RECORDED_ARGUMENTS = ("questions", "collection", "retrievers", "depth", "assessor", "second_sample", "seed")


def _checked_run(arguments: Mapping[str, Any]) -> _LabelRun:
    """The run a call of :func:`label` or :func:`open_label_session` (its ``locals()``) names,
    every argument checked before the run record is made."""
    resolved = Workspace.resolve(arguments["workspace"])
    run_dir = RunDirectory(resolved, checked_run_id(arguments["run_id"], "label"))
    settings = _checked_settings(
        recorded_config(run_dir, "label"), **{name: arguments[name] for name in _RECORDED_ARGUMENTS}
    )
    queries = _questions(Path(settings["questions"]))
    _check_collection(resolved, arguments["chroma_host"], settings["collection"], settings["retrievers"])
    return _LabelRun(resolved, arguments["chroma_host"], run_dir, settings, queries)


def _missing_pools(run_dir: RunDirectory, queries: list[BenchmarkQuery]) -> bool:
    built = read_pools(run_dir.file("pools.jsonl"))
    return any(query.id not in built for query in queries)


def _checked_settings(recorded: dict[str, Any] | None, **given: Any) -> dict[str, Any]:
    """The run's settings: a new run's from the arguments (checked), a resumed run's as recorded
    (its questions and collection, if given again, must be the same)."""
    if not isinstance(given["assessor"], str) or not given["assessor"].strip():
        raise InputError("--assessor: give a name")
    if recorded is not None:
        questions = given["questions"]
        if questions is not None and str(Path(questions).resolve()) != recorded["questions"]:
            raise InputError(
                f"run labels {recorded['questions']}, not {questions}: resume without QUESTIONS or choose another --run-id"
            )
        if given["collection"] not in (None, recorded["collection"]):
            raise InputError(f"run labels collection {recorded['collection']!r}, not {given['collection']!r}")
        return recorded
    if given["questions"] is None:
        raise InputError("give the QUESTIONS file to label (or --run-id of a labelling run to resume)")
    if not given["collection"]:
        raise InputError("--collection: name the ingested collection whose passages are labelled")
    check_collection_name(given["collection"])
    check_within(1, MAX_POOL_DEPTH, depth=given["depth"])
    check_within(0.0, 1.0, second_sample=given["second_sample"])
    retrievers = list(dict.fromkeys(given["retrievers"] or LABEL_RETRIEVERS))
    for spec in retrievers:
        parse_retriever(spec)
    return {
        "questions": str(Path(given["questions"]).resolve()),
        "collection": given["collection"],
        "retrievers": retrievers,
        "depth": int(given["depth"]),
        "assessor": given["assessor"].strip(),
        "second_sample": float(given["second_sample"]),
        "seed": int(given["seed"]),
    }


def _questions(path: Path) -> list[BenchmarkQuery]:
    """The questions of a text file, a JSONL file, or a BEIR folder's queries.jsonl."""
    if path.is_dir():
        if not (path / "queries.jsonl").is_file():
            raise InputError(f"{path}: a folder without queries.jsonl; give a text, JSONL or BEIR queries file")
        path = path / "queries.jsonl"
    return read_user_queries(path)


def _check_collection(workspace: Workspace, chroma_host: str | None, collection: str, retrievers: list[str]) -> None:
    """The collection exists, and a dense retriever names the embedder it was built with (a dense
    retriever over the collection reads its stored vectors)."""
    try:
        metadata = chroma_client(workspace, chroma_host).get_collection(collection).metadata or {}
    except (chromadb.errors.NotFoundError, ValueError):
        raise InputError(
            f"no collection {collection!r} in this workspace: run `benchsmith ingest ... --collection {collection}` first"
        ) from None
    built_with = str(metadata.get("embedder") or "")
    for text in retrievers:
        spec = parse_retriever(text)
        for part in (spec, *spec.components):
            if part.kind == "dense" and part.model not in (None, built_with):
                raise InputError(
                    f"--retriever {text}: collection {collection!r} was embedded with {built_with!r}; "
                    "a dense retriever over it uses that embedder (give 'dense')"
                )


def _resume_command(run_id: str) -> str:
    return shlex.join(["benchsmith", "label", "--run-id", run_id])
