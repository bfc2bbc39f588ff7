"""``benchsmith demo``: the whole pipeline offline on the standard library's documentation."""

from __future__ import annotations

from benchsmith.cli.audit import audit
from benchsmith.cli.cluster import cluster
from benchsmith.cli.console import WorkspaceOption, console
from benchsmith.cli.evaluate import evaluate
from benchsmith.cli.ingest import ingest
from benchsmith.cli.paraphrase import paraphrase
from benchsmith.cli.robustness import robustness
from benchsmith.cli.synthesize import synthesize
from benchsmith.jobs.defaults import EVALUATE_RETRIEVERS

DEMO_COLLECTION = "stdlib"
DEMO_RUN_IDS = {
    "ingest": "demo-ingest",
    "synthesize": "demo-synthesize",
    "evaluate": "demo-evaluate",
    "audit": "demo-audit",
    "paraphrase": "demo-paraphrase",
    "robustness": "demo-robustness",
}


def demo(workspace: WorkspaceOption = None) -> None:
    """The whole pipeline, offline, on the standard library's documentation.

    Ingest, cluster, synthesize 20 conversations, evaluate dense, BM25 and hybrid retrieval,
    audit the benchmark, paraphrase its turns into two test sets and measure how BM25's scores
    move on them. Run it again and it reports the finished runs.
    """
    # The commands themselves, with their own defaults: the demo is what a user would type.
    console.print(
        "[bold]benchsmith demo[/]: the standard library's docstrings → chunks → Chroma → clusters → "
        "20 conversations of 6 turns (offline baseline agents; unanswerable, partial, underspecified and "
        "multi-passage turns among them) → BEIR export → dense, BM25 and hybrid "
        "retrieval with full history and the oracle rewrite → audit of the benchmark by the offline judge → "
        "2 paraphrases per turn (offline rewordings) → BM25's robustness on 2 paraphrased test sets"
    )
    ingest(["stdlib"], collection=DEMO_COLLECTION, run_id=DEMO_RUN_IDS["ingest"], workspace=workspace)
    cluster(collection=DEMO_COLLECTION, workspace=workspace)
    # Every turn type and question type (issue 22) at rates that show each in 120 turns: the demo
    # preset (tools/benchmark/turn_type_presets.py); the defaults are 0 so that a plain synthesize run makes
    # the benchmarks it made before.
    synthesize(
        collection=DEMO_COLLECTION,
        conversations=20,
        turns=6,
        run_id=DEMO_RUN_IDS["synthesize"],
        workspace=workspace,
        rates="demo",
    )
    evaluate(
        DEMO_RUN_IDS["synthesize"],
        retriever=list(EVALUATE_RETRIEVERS),
        history=["full", "oracle"],
        run_id=DEMO_RUN_IDS["evaluate"],
        workspace=workspace,
    )
    audit(
        DEMO_RUN_IDS["synthesize"],
        judge=["baseline"],
        position_check=True,
        run_id=DEMO_RUN_IDS["audit"],
        workspace=workspace,
    )
    # Two rewordings per turn and two test sets keep the demo quick; the baseline paraphraser
    # only exercises the pipeline (a real --llm makes real paraphrases).
    paraphrase(
        [DEMO_RUN_IDS["synthesize"]], per_turn=2, test_sets=2, run_id=DEMO_RUN_IDS["paraphrase"], workspace=workspace
    )
    # One offline judge: --min-votes 1 lets it confirm grades on its own (an ensemble should not).
    robustness(
        DEMO_RUN_IDS["paraphrase"],
        retriever=["bm25"],
        history=["full", "oracle"],
        judge=["baseline"],
        min_votes=1,
        run_id=DEMO_RUN_IDS["robustness"],
        workspace=workspace,
    )
