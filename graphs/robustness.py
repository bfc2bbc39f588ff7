"""Metric robustness under paraphrase (ECAsT): the original benchmark and its test sets R1..Rn
(from a paraphrase run) scored, their unjudged top documents re-judged, and the measures
recomputed before and after.

    plan ─┬─→ evaluate (one test set per step, `benchsmith evaluate`) ─┐
          │       ↑______________ (test sets left) ___________________│
          └──────────────── (run files given) ──────────────────────→ pool ─→ dispatch
    dispatch ─→ Send × turns not yet judged ─→ judge ─→ report ─→ END
        └──────────────── (nothing to judge) ─────────────→ ┘

With a corpus, each test set is evaluated by the evaluate job (its own resumable run, named
``<run id>-<test set>``); without one (TREC CAsT) the user's run files are given per test set.
``pool`` collects, once, the documents of every run's top k (``judge_depth``) that the qrels do
not judge for that turn; ``judge`` grades a turn's pooled documents with every judge on CAsT's
0-4 scale and appends the turn to ``judgments.jsonl`` once; ``report`` confirms grades with the
audit's vote rule, puts them on the benchmark's scale (a binary gold gets 1 for a confirmed grade
of 2 or more and 0 below, a graded gold the grades: evals/measures/robustness.py says why), writes
``augmented_qrels.tsv`` (and ``.trec``), recomputes every measure before and after, tests each
test set's change against the original and writes the report.

The evaluate runs are the robustness run's children: each is marked with its parent
(``RunDirectory.mark_child``) before it starts, and `benchsmith runs` lists it under the parent.
"""

from __future__ import annotations

import functools
import operator
from pathlib import Path
from typing import Annotated, Any, Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send
from typing_extensions import TypedDict

from benchsmith.agents.relevance import RelevanceJudge
from benchsmith.evals.measures import robustness as robustness_measures
from benchsmith.evals.measures.significance import describe
from benchsmith.evals.measures.standard import evaluate_run, parse_measures
from benchsmith.evals.reports.robustness_report import robustness_report_files
from benchsmith.graphs.contexts.evaluate import EvaluationContext
from benchsmith.graphs.contexts.robustness import RobustnessContext
from benchsmith.graphs.evaluate import EvaluationInput, evaluate_as_child
from benchsmith.graphs.paraphrase import BENCHMARK_FILE, QRELS_FILE, TEST_SETS_DIR, TEST_SETS_FILE, TURNS_FILE
from benchsmith.graphs.runtime.corpus_indexes import document_text
from benchsmith.graphs.runtime.job_runtime import JobRuntime
from benchsmith.graphs.runtime.progress import progress_reporter, report_advance
from benchsmith.graphs.runtime.resources import concurrency_slot, run_seam
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.beir import merge_qrels, read_beir_qrels
from benchsmith.stores.formats.benchmark_files import write_beir_qrels
from benchsmith.stores.formats.trec import Qrels, read_trec_qrels, read_trec_run, write_trec_qrels
from benchsmith.stores.persistence.files import write_files_atomic
from benchsmith.stores.persistence.jsonl import RecordLog, load_jsonl, read_json, record_log, write_jsonl_atomic
from benchsmith.tools.corpus.loaders import iter_beir_corpus
from benchsmith.tools.retrieval.embedded_text import EMBEDDED_TEXT_NOTE

EVALUATIONS_FILE, POOL_FILE, JUDGMENTS_FILE = "evaluations.jsonl", "pool.jsonl", "judgments.jsonl"
AUGMENTED_QRELS_FILE, AUGMENTED_TREC_FILE = "augmented_qrels.tsv", "augmented_qrels.trec"
ORIGINAL = "original"
GIVEN_RUN = "run"  # the configuration name of a given run file
EXAMPLES_SHOWN = 8


