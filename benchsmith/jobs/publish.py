"""Publishing a synthesized benchmark in a layout others read: MTRAG's conversation layout
(stores/formats/mtrag.py) or a Hugging Face dataset folder (stores/formats/hf_dataset.py).

It reads the finished synthesis run's ``dialogues.jsonl`` and its exported corpus (held-out
chunks and their near-duplicates already left out; left out again here, for runs exported
before that rule) and writes the folder; no model is called, nothing is resumed: publishing
again rewrites the same files.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from benchsmith.evals.measures.turn_labels import label_counts
from benchsmith.graphs.synthesis.state import BEIR_DIR, STATS_FILE
from benchsmith.jobs.review_session import reviewed_dialogues
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.benchmark_files import DIALOGUES_FILE, benchmark_records, held_out_ids, read_dialogues
from benchsmith.stores.formats.hf_dataset import CardFacts, write_hf_dataset
from benchsmith.stores.formats.mtrag import write_mtrag
from benchsmith.stores.persistence.jsonl import read_json
from benchsmith.stores.persistence.reviews import latest_review
from benchsmith.stores.persistence.runs import RunDirectory, RunRecord, is_valid_run_id, list_runs
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.corpus.held_out import without_held_out
from benchsmith.tools.corpus.loaders import iter_beir_corpus

PublishFormat = Literal["mtrag", "hf"]
FORMATS: tuple[str, ...] = get_args(PublishFormat)
DOMAIN_UNSAFE = re.compile(r"[^a-z0-9_-]+")


@dataclass(frozen=True)
class PublishResult:
    format: str
    out: Path
    run_id: str
    conversations: int
    turns: int
    documents: int
    audited: bool  # an audit of the benchmark exists (its verdict is in the dataset card)
    rejected: int = 0  # turns its newest review rejected (`benchsmith review`), left out


def publish(
    run: str | Path, *, format: PublishFormat, out: str | Path, workspace: str | Path | None = None
) -> PublishResult:
    """Write the finished synthesis run ``run`` (its id in ``workspace``, or its folder) into
    ``out`` as an MTRAG-layout benchmark (``format="mtrag"``) or a Hugging Face dataset folder
    (``format="hf"``)."""
    if format not in FORMATS:
        raise InputError(f"unknown --format {format!r}: use one of {', '.join(FORMATS)}")
    resolved = Workspace.resolve(workspace)
    run_dir, record = _synthesis_run(resolved, run)
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(f"{out}: exists and is not a folder; --out names the folder to write")
    dialogues = [dialogue.model_dump() for dialogue in read_dialogues(run_dir.file(DIALOGUES_FILE))]
    held_out = held_out_ids(dialogues)  # of every turn: a rejected turn's held-out chunk stays out
    review = latest_review(resolved, run_dir.run_id)
    dialogues, rejected = reviewed_dialogues(dialogues, review.verdicts if review else {})
    corpus = _corpus(run_dir.file(BEIR_DIR) / "corpus.jsonl", held_out)
    turns = sum(len(dialogue["turns"]) for dialogue in dialogues)
    collection = str(record.config.get("collection") or run_dir.run_id)
    audit = _latest_audit(resolved, run_dir)
    if format == "mtrag":
        domain = DOMAIN_UNSAFE.sub("-", collection.lower()).strip("-") or "benchsmith"
        written = write_mtrag(out, dialogues, corpus, domain)
        documents = written.documents
    else:
        queries, qrels, _ = benchmark_records(dialogues, record.config.get("history_window"))
        facts = CardFacts(
            name=collection,
            settings=record.config,
            label_counts=_label_counts(run_dir, dialogues),
            audit=audit,
            source=(
                f"Synthesized from the collection `{collection}` by the run `{run_dir.run_id}` "
                f"(`benchsmith synthesize`, finished {time.strftime('%Y-%m-%d', time.gmtime(record.updated))}): "
                f"{len(dialogues):,} conversations, {turns:,} turns."
            ),
        )
        documents = write_hf_dataset(out, corpus, queries, qrels, dialogues, facts)["corpus"]
    return PublishResult(
        format=format,
        out=out,
        run_id=run_dir.run_id,
        conversations=len(dialogues),
        turns=turns,
        documents=documents,
        audited=audit is not None,
        rejected=rejected,
    )


def _synthesis_run(workspace: Workspace, run: str | Path) -> tuple[RunDirectory, RunRecord]:
    path = Path(run)
    if (path / "run.json").is_file():
        workspace, run_id = Workspace.resolve(path.resolve().parent.parent), path.resolve().name
    elif is_valid_run_id(str(run)) and RunDirectory(workspace, str(run)).exists():
        run_id = str(run)
    else:
        raise InputError(f"{run}: not a run id in {workspace.root} nor a run folder")
    run_dir = RunDirectory(workspace, run_id)
    record = run_dir.load()
    if record.job != "synthesize":
        raise InputError(f"run {run_id!r} is a {record.job} run; publish takes a synthesis run")
    if record.status != "finished" or not run_dir.file(DIALOGUES_FILE).is_file():
        raise InputError(
            f"run {run_id!r} is {record.effective_status()}, not finished: resume it first "
            f"({record.resume or 'benchsmith synthesize --run-id ' + run_id})"
        )
    return run_dir, record


def _corpus(path: Path, held_out: set[str]) -> Any:
    """The run's exported documents, without held-out chunks and their near-duplicates."""
    if not held_out:
        return ({"_id": d.id, "title": d.title, "text": d.text} for d in iter_beir_corpus(path))
    held_out_texts = {d.id: d.text for d in iter_beir_corpus(path) if d.id in held_out}
    return without_held_out(
        ({"_id": d.id, "title": d.title, "text": d.text} for d in iter_beir_corpus(path)), held_out_texts
    )


def _label_counts(run_dir: RunDirectory, dialogues: list[dict[str, Any]]) -> dict[str, Any]:
    """The run's label counts as its stats.json states them (so the card and the statistics
    agree), counted from the dialogues where the run wrote none."""
    stats = read_json(run_dir.file(STATS_FILE)) if run_dir.file(STATS_FILE).is_file() else {}
    stated: dict[str, Any] | None = stats.get("labels") if isinstance(stats, dict) else None
    return stated or label_counts(dialogues)


def _latest_audit(workspace: Workspace, run_dir: RunDirectory) -> dict[str, Any] | None:
    """The verdict of the newest finished audit of this run (by id, folder or BEIR folder)."""
    names = {run_dir.run_id, str(run_dir.path.resolve()), str(run_dir.file(BEIR_DIR).resolve())}
    for record in list_runs(workspace):  # newest first
        if record.job == "audit" and record.status == "finished" and str(record.config.get("benchmark")) in names:
            verdict = record.summary.get("verdict") or {}
            return {
                "run_id": record.run_id,
                "label": verdict.get("label", "unknown"),
                "explanation": verdict.get("explanation", ""),
            }
    return None
