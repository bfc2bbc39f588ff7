"""Replay a benchmark's conversations against the user's own assistant (tools/benchmark/assistants.py).

    plan ─→ dispatch ─→ Send × conversations not yet replayed ─→ replay_conversation ─→ gather ─┐
              ↑ └───────────────────────── (none left) ──→ report ─→ END                       │
              └─────────────────────────────────────────────────────────────────────────────────┘

Each conversation's user turns go to the assistant in order, each with the conversation so far
(the benchmark's questions and the assistant's own replies); conversations run in parallel
(``concurrency``). A replayed conversation is appended whole to ``conversations.jsonl`` in the
run directory: a killed replay resumes with the conversations it had not finished (one cut off
mid-way is replayed from its first turn). ``report`` scores the passages each turn used against the
benchmark's judgments (ir_measures), reads whether the replies on turns without gold abstained or
asked back (evals/measures/replies.py), averages the judges' faithfulness (to the passages the reply used)
and quality of each reply (agents/judges.py, the audit's) and, where the benchmark has nuggets
(a nuggets.jsonl in or beside its BEIR folder), the share of the turn's nuggets each reply states
(the nuggets job's support judge), breaks the means down per switch type and turn label, and writes
``results.json``, ``report.md`` and ``report.html`` with the worst conversations whole.

State holds conversation ids only; turns live in the log.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from functools import partial
from typing import Annotated, Any, Literal

from langgraph.graph import END, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send
from typing_extensions import TypedDict

from benchsmith.agents.judges import FaithfulnessJudge, QualityJudge
from benchsmith.agents.nuggets import SupportJudge
from benchsmith.evals.reports.replay_report import replay_report_files, replay_results
from benchsmith.graphs.contexts.replay import JUDGED_PASSAGES, ReplayContext
from benchsmith.graphs.runtime.corpus_indexes import cached_benchmark, corpus_documents, document_text
from benchsmith.graphs.runtime.fanout import add_fan_out, next_batch
from benchsmith.graphs.runtime.job_runtime import JobRuntime
from benchsmith.graphs.runtime.progress import progress_reporter
from benchsmith.graphs.runtime.resources import run_seam
from benchsmith.stores.formats.beir import Benchmark, BenchmarkQuery
from benchsmith.stores.formats.nugget_texts import nuggets_beside, read_nugget_texts
from benchsmith.stores.persistence.bounded_cache import BoundedCache
from benchsmith.stores.persistence.jsonl import record_log
from benchsmith.tools.benchmark.assistants import resolve_assistant
from benchsmith.tools.retrieval.outside_retrieval import finished_queries, rate_limiter
from benchsmith.tools.retrieval.outside_retrievers import CorpusIds, map_to_corpus, with_retries

CONVERSATIONS_FILE = "conversations.jsonl"


class ReplayInput(TypedDict):
    run_id: str
    benchmark: str  # a BEIR directory, a synthesis run directory or a run id
    assistant: str  # an assistant spec (tools/benchmark/assistants.py)


class ReplayOutput(TypedDict, total=False):
    run_id: str
    report: dict[str, str]  # {"markdown", "html", "results"}: paths
    aggregate: dict[str, float]  # {measure: mean over judged turns}
    without_gold: dict[str, int]  # turns, abstained, asked_back, handled
    conversations_replayed: int
    answers: dict[str, float | None]  # mean faithfulness, quality and agreement (1-5) of the replies, by the judges
    nugget_coverage: float | None  # mean share of a turn's nuggets a reply states (0-1); None without nuggets


class ReplayState(ReplayInput, ReplayOutput, total=False):  # type: ignore[misc]  # LangGraph merges input and output
    conversations: list[str]
    finished: Annotated[list[str], operator.add]


class ConversationTask(TypedDict):
    run_id: str
    benchmark: str
    assistant: str
    conversation: str


job = JobRuntime(ReplayContext)


def _benchmark(runtime: Runtime[ReplayContext], spec: str) -> Benchmark:
    return cached_benchmark(spec, job.workspace(runtime), job.context(runtime).split)


def conversations_of(benchmark: Benchmark) -> dict[str, list[BenchmarkQuery]]:
    """``{conversation id: its turns in order}``; a query of a single-turn benchmark is a conversation of its own."""
    grouped: dict[str, list[BenchmarkQuery]] = {}
    for query in benchmark.queries:
        grouped.setdefault(query.conversation_id or query.id, []).append(query)
    return {cid: sorted(turns, key=lambda q: (q.turn or 0, q.id)) for cid, turns in sorted(grouped.items())}


def _log_path(runtime: Runtime[ReplayContext], run_id: str) -> Any:
    return job.run_dir(runtime, run_id).file(CONVERSATIONS_FILE)


def plan(state: ReplayState, runtime: Runtime[ReplayContext]) -> dict[str, Any]:
    resolve_assistant(state["assistant"], job.context(runtime).timeout_s)  # an unknown assistant stops here
    return {"conversations": list(conversations_of(_benchmark(runtime, state["benchmark"])))}


def dispatch(state: ReplayState, runtime: Runtime[ReplayContext]) -> list[Send] | Literal["report"]:
    done = record_log(_log_path(runtime, state["run_id"]), "_id").ids()
    pending = [cid for cid in state["conversations"] if cid not in done]
    progress_reporter("conversations")(len(state["conversations"]) - len(pending), len(state["conversations"]))
    if not pending:
        return "report"
    keys = {"run_id": state["run_id"], "benchmark": state["benchmark"], "assistant": state["assistant"]}
    return [
        Send("replay_conversation", {**keys, "conversation": cid})
        for cid in next_batch(pending, job.context(runtime).concurrency)
    ]


# one rate limiter per assistant and rate, shared by the conversations of a run (and runs after it)
_limiters: BoundedCache[tuple[str, float | None], Callable[[], None]] = BoundedCache(64)


def replay_conversation(task: ConversationTask, runtime: Runtime[ReplayContext]) -> dict[str, Any]:
    """One conversation's turns, in order, each with the conversation so far; appended whole."""
    context = job.context(runtime)
    log = record_log(_log_path(runtime, task["run_id"]), "_id")
    if task["conversation"] in log:  # finished before a crash
        return {"finished": [task["conversation"]]}
    benchmark = _benchmark(runtime, task["benchmark"])
    assistant = resolve_assistant(task["assistant"], context.timeout_s)
    wait = _limiters.setdefault((task["assistant"], context.rate_limit), rate_limiter(context.rate_limit))
    corpus = CorpusIds(corpus_documents(benchmark), document_text)
    history: list[dict[str, str]] = []
    turns = []
    for query in conversations_of(benchmark)[task["conversation"]]:
        said = with_retries(partial(_ask, assistant, wait, query.question, list(history)), context.max_attempts)
        passages, unmapped = map_to_corpus(said.passages, corpus)
        turns.append(
            {
                "id": query.id,
                "conversation": task["conversation"],
                "turn": query.turn,
                "switch": query.switch,
                "answerability": query.answerability,
                "question_type": query.question_type,
                "question": query.question,
                "reply": said.reply,
                "passages": passages,
                "unmapped": unmapped,
            }
        )
        turns[-1]["judged"] = _judged(runtime, task["run_id"], benchmark, query, history, said.reply, passages)
        history.append({"user": query.question, "agent": said.reply})
    log.append_once({"_id": task["conversation"], "turns": turns})
    return {"finished": [task["conversation"]]}