class RobustnessInput(TypedDict):
    run_id: str
    paraphrase_run: str  # the paraphrase run directory
    judges: list[str]
    retrievers: list[str]  # with a corpus: evaluated by the evaluate job
    histories: list[str]
    runs: dict[str, str]  # without one: {"original": FILE, "R1": FILE, ...}
    qrels: str | None  # TREC qrels; default: the paraphrase run's


class RobustnessOutput(TypedDict, total=False):
    run_id: str
    sets: list[str]
    pooled: int
    confirmed: int
    means: dict[str, dict[str, dict[str, dict[str, float]]]]  # {configuration: {before|after: {set: {measure: mean}}}}
    report: dict[str, str]


class RobustnessState(RobustnessInput, RobustnessOutput, total=False):  # type: ignore[misc]  # LangGraph's state merges input and output: a key required on input may be left out of the output
    judged: Annotated[int, operator.add]


class JudgeTask(TypedDict):
    run_id: str
    paraphrase_run: str
    judges: list[str]
    turn: str


# ---------------------------------------------------------------------------------------
# Inputs.

job = JobRuntime(RobustnessContext)  # the runtime's settings, workspace and run directories


def test_set_names(paraphrase_run: Path) -> list[str]:
    """``original`` and the paraphrase run's test sets, in order."""
    path = paraphrase_run / TEST_SETS_FILE
    if not path.is_file():
        raise InputError(f"{paraphrase_run}: not a finished paraphrase run (no {TEST_SETS_FILE})")
    return [ORIGINAL, *read_json(path)]


def benchmark_qrels(paraphrase_run: Path, qrels: str | None) -> Qrels:
    """The given TREC qrels, else the ones the paraphrase run was given or found; only the
    benchmark's turns (a CAsT qrels file may judge turns of topic files not given)."""
    if qrels:
        judged = read_trec_qrels(qrels)
    elif (paraphrase_run / QRELS_FILE).is_file():
        judged = read_beir_qrels(paraphrase_run / QRELS_FILE)
    else:
        raise InputError(f"{paraphrase_run}: the benchmark has no relevance judgments: give --qrels FILE (TREC)")
    turns = _turns(str(paraphrase_run))
    kept = {turn: docs for turn, docs in judged.items() if turn in turns}
    if not kept:
        raise InputError(f"{qrels or paraphrase_run / QRELS_FILE}: judges none of the benchmark's turns")
    return kept


@functools.lru_cache(maxsize=2)
def _turns_in(path: Path, modified: float) -> dict[str, dict[str, Any]]:
    return {record["turn"]: record for record in load_jsonl(path)}


def _turns(paraphrase_run: str) -> dict[str, dict[str, Any]]:
    path = Path(paraphrase_run) / TURNS_FILE
    return _turns_in(path, path.stat().st_mtime)


@functools.lru_cache(maxsize=2)
def _documents_in(path: Path, modified: float) -> dict[str, str]:
    return {document.id: document_text(document.title, document.text) for document in iter_beir_corpus(path)}


def document_texts(runtime: Runtime[RobustnessContext], paraphrase_run: str) -> dict[str, str]:
    """``{doc id: text}`` of the benchmark's corpus, or of the corpus given with run files; empty without one."""
    corpus = job.context(runtime).corpus or read_json(Path(paraphrase_run) / BENCHMARK_FILE).get("corpus")
    if not corpus:
        return {}
    path = Path(corpus).resolve()
    return _documents_in(path, path.stat().st_mtime)


def _evaluation_log(runtime: Runtime[RobustnessContext], run_id: str) -> RecordLog:
    return record_log(job.run_dir(runtime, run_id).file(EVALUATIONS_FILE), "set")


def _judgment_log(runtime: Runtime[RobustnessContext], run_id: str) -> RecordLog:
    return record_log(job.run_dir(runtime, run_id).file(JUDGMENTS_FILE), "turn")


