"""The robustness graph's nodes before the report: plan, evaluate each test set, pool the unjudged documents, dispatch and judge them."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import Send

from benchsmith.agents.relevance import RelevanceJudge
from benchsmith.evals.measures import robustness as robustness_measures
from benchsmith.graphs.contexts.evaluate import EvaluationContext
from benchsmith.graphs.contexts.robustness import RobustnessContext
from benchsmith.graphs.evaluate.child_sets import evaluated_set
from benchsmith.graphs.evaluate.state import EvaluationInput
from benchsmith.graphs.paraphrase.state import TEST_SETS_DIR
from benchsmith.graphs.robustness.inputs import (
    _evaluation_log,
    _evaluations,
    _judgment_log,
    _pool,
    _turns,
    benchmark_qrels,
    document_texts,
    job,
    test_set_names,
)
from benchsmith.graphs.robustness.state import GIVEN_RUN, POOL_FILE, JudgeTask, RobustnessState
from benchsmith.graphs.runtime.progress import progress_reporter, report_advance
from benchsmith.graphs.runtime.resources import run_seam
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.trec import read_trec_run
from benchsmith.stores.persistence.jsonl import load_jsonl, write_jsonl_atomic


def plan(state: RobustnessState, runtime: Runtime[RobustnessContext]) -> dict[str, Any]:
    """Check the test sets and qrels; record given run files as the test sets' evaluations."""
    paraphrase_run = Path(state["paraphrase_run"])
    sets = test_set_names(paraphrase_run)
    benchmark_qrels(paraphrase_run, state.get("qrels"))
    log = _evaluation_log(runtime, state["run_id"])
    for name, path in (state.get("runs") or {}).items():
        if name not in sets:
            raise InputError(f"--run {name}=...: {paraphrase_run} has no test set {name!r} ({', '.join(sets)})")
        read_trec_run(path)  # a malformed run file stops here
        log.append_once({"set": name, "evaluation_run": None, "runs": {GIVEN_RUN: str(Path(path).resolve())}})
    return {"sets": [name for name in sets if not state.get("runs") or name in state["runs"]]}


def next_step(state: RobustnessState, runtime: Runtime[RobustnessContext]) -> Literal["evaluate", "pool"]:
    done = _evaluation_log(runtime, state["run_id"]).ids()
    return "pool" if all(name in done for name in state["sets"]) else "evaluate"


def evaluate(state: RobustnessState, runtime: Runtime[RobustnessContext]) -> dict[str, Any]:
    """Evaluate the next test set with the evaluate graph, run as a subgraph (a child run:
    resumable, reused when finished)."""
    context = job.context(runtime)
    log = _evaluation_log(runtime, state["run_id"])
    name = next(name for name in state["sets"] if name not in log.ids())
    child_id = f"{state['run_id']}-{name}"
    inputs: EvaluationInput = {
        "run_id": child_id,
        "benchmark": str(Path(state["paraphrase_run"]) / TEST_SETS_DIR / name),
        "retrievers": list(state["retrievers"]),
        "histories": list(state["histories"]),
        "runs": [],
    }
    retrieval = context.retrieval_settings()
    child_context = EvaluationContext(chroma_host=context.chroma_host, **retrieval)
    settings = {**inputs, **retrieval}
    log.append_once(evaluated_set(job.workspace(runtime), state["run_id"], name, inputs, child_context, settings))
    return {}


def pool(state: RobustnessState, runtime: Runtime[RobustnessContext]) -> dict[str, Any]:
    """The unjudged documents of every run's top k, per judged turn (once per run)."""
    path = job.run_dir(runtime, state["run_id"]).file(POOL_FILE)
    if path.exists():
        return {"pooled": len(load_jsonl(path))}
    k = job.context(runtime).judge_depth
    qrels = benchmark_qrels(Path(state["paraphrase_run"]), state.get("qrels"))
    texts = document_texts(runtime, state["paraphrase_run"])
    found: dict[tuple[str, str], list[str]] = {}
    for name, runs in _evaluations(runtime, state["run_id"]).items():
        for configuration, run_file in runs.items():
            run = read_trec_run(run_file)
            for turn, judged in qrels.items():
                for doc_id in robustness_measures.top_k(run.get(turn, {}), k):
                    if doc_id not in judged:
                        found.setdefault((turn, doc_id), []).append(f"{name}/{configuration}")
    records = [
        {
            "pair": f"{turn} {doc_id}",
            "turn": turn,
            "doc": doc_id,
            "found_in": sorted(where),
            "has_text": doc_id in texts,
        }
        for (turn, doc_id), where in sorted(found.items())
    ]
    write_jsonl_atomic(path, records)
    return {"pooled": len(records)}


def dispatch(state: RobustnessState, runtime: Runtime[RobustnessContext]) -> list[Send] | Literal["report"]:
    """One judging task per pooled turn not yet in judgments.jsonl."""
    judged, pooled = _judgment_log(runtime, state["run_id"]).ids(), _pool(runtime, state["run_id"])
    progress_reporter("judge")(len(judged & pooled.keys()), len(pooled))
    sends = [
        Send(
            "judge",
            {
                "run_id": state["run_id"],
                "paraphrase_run": state["paraphrase_run"],
                "judges": state["judges"],
                "turn": turn,
            },
        )
        for turn in pooled
        if turn not in judged
    ]
    return sends or "report"


def judge(task: JudgeTask, runtime: Runtime[RobustnessContext]) -> dict[str, Any]:
    """Every judge's CAsT grade (0-4) of every pooled document of one turn; appended once."""
    context = job.context(runtime)
    turn = _turns(task["paraphrase_run"])[task["turn"]]
    texts = document_texts(runtime, task["paraphrase_run"])
    history = [tuple(pair) for pair in turn["history"]]
    grades: dict[str, dict[str, dict[str, Any]]] = {}
    with job.slot(runtime, task["run_id"]):
        for doc_id in _pool(runtime, task["run_id"])[task["turn"]]:
            for spec in task["judges"]:
                grade = run_seam(job.workspace(runtime), task["run_id"], spec, context).run(
                    RelevanceJudge(),
                    history=history,
                    question=turn["raw"],
                    rewrite=turn.get("rewrite"),
                    document=texts[doc_id],
                )
                grades.setdefault(doc_id, {})[spec] = {"grade": grade.grade, "rationale": grade.rationale}
    job.run_dir(runtime, task["run_id"]).usage.sync()
    _judgment_log(runtime, task["run_id"]).append_once({"turn": task["turn"], "grades": grades})
    report_advance("judge")
    return {"judged": 1}
