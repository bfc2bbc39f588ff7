"""``benchsmith.replay``: a benchmark's conversations sent turn by turn to the user's own assistant
(a callable, a LangGraph graph, an OpenAI-compatible chat endpoint: tools/benchmark/assistants.py), the
passages it used scored per turn against the benchmark's judgments, its replies on turns without
gold read for abstaining or asking back (graphs/replay.py)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from benchsmith.graphs.contexts.replay import DEFAULT_REPLAY_MEASURES, DEFAULT_WORST, ReplayContext
from benchsmith.graphs.replay import benchmark_nuggets, builder, conversations_of
from benchsmith.graphs.runtime.corpus_indexes import cached_benchmark, corpus_documents
from benchsmith.graphs.runtime.settings import check_bounds, settings_given
from benchsmith.jobs.common import (
    CostEstimate,
    EventHandler,
    JobRun,
    check_models,
    estimate_of,
    job_result,
    priced,
    resolved_path,
    run_settled,
    stop_if_dry_run,
)
from benchsmith.jobs.evaluate import checked_measures
from benchsmith.stores.persistence.jsonl import read_json_object
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.benchmark.assistants import assistant_spec_for, resolve_assistant

JUDGE_INPUT_TOKENS, JUDGE_OUTPUT_TOKENS = 600, 60  # per judge call, for the estimate


@dataclass(frozen=True)
class ReplayResult(JobRun):
    aggregate: dict[str, float] = field(default_factory=dict)  # {measure: mean over judged turns}
    without_gold: dict[str, int] = field(default_factory=dict)  # turns, abstained, asked_back, handled
    answers: dict[str, float | None] = field(default_factory=dict)  # mean faithfulness, quality, agreement (1-5)
    nugget_coverage: float | None = None  # mean share of a turn's nuggets a reply states (0-1); None without nuggets
    report: dict[str, Path] = field(default_factory=dict)  # markdown, html, results

    def results(self) -> dict[str, Any]:
        """Everything ``results.json`` holds: per-turn measures, per switch type and turn label, the worst conversations."""
        return read_json_object(self.report["results"])


def replay(
    benchmark: str | Path,
    *,
    assistant: str | Any,
    run_id: str | None = None,
    on_event: EventHandler | None = None,
    resume: str | None = None,
    split: str = "test",
    measures: tuple[str, ...] = DEFAULT_REPLAY_MEASURES,
    judges: tuple[str, ...] = ("baseline",),
    worst: int = DEFAULT_WORST,
    concurrency: int = 4,
    rate_limit: float | None = None,
    timeout_s: float = 120.0,
    max_attempts: int = 6,
    workspace: str | None = None,
    chroma_host: str | None = None,
    database: str | None = None,
) -> ReplayResult:
    """Replay every conversation of ``benchmark`` (a BEIR directory, a synthesis run directory or
    run id) against ``assistant``: a spec (``http://HOST/v1/chat/completions[#model]``,
    ``py:module:object``, a registered name) or the object itself (a callable ``(question, history)``
    or a LangGraph graph; see tools/benchmark/assistants.py for what each returns). The same call with the
    same ``run_id`` resumes with the conversations not yet replayed."""
    settings = settings_given(ReplayContext, locals())
    resolved = Workspace.resolve(settings.workspace)
    check_bounds(settings)
    inputs, context = _checked(resolved, benchmark, assistant, settings)
    stop_if_dry_run(lambda: _estimate(resolved, inputs, context))
    outcome = run_settled(builder, "replay", resolved, inputs, context, run_id=run_id, on_event=on_event, resume=resume)
    return job_result(ReplayResult, outcome)


def _checked(
    workspace: Workspace, benchmark: str | Path, assistant: Any, settings: ReplayContext
) -> tuple[dict[str, Any], ReplayContext]:
    """The run's inputs, every one checked (the benchmark loaded, the assistant resolved, the
    measures parsed) before the run exists."""
    spec = assistant_spec_for(assistant)
    resolve_assistant(spec, settings.timeout_s)

    names = checked_measures(settings.measures)
    check_models(*settings.judges)
    loaded = cached_benchmark(resolved_path(str(benchmark)), workspace, settings.split)
    corpus_documents(loaded)  # a malformed corpus stops here
    benchmark_nuggets(loaded)  # and so does a malformed nuggets.jsonl
    return {"benchmark": resolved_path(str(benchmark)), "assistant": spec}, replace(settings, measures=tuple(names))


def _estimate(workspace: Workspace, inputs: dict[str, Any], settings: ReplayContext) -> CostEstimate:
    """:func:`estimate_replay` once the call is checked."""
    loaded = cached_benchmark(inputs["benchmark"], workspace, settings.split)
    conversations = conversations_of(loaded)
    turns = len(loaded.queries)
    # At most three judge calls per turn and judge (faithfulness, quality, agreement); their prompts hold the
    # question, the reply and a few passages, unknown before the assistant answers: priced at a typical size.
    with_nuggets = sum(1 for query in loaded.queries if benchmark_nuggets(loaded).get(query.id))
    calls = 3 * turns + with_nuggets  # and one nugget-coverage call per turn with nuggets
    notes = [f"{turns:,} assistant calls, {settings.concurrency} conversations at a time"]
    if with_nuggets:
        notes.append(f"{with_nuggets:,} turns have nuggets: each reply's nugget coverage is judged too")
    return priced(
        f"{len(conversations):,} conversations ({turns:,} turns) of {loaded.name} sent to {inputs['assistant']}",
        [(judge, calls, calls * JUDGE_INPUT_TOKENS, calls * JUDGE_OUTPUT_TOKENS) for judge in settings.judges],
        notes,
    )


estimate_replay = estimate_of(
    "estimate_replay",
    replay,
    CostEstimate,
    "The conversations and turns a replay (:func:`replay`'s arguments) would send to the assistant "
    "(it costs no model calls of ours).",
)