# ---------------------------------------------------------------------------------------
# Nodes.


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
    child_context = EvaluationContext(
        chroma_host=context.chroma_host,
        depth=context.depth,
        llm=context.llm,
        embedder=context.embedder,
    )
    output = evaluate_as_child(
        job.workspace(runtime),
        state["run_id"],
        name,
        inputs,
        child_context,
        settings={**inputs, "depth": context.depth, "llm": context.llm, "embedder": context.embedder},
    )
    child_dir = job.run_dir(runtime, child_id)
    configurations = read_json(Path(output["report"]["results"]))["configurations"]
    log.append_once(
        {
            "set": name,
            "evaluation_run": child_id,
            "runs": {c["name"]: str(child_dir.path / c["run_file"]) for c in configurations},
        }
    )
    return {}


def _evaluations(runtime: Runtime[RobustnessContext], run_id: str) -> dict[str, dict[str, str]]:
    """``{set: {configuration: run file}}``."""
    path = job.run_dir(runtime, run_id).file(EVALUATIONS_FILE)
    return {record["set"]: record["runs"] for record in load_jsonl(path)}


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


def _pool(runtime: Runtime[RobustnessContext], run_id: str) -> dict[str, list[str]]:
    """``{turn: [doc ids with text]}`` of the pool."""
    by_turn: dict[str, list[str]] = {}
    for record in load_jsonl(job.run_dir(runtime, run_id).file(POOL_FILE)):
        if record["has_text"]:
            by_turn.setdefault(record["turn"], []).append(record["doc"])
    return by_turn


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
    with concurrency_slot(task["run_id"], context.concurrency):
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


def report(state: RobustnessState, runtime: Runtime[RobustnessContext]) -> RobustnessOutput:
    """Confirm the grades, write the augmented qrels, measure before and after, test, report."""
    context = job.context(runtime)
    run_dir = job.run_dir(runtime, state["run_id"])
    paraphrase_run = Path(state["paraphrase_run"])
    qrels = benchmark_qrels(paraphrase_run, state.get("qrels"))
    judgments = (
        {record["turn"]: record["grades"] for record in load_jsonl(run_dir.file(JUDGMENTS_FILE))}
        if run_dir.file(JUDGMENTS_FILE).exists()
        else {}
    )
    grades = {
        turn: {doc: [verdict["grade"] for verdict in by_judge.values()] for doc, by_judge in docs.items()}
        for turn, docs in judgments.items()
    }
    confirmed = robustness_measures.confirmed_judgments(grades, context.min_votes)
    binary = robustness_measures.is_binary_scale(qrels)
    on_scale = robustness_measures.on_benchmark_scale(confirmed, binary)
    rows = [(turn, doc, value) for turn, docs in sorted(on_scale.items()) for doc, value in sorted(docs.items())]
    write_beir_qrels(
        run_dir.file(AUGMENTED_QRELS_FILE),
        [(turn, doc, relevance) for turn, docs in sorted(qrels.items()) for doc, relevance in sorted(docs.items())]
        + rows,
    )
    augmented = merge_qrels(qrels, on_scale)
    write_trec_qrels(
        run_dir.file(AUGMENTED_TREC_FILE),
        [(turn, doc, relevance) for turn, docs in sorted(augmented.items()) for doc, relevance in sorted(docs.items())],
    )
    judged_measure = f"Judged@{context.judge_depth}"
    names = [str(measure) for measure in parse_measures([*context.measures, judged_measure])]
    measures = parse_measures(names)
    evaluations = _evaluations(runtime, state["run_id"])
    configurations = list(dict.fromkeys(c for name in state["sets"] for c in evaluations[name]))
    by_configuration: dict[str, Any] = {}
    for configuration in configurations:
        per_phase: dict[str, Any] = {"means": {}, "changes": {}, "queries": 0}
        for phase, judged_qrels in (("before", qrels), ("after", augmented)):
            per_set = {
                name: evaluate_run(measures, judged_qrels, read_trec_run(evaluations[name][configuration])).per_query
                for name in state["sets"]
                if configuration in evaluations[name]
            }
            per_phase["means"][phase] = {
                name: robustness_measures.mean_values(values, names) for name, values in per_set.items()
            }
            per_phase["changes"][phase] = (
                robustness_measures.changes(
                    per_set, ORIGINAL, names, context.significance_test, context.resamples, context.seed
                )
                if ORIGINAL in per_set
                else []
            )
            per_phase["queries"] = len(next(iter(per_set.values()), {}))
        by_configuration[configuration] = per_phase
    results = _results(
        state,
        context,
        load_jsonl(run_dir.file(POOL_FILE)),
        paraphrase_run,
        qrels,
        judgments,
        grades,
        confirmed,
        names,
        judged_measure,
        by_configuration,
        evaluations,
        binary,
    )
    paths = write_files_atomic(run_dir.path, robustness_report_files(results))
    return {
        "sets": state["sets"],
        "pooled": results["pool"]["pooled"],
        "confirmed": len(rows),
        "means": {configuration: values["means"] for configuration, values in by_configuration.items()},
        "report": {kind: str(path) for kind, path in paths.items()},
    }