def _judged(
    runtime: Runtime[ReplayContext],
    run_id: str,
    benchmark: Benchmark,
    query: BenchmarkQuery,
    history: list[dict[str, str]],
    reply: str,
    passages: list[tuple[str, float]],
) -> dict[str, dict[str, float | None]]:
    """Each judge's faithfulness (to the first passages the reply used; None without passages),
    quality and agreement (1-5) of one reply; an empty reply is not judged. Agreement is the
    faithfulness judge asked whether the reply's claims are supported by the benchmark's reference
    answer (None where the turn has none, or has no gold to answer from). Where the benchmark has
    nuggets for the turn, ``nugget_coverage`` too: the share of them the reply states (0-1)."""
    if not reply.strip():
        return {}
    documents = corpus_documents(benchmark)
    used = "\n\n".join(document_text(*documents[doc_id]) for doc_id, _ in passages[:JUDGED_PASSAGES])
    exchanges = [(turn["user"], turn["agent"]) for turn in history]
    nuggets = benchmark_nuggets(benchmark).get(query.id, [])
    verdicts: dict[str, dict[str, float | None]] = {}
    for spec in job.context(runtime).judges:
        seam = run_seam(job.workspace(runtime), run_id, spec)
        faithful = seam.run(FaithfulnessJudge(), answer=reply, document=used).score if used else None
        quality = seam.run(QualityJudge(), history=exchanges, question=query.question, answer=reply).score
        agreement = (
            seam.run(FaithfulnessJudge(), answer=reply, document=query.response).score
            if query.response and query.id in benchmark.qrels
            else None
        )
        verdicts[spec] = {"faithfulness": faithful, "quality": quality, "agreement": agreement}
        if nuggets:
            verdicts[spec]["nugget_coverage"] = nugget_coverage(seam, query.question, nuggets, reply)
    return verdicts


