"""Scoring a multi-condition hard-negative dataset (MultiConIR: Lu et al., 2025) as a resumable run.

    plan ─→ Send × scorers without a result ─→ score ─→ report ─→ END
      └──────────────────── (all scored) ─────────────────┘

``plan`` loads the dataset (a hardneg build run directory or run id, or a hardneg.csv) and makes
the output folder. ``score`` runs one scorer (bm25-corpus, bm25-row, dense[:MODEL], rerank:MODEL
or the user's own retriever, graphs/hardneg/outside.py) over every (query, candidate) pair, writes its score tables in the reference layout
(each file atomically) and then its results (measures with bootstrap intervals, worst rows) into
``scorers/<scorer>.json`` in the run directory: that file is the scorer's durable result, so a
resumed run scores only the scorers without one (the output folder may be shared by several
runs, the run directory is this run's alone). ``report`` reads every scorer's results in the
order asked for and writes the results JSON and hardneg-report.md/.html. Scorers run one at a
time, in any order; the results keep the order asked for.

State holds the dataset path, the output folder and scorer labels; scores live in files.
"""

from __future__ import annotations

import json
import operator
import threading
from pathlib import Path
from typing import Annotated, Any, Literal, NotRequired

from langgraph.graph import END, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send
from typing_extensions import TypedDict

from benchsmith.graphs.contexts.hardneg_score import HardnegScoreContext
from benchsmith.graphs.hardneg.outside import OUTSIDE_DIR, OutsideCalls
from benchsmith.graphs.hardneg.scoring import load_dataset, output_directory, score_one, scorer_spec, write_score_report
from benchsmith.graphs.runtime.fanout import add_fan_out
from benchsmith.graphs.runtime.job_runtime import JobRuntime
from benchsmith.graphs.runtime.progress import progress_reporter, report_reused
from benchsmith.stores.persistence.files import write_json_atomic
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.workspace import Workspace

SCORER_RESULTS_DIR = "scorers"
SCORERS_STAGE = "scorers"
# One scorer at a time: each one already keeps every core busy (numpy, torch), and two models in
# memory at once buy nothing. The runner's max_concurrency bounds Send workers only loosely.
_one_scorer_at_a_time = threading.Lock()


class HardnegScoreInput(TypedDict):
    run_id: str
    dataset: str  # a hardneg build run directory or run id, or a hardneg.csv
    scorers: list[str]  # labels: bm25-corpus, bm25-row, dense, dense:MODEL, rerank:MODEL
    output_dir: NotRequired[str | None]  # default: scores/ in the build run, <name>-scores/ beside a csv


class HardnegScoreOutput(TypedDict, total=False):
    run_id: str
    dataset: str  # the dataset's absolute path
    output_dir: str
    scorers: list[str]
    reference: dict[str, dict[str, Any]]  # {scorer: the reference's measures (task1, task2, task3 keys)}
    tables: dict[str, dict[str, str]]  # {scorer: {task1, task2, task3: *_results.csv path}}
    report: dict[str, str]  # {"markdown", "html", "results"}: paths


class HardnegScoreState(HardnegScoreInput, HardnegScoreOutput, total=False):  # type: ignore[misc]  # LangGraph's state merges input and output: a key required on input may be left out of the output
    finished: Annotated[list[str], operator.add]  # scorers scored by this process (working counter)


class ScorerTask(TypedDict):
    run_id: str
    dataset: str
    output_dir: str
    scorer: str
    scorers: list[str]  # every scorer of the run, for the progress count


job = JobRuntime(HardnegScoreContext)  # the runtime's settings, workspace and run directories


def scorer_result_file(workspace: Workspace, run_id: str, label: str) -> Path:
    """Where a scorer's results are kept in its run: written last, so it exists only once the
    scorer's tables are complete."""
    return RunDirectory(workspace, run_id).file(SCORER_RESULTS_DIR) / f"{scorer_spec(label).file_stem}.json"


def plan(state: HardnegScoreState, runtime: Runtime[HardnegScoreContext]) -> dict[str, Any]:
    """Load the dataset (a bad one stops here) and make the output folder."""
    path, _, _ = load_dataset(state["dataset"], job.workspace(runtime))
    output = output_directory(path, state.get("output_dir")).resolve()
    output.mkdir(parents=True, exist_ok=True)
    for label in state["scorers"]:
        scorer_spec(label)  # an unknown scorer stops here, before any scoring
    return {"dataset": str(path), "output_dir": str(output)}