def _results(
    state: RobustnessState,
    context: RobustnessContext,
    pooled: list[dict[str, Any]],
    paraphrase_run: Path,
    qrels: Qrels,
    judgments: dict[str, Any],
    grades: dict[str, dict[str, list[int]]],
    confirmed: dict[str, dict[str, int]],
    names: list[str],
    judged_measure: str,
    by_configuration: dict[str, Any],
    evaluations: dict[str, dict[str, str]],
    binary: bool,
) -> dict[str, Any]:
    distribution = {str(grade): 0 for grade in range(robustness_measures.MAX_GRADE + 1)}
    for docs in confirmed.values():
        for grade in docs.values():
            distribution[str(grade)] += 1
    turns = _turns(state["paraphrase_run"])
    examples = [
        {
            "turn": turn,
            "doc": doc,
            "grade": grade,
            "question": turns.get(turn, {}).get("raw", ""),
            "rationales": {judge: verdict["rationale"] for judge, verdict in judgments[turn][doc].items()},
        }
        for turn, docs in sorted(confirmed.items())
        for doc, grade in sorted(docs.items())
        if grade >= robustness_measures.RELEVANT_GRADE
    ]
    examples.sort(key=lambda example: -example["grade"])
    benchmark = read_json(paraphrase_run / BENCHMARK_FILE)
    unjudged_at_k = {}
    for configuration, values in by_configuration.items():
        for name, means in values["means"]["before"].items():
            unjudged_at_k[f"{name}/{configuration}"] = 1 - means[judged_measure]
    return {
        "benchmark": {
            "name": benchmark["name"],
            "paraphrase_run": str(paraphrase_run),
            "judged_turns": len(qrels),
            "corpus": benchmark.get("corpus"),
        },
        "mode": "run files" if state.get("runs") else "retrieval",
        "sets": state["sets"],
        "configurations": list(by_configuration),
        "evaluations": evaluations,
        "settings": {
            "judges": state["judges"],
            "judge_depth": context.judge_depth,
            "min_votes": context.min_votes,
            "retrievers": state.get("retrievers") or [],
            "histories": state.get("histories") or [],
            "depth": context.depth,
            "qrels": state.get("qrels"),
            "corpus": context.corpus,
        },
        "measures": names,
        "primary_measure": names[0],
        "judged_measure": judged_measure,
        "pool": {
            "pooled": len(pooled),
            "turns": len({record["turn"] for record in pooled}),
            "with_text": sum(1 for record in pooled if record["has_text"]),
            "judged": sum(len(docs) for docs in grades.values()),
            "confirmed": sum(len(docs) for docs in confirmed.values()),
            "confirmed_relevant": sum(
                1
                for docs in confirmed.values()
                for grade in docs.values()
                if grade >= robustness_measures.RELEVANT_GRADE
            ),
            "confirmed_grades": distribution,
            # Each judge's own verdicts: how many pooled documents it called relevant (grade 2 or more).
            "relevant_by_judge": {
                judge: sum(
                    1
                    for docs in judgments.values()
                    for by_judge in docs.values()
                    if judge in by_judge and by_judge[judge]["grade"] >= robustness_measures.RELEVANT_GRADE
                )
                for judge in state["judges"]
            },
        },
        "scale": {
            "benchmark": "binary" if binary else "graded",
            "relevant_grade": robustness_measures.RELEVANT_GRADE,
            "mapping": (
                f"confirmed grades of {robustness_measures.RELEVANT_GRADE} or more are relevance 1, "
                "lower ones 0 (the benchmark's gold is binary)"
            )
            if binary
            else "confirmed grades are the relevance (the benchmark's gold is graded)",
        },
        "by_configuration": by_configuration,
        "examples": examples[:EXAMPLES_SHOWN],
        "vote_rule": robustness_measures.grade_vote_rule(context.min_votes),
        "test": describe(context.significance_test, context.resamples, 0.05, max(len(state["sets"]) - 1, 1)),
        "notes": _notes(context, state, judged_measure, binary),
    }