def benchmark_nuggets(benchmark: Benchmark) -> dict[str, list[str]]:
    """``{query id: nugget texts}`` when the benchmark has a nuggets.jsonl (a `benchsmith nuggets`
    run's), else nothing; read once per file version."""
    path = nuggets_beside(benchmark.directory)
    return _nuggets_of(str(path), path.stat().st_mtime_ns) if path is not None else {}


@functools.lru_cache(maxsize=4)
def _nuggets_of(path: str, _modified: int) -> dict[str, list[str]]:
    return read_nugget_texts(path)


def nugget_coverage(seam: Any, question: str, nuggets: list[str], reply: str) -> float:
    """The share of the question's nuggets the reply states, by the nuggets job's support judge
    reading the reply as one chunk (FreshStack's nugget coverage, of an answer instead of a ranking)."""
    verdict = seam.run(
        SupportJudge(1, len(nuggets)), question=question, nuggets=nuggets, chunks=[{"title": "", "text": reply}]
    )
    stated = {number for judgment in verdict.judgments for number in judgment.supported_nuggets}
    return len(stated & set(range(1, len(nuggets) + 1))) / len(nuggets)


def _ask(assistant: Any, wait: Callable[[], None], question: str, history: list[dict[str, str]]) -> Any:
    wait()
    return assistant(question, history)


def report(state: ReplayState, runtime: Runtime[ReplayContext]) -> ReplayOutput:
    context = job.context(runtime)
    benchmark = _benchmark(runtime, state["benchmark"])
    finished = finished_queries(_log_path(runtime, state["run_id"]))
    conversations = [finished[cid] for cid in state["conversations"]]
    results = replay_results(
        conversations,
        benchmark.qrels,
        context.measures,
        context.worst,
        {"benchmark": str(benchmark.directory), "benchmark_name": benchmark.name, "assistant": state["assistant"]},
    )
    return {
        "report": job.run_dir(runtime, state["run_id"]).write_report(replay_report_files(results)),
        "aggregate": results["aggregate"],
        "without_gold": results["without_gold"],
        "conversations_replayed": len(conversations),
        "answers": results["answers"],
        "nugget_coverage": results["nugget_coverage"],
    }


builder = StateGraph(ReplayState, context_schema=ReplayContext, input_schema=ReplayInput, output_schema=ReplayOutput)
add_fan_out(builder, plan=plan, dispatch=dispatch, work=replay_conversation, finish=report)
builder.add_edge("report", END)

graph = builder.compile(name="replay")  # the Studio copy: no checkpointer (the server brings its own)
