"""The audit graph run with scripted judges, its results read back, and a benchmark's BEIR view, for the audit tests."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

from benchsmith.agents.seam.backends import ScriptedBackend
from benchsmith.agents.seam.models import ModelSeam
from benchsmith.graphs.audit.graph import builder
from benchsmith.graphs.contexts.audit import AuditContext
from benchsmith.graphs.runtime.resources import register_embedder, register_model
from benchsmith.graphs.runtime.runner import run_job
from benchsmith.stores.persistence.jsonl import load_jsonl
from benchsmith.stores.persistence.workspace import Workspace
from tests.audit_fixtures import judge_reply
from tests.embedders import HashingEmbedder


def scripted_judges() -> dict[str, ModelSeam]:
    return {
        "scripted:judge-a": ModelSeam(ScriptedBackend(replier=judge_reply, model="judge-a")),
        "scripted:judge-b": ModelSeam(ScriptedBackend(replier=partial(judge_reply, strict=True), model="judge-b")),
    }


def audit(workspace: Workspace, turns: Path, corpus: Path, run_id: str, models=None, **options):
    """Audit with the given seams (by judge spec; the two scripted judges by default)."""
    models = models or scripted_judges()
    for spec, seam in models.items():
        register_model(spec, seam)
    context = AuditContext(
        workspace=str(workspace.root), corpus=str(corpus), embedder=register_embedder(HashingEmbedder()), **options
    )
    return run_job(
        builder,
        job="audit",
        workspace=workspace,
        run_id=run_id,
        inputs={"run_id": run_id, "benchmark": str(turns), "judges": list(models)},
        context=context,
        settings={},
        max_concurrency=2,
    )


def results_of(outcome) -> dict:
    return json.loads(Path(outcome.values["report"]["results"]).read_text(encoding="utf-8"))


def beir_view(turns: Path, corpus: Path) -> Path:
    directory = turns.parent / "beir"
    if directory.exists():
        return directory
    (directory / "qrels").mkdir(parents=True)
    (directory / "corpus.jsonl").write_text(corpus.read_text(encoding="utf-8"), encoding="utf-8")
    queries, qrels = [], ["query-id\tcorpus-id\tscore"]
    for record in load_jsonl(turns):
        queries.append(
            {
                "_id": record["id"],
                "text": record["question"],
                "metadata": {
                    "conversation_id": record["conversation_id"],
                    "turn": record["turn"],
                    "question": record["question"],
                    "response": record["answer"],
                },
            }
        )
        qrels += [f"{record['id']}\t{doc}\t1" for doc in record["gold_ids"]]
    (directory / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries), encoding="utf-8")
    (directory / "qrels" / "test.tsv").write_text("\n".join(qrels) + "\n", encoding="utf-8")
    return directory