def _notes(context: RobustnessContext, state: RobustnessState, judged_measure: str, binary: bool) -> list[str]:
    notes = [
        "Measures are means over the turns with relevance judgments; a test set's change is its mean minus the "
        "original's, with a paired test on the per-turn values, Holm-corrected over the test sets.",
        f"Re-judging pools the documents of every run's top {context.judge_depth} (the original's and the test "
        f"sets') that the qrels do not judge for that turn, and has each judge grade them on CAsT's 0-4 scale "
        f"(0 fails, 1 slightly, 2 moderately, 3 highly, 4 fully meets), with the audit's vote rule: "
        f"{robustness_measures.grade_vote_rule(context.min_votes)}. Confirmed grades, non-relevant ones included, are "
        f"appended to augmented_qrels.tsv, so {judged_measure} reaches 1.0 where every pooled document was confirmed.",
        (
            f"The benchmark's gold is binary: a confirmed grade of {robustness_measures.RELEVANT_GRADE} (moderately "
            "meets) or more is appended as relevance 1, a lower one as 0 (CAsT's threshold for binary measures), so a "
            "re-judged document weighs what a gold one weighs in nDCG."
        )
        if binary
        else "The benchmark's gold is graded: confirmed grades are appended as they are.",
        "The judges see the turn as the benchmark asks it (its conversation, raw utterance and self-contained form): "
        "the test sets share the original's information needs.",
        EMBEDDED_TEXT_NOTE,
    ]
    if len(state["judges"]) == 1:
        notes.append(
            f"One judge ({state['judges'][0]}) with --min-votes {context.min_votes}: its grades were trusted "
            "unchecked; add a second --judge for the audit's two-vote rule."
        )
    if state.get("runs") and not context.corpus:
        notes.append("No --corpus was given with the run files: without the documents' text nothing was re-judged.")
    return notes


builder = StateGraph(
    RobustnessState, context_schema=RobustnessContext, input_schema=RobustnessInput, output_schema=RobustnessOutput
)
for node in (plan, evaluate, pool, judge, report):
    builder.add_node(node)
builder.add_edge(START, "plan")
builder.add_conditional_edges("plan", next_step, ["evaluate", "pool"])
builder.add_conditional_edges("evaluate", next_step, ["evaluate", "pool"])
builder.add_conditional_edges("pool", dispatch, ["judge", "report"])
builder.add_edge("judge", "report")
builder.add_edge("report", END)

graph = builder.compile(name="robustness")  # the Studio copy: no checkpointer (the server brings its own)
