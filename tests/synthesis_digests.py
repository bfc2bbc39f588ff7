"""A seeded synthesis run and the digests of its outputs: what tests/test_synthesis_digest.py holds
against tests/data/synthesis-digests.json, and tests/test_ray_runs.py holds a Ray run to."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from benchsmith.graphs.contexts.synthesize import SynthesisContext
from benchsmith.graphs.runtime.runner import run_job
from benchsmith.graphs.synthesis.run import builder as synthesis_builder
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.workspace import Workspace
from tests.synthesis_fixtures import COLLECTION
from tests.turn_type_fixtures import QUESTION_MIX

DIGESTS = Path(__file__).parent / "data" / "synthesis-digests.json"
OUTPUTS = (
    "dialogues.jsonl",
    "stats.json",
    "plan.jsonl",
    "qrels.trec",
    "beir/corpus.jsonl",
    "beir/queries.jsonl",
    "beir/qrels/test.tsv",
    "beir/turn_labels.tsv",
)
# Every turn type at a small rate, so most turns stay on the answerable path.
RATES = {"unanswerable_rate": 0.15, "partial_rate": 0.1, "underspecified_rate": 0.1, "multi_gold_rate": 0.1}
RUN = {"conversations": 6, "turns": 5}
SEED = 3


def synthesize(workspace: Workspace, run_id: str, llm: str, concurrency: int) -> RunDirectory:
    """A seeded run as the CLI makes it: a model spec (not a registered seam), so the workspace's
    response cache and the run's usage ledger are the ones a user's run writes."""
    context = SynthesisContext(
        workspace=str(workspace.root),
        llm=llm,
        cluster_size=4,
        concurrency=concurrency,
        seed=SEED,
        question_types=QUESTION_MIX,
        **RATES,
    )
    run_job(
        synthesis_builder,
        job="synthesize",
        workspace=workspace,
        run_id=run_id,
        context=context,
        settings={},
        inputs={"run_id": run_id, "collection": COLLECTION, **RUN},
        max_concurrency=concurrency,
    )
    return RunDirectory(workspace, run_id)


def digests(run_dir: RunDirectory, *, usage: bool = True) -> dict[str, str]:
    found = {name: hashlib.sha256(run_dir.file(name).read_bytes()).hexdigest() for name in OUTPUTS}
    if usage:
        lines = sorted(run_dir.file("usage.jsonl").read_text(encoding="utf-8").splitlines())
        found["usage.jsonl (sorted lines)"] = hashlib.sha256("\n".join(lines).encode()).hexdigest()
    return found


def stored() -> dict[str, dict[str, str]]:
    return json.loads(DIGESTS.read_text(encoding="utf-8"))
