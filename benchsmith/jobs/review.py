"""``benchsmith.review``: read a synthesized benchmark turn by turn in the browser and accept each
turn, reject it with a class of the reading rubric (data/readings/RUBRIC.md), or edit its question
(the original kept beside the edit). Verdicts are saved as made, in a review run of their own
(resumable by run id); `publish` and the review's BEIR folder leave rejected turns out and count them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchsmith.graphs.runtime.corpus_indexes import CorpusFile
from benchsmith.graphs.runtime.resources import chroma_client
from benchsmith.graphs.synthesis.state import BEIR_DIR
from benchsmith.jobs.common import checked_run_id
from benchsmith.jobs.page_runs import recorded_config, run_page
from benchsmith.jobs.publish import _synthesis_run
from benchsmith.jobs.review_session import REVIEWED_BEIR_DIR, ReviewSession
from benchsmith.pages.server import LOOPBACK, Address, Listener, check_host
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.benchmark_files import DIALOGUES_FILE, read_dialogues
from benchsmith.stores.persistence.runs import RunDirectory, RunRecord
from benchsmith.stores.persistence.vectors import VectorStore
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.retrieval.embedding import ChromaEmbeddingFunction

DEFAULT_REVIEWER = "reviewer"
DEFAULT_PORT = 8766


@dataclass(frozen=True)
class ReviewResult:
    run_id: str
    run_dir: Path
    benchmark: str  # the synthesis run reviewed
    turns: int
    reviewed: int
    accepted: int
    rejected: int  # left out of `publish` and the review's BEIR folder
    edited: int
    gate_agreement: dict[str, Any] = field(default_factory=dict)  # gate flags against rejections: counts and κ
    readings: Path = Path()  # the verdicts in the readings format (data/readings/README.md)
    beir: Path = Path()  # the benchmark without its rejected turns


def review(
    run: str | Path,
    *,
    reviewer: str = DEFAULT_REVIEWER,
    host: str = LOOPBACK,
    port: int = DEFAULT_PORT,
    serve_page: bool = True,
    on_ready: Callable[[Address], None] | None = None,
    run_id: str | None = None,
    workspace: str | Path | None = None,
    chroma_host: str | None = None,
) -> ReviewResult:
    """Serve the review page of the finished synthesis run ``run`` (its id or folder) on
    ``host``:``port`` until Ctrl-C or SIGTERM, then write the readings and the reviewed BEIR folder;
    ``serve_page=False`` writes them only. The same ``run_id`` resumes a review."""
    if not isinstance(reviewer, str) or not reviewer.strip():
        raise InputError("--reviewer: give a name")
    check_host(host, port)
    resolved = Workspace.resolve(workspace)
    benchmark_dir, record = _synthesis_run(resolved, run)
    review_id = checked_run_id(run_id, "review")
    run_dir = RunDirectory(resolved, review_id)
    recorded = recorded_config(run_dir, "review")
    if recorded is not None and recorded.get("benchmark") != benchmark_dir.run_id:
        raise InputError(f"review {review_id!r} reviews {recorded.get('benchmark')!r}, not {run!r}")
    listener = Listener(host, port) if serve_page else None  # a port in use stops here, before the run record
    summary = run_page(
        run_dir,
        "review",
        {"benchmark": benchmark_dir.run_id, "reviewer": reviewer.strip()},
        lambda: review_session(resolved, chroma_host, run_dir, benchmark_dir, record, reviewer.strip()),
        listener,
        on_ready,
    )
    return ReviewResult(
        run_id=review_id,
        run_dir=run_dir.path,
        benchmark=benchmark_dir.run_id,
        turns=summary["turns"],
        reviewed=summary["reviewed"],
        accepted=summary["accept"],
        rejected=summary["reject"],
        edited=summary["edit"],
        gate_agreement=summary["gate_agreement"],
        readings=Path(summary["readings"]),
        beir=run_dir.file(REVIEWED_BEIR_DIR),
    )


def review_session(
    workspace: Workspace,
    chroma_host: str | None,
    run_dir: RunDirectory,
    benchmark_dir: RunDirectory,
    record: RunRecord,
    reviewer: str,
) -> ReviewSession:
    dialogues = [dialogue.model_dump() for dialogue in read_dialogues(benchmark_dir.file(DIALOGUES_FILE))]
    corpus_path = benchmark_dir.file(BEIR_DIR) / "corpus.jsonl"
    corpus = CorpusFile(corpus_path)
    collection = str(record.config.get("collection") or "")
    outside = sorted(
        {
            chunk_id
            for dialogue in dialogues
            for turn in dialogue["turns"]
            for key in ("gold_ids", "held_out_ids", "candidate_ids")
            for chunk_id in turn.get(key, [])
            if chunk_id not in corpus
        }
    )
    extra: dict[str, tuple[str, str]] = {}
    if outside and collection:
        with suppress(InputError):  # a collection deleted since: the page says the passage is gone
            store = VectorStore.open_existing(
                chroma_client(workspace, chroma_host), collection, lambda spec: ChromaEmbeddingFunction(spec=spec)
            )
            extra = {
                chunk_id: (str(found.get("title") or ""), str(found.get("text") or ""))
                for chunk_id, found in store.fetch(outside).items()
            }
    return ReviewSession(
        run_dir.path,
        benchmark_dir.run_id,
        dialogues,
        _Passages(corpus, extra),
        corpus_path,
        reviewer=reviewer,
        collection=collection,
        history_window=record.config.get("history_window"),
    )


class _Passages(Mapping[str, tuple[str, str]]):
    """The benchmark's corpus, and the chunks it leaves out read from the collection."""

    def __init__(self, corpus: CorpusFile, extra: dict[str, tuple[str, str]]):
        self.corpus, self.extra = corpus, extra

    def __getitem__(self, chunk_id: str) -> tuple[str, str]:
        return self.extra[chunk_id] if chunk_id in self.extra else self.corpus[chunk_id]

    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id in self.extra or chunk_id in self.corpus

    def __iter__(self) -> Iterator[str]:
        yield from self.corpus
        yield from (chunk_id for chunk_id in self.extra if chunk_id not in self.corpus)

    def __len__(self) -> int:
        return len(self.corpus) + sum(1 for chunk_id in self.extra if chunk_id not in self.corpus)