def dispatch(state: HardnegScoreState, runtime: Runtime[HardnegScoreContext]) -> list[Send] | Literal["report"]:
    """One ``score`` per scorer without a result in this run; ``report`` when every one has one."""
    workspace = job.workspace(runtime)
    pending = [
        label for label in state["scorers"] if not scorer_result_file(workspace, state["run_id"], label).exists()
    ]
    progress_reporter(SCORERS_STAGE)(len(state["scorers"]) - len(pending), len(state["scorers"]))
    if not pending:
        return "report"
    return [
        Send(
            "score",
            {
                "run_id": state["run_id"],
                "dataset": state["dataset"],
                "output_dir": state["output_dir"],
                "scorer": label,
                "scorers": state["scorers"],
            },
        )
        for label in pending
    ]


def score(task: ScorerTask, runtime: Runtime[HardnegScoreContext]) -> dict[str, Any]:
    """One scorer over every pair: its tables, then its results (the durable mark of a finished scorer)."""
    context, workspace = job.context(runtime), job.workspace(runtime)
    result_file = scorer_result_file(workspace, task["run_id"], task["scorer"])
    if result_file.exists():  # finished before a hard kill lost the checkpoint: reused
        report_reused(task["scorer"])
        return {"finished": [task["scorer"]]}
    spec = scorer_spec(task["scorer"])
    with _one_scorer_at_a_time:
        _, rows, _ = load_dataset(task["dataset"], workspace)
        results, tables = score_one(
            spec,
            rows,
            Path(task["output_dir"]),
            embedder=context.embedder,
            confidence=context.confidence,
            resamples=context.resamples,
            seed=context.seed,
            on_progress=progress_reporter(spec.label),
            outside=OutsideCalls(
                RunDirectory(workspace, task["run_id"]).file(OUTSIDE_DIR),
                context.timeout_s,
                context.concurrency,
                context.max_attempts,
                context.rate_limit,
            ),
        )
        write_json_atomic(
            result_file, {"results": results, "tables": {name: str(path) for name, path in tables.items()}}
        )
    # Counted from the result files, so the count is right after a resume too.
    finished = sum(scorer_result_file(workspace, task["run_id"], label).exists() for label in task["scorers"])
    progress_reporter(SCORERS_STAGE)(finished, len(task["scorers"]))
    return {"finished": [spec.label]}


def report(state: HardnegScoreState, runtime: Runtime[HardnegScoreContext]) -> HardnegScoreOutput:
    """Every scorer's results, in the order asked for: the results JSON and the report."""
    context, workspace = job.context(runtime), job.workspace(runtime)
    output_dir = state["output_dir"]
    assert output_dir is not None  # the first node resolved it
    path, rows, information = load_dataset(state["dataset"], workspace)
    specs = [scorer_spec(label) for label in state["scorers"]]
    kept = {
        spec.label: json.loads(scorer_result_file(workspace, state["run_id"], spec.label).read_text(encoding="utf-8"))
        for spec in specs
    }
    tables = {label: {name: Path(table) for name, table in saved["tables"].items()} for label, saved in kept.items()}
    files = write_score_report(
        Path(output_dir),
        path,
        rows,
        information,
        specs,
        {label: saved["results"] for label, saved in kept.items()},
        tables,
        embedder=context.embedder,
        confidence=context.confidence,
        resamples=context.resamples,
        seed=context.seed,
    )
    return {
        "run_id": state["run_id"],
        "dataset": str(path),
        "output_dir": output_dir,
        "scorers": [spec.label for spec in specs],
        "reference": {label: saved["results"]["reference"] for label, saved in kept.items()},
        "tables": {label: saved["tables"] for label, saved in kept.items()},
        "report": {kind: str(file) for kind, file in files.items()},
    }


builder = StateGraph(
    HardnegScoreState,
    context_schema=HardnegScoreContext,
    input_schema=HardnegScoreInput,
    output_schema=HardnegScoreOutput,
)
add_fan_out(builder, plan=plan, dispatch=dispatch, work=score, finish=report, in_batches=False)
builder.add_edge("report", END)

# Studio loads this copy (no checkpointer); the CLI and the API compile their own with one.
graph = builder.compile(name="hardneg-score")  # the Studio copy: no checkpointer (the server brings its own)
