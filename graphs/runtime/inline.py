"""Running a graph that is one path of nodes, in line, without LangGraph's scheduler.

A conversation of synthesis is a chain of nodes (walker → turn_type → … → polisher → router →
walker …): each node leads to exactly one next node, by its one edge or by the ``Command`` it
returns. Run through Pregel, each of those steps costs about 0.2 ms of CPU for the scheduling
alone (tasks, channels, writes, callbacks, configs), 35 steps per conversation of four turns:
at 64 conversations in flight that was 1.1 ms of the 2.4 ms each model call cost the process
(benchmarks/synthesize.py, issue 23), and Python runs on one core at a time.

:class:`InlineGraph` runs the same builder's node functions in the same order with the same
state semantics (each key its last value, a key with a reducer reduced, updates to keys the
state lacks refused, the output filtered by the output schema) as a plain loop. The graph itself
is unchanged: Studio draws it, an app compiles it with a checkpointer; this is only how a run
drives a graph it does not checkpoint. A graph this cannot run as LangGraph would (a node with
two edges out, a conditional edge, a ``Send``, a ``Command`` to the parent graph) is refused when
the runner is built, not met half-way through; tests/test_inline_graph.py checks the outputs are
LangGraph's.

Not here, by design: per-node retry policies, caching, interrupts, checkpoints and per-node
tracing callbacks; the nodes see ``runtime.context`` and nothing else of the runtime.

A run in line is also one unit of work: :func:`once_per_run` lets the nodes look up what stays put
while the graph runs (the workspace, the model seam, a collection's clustering) once per run
instead of at every node. Each lookup checks its file, folder or settings again (a stat, the working
directory, a settings object built and hashed): at every node that was a tenth of synthesis's
instructions per model call, in system calls that each hand the interpreter to another thread.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Hashable
from contextvars import ContextVar
from typing import Any, TypeVar, cast, get_type_hints

from langgraph.channels.binop import BinaryOperatorAggregate
from langgraph.constants import END, START
from langgraph.errors import GraphRecursionError, InvalidUpdateError
from langgraph.graph import StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Command

# As LangGraph's own default: a loop that never reaches END stops instead of spinning.
STEP_LIMIT = 10_000

T = TypeVar("T")
# What the nodes of the run in line in progress (in this thread) looked up; None outside such a run.
_run_memo: ContextVar[dict[Hashable, Any] | None] = ContextVar("inline_run_memo", default=None)


def once_per_run(key: Hashable, make: Callable[[], T]) -> T:
    """``make()``, made once for ``key`` in a run in line (:meth:`InlineGraph.invoke`) and given to
    its later nodes; made at every call elsewhere (under LangGraph's scheduler). For what cannot
    change while a graph runs: the key names everything the value depends on but the run's context."""
    memo = _run_memo.get()
    if memo is None:
        return make()
    if key not in memo:
        memo[key] = make()
    return cast(T, memo[key])


def _keys(schema: type) -> set[str]:
    return set(get_type_hints(schema, include_extras=False))


class InlineGraph:
    """``builder``'s graph run as a plain loop: ``invoke(inputs, context)`` returns what
    ``builder.compile(checkpointer=False).invoke(inputs, context=context)`` returns."""

    def __init__(self, builder: StateGraph[Any, Any, Any, Any]):
        if builder.branches:
            raise ValueError(f"conditional edges from {sorted(builder.branches)}: not a single path; use LangGraph")
        if builder.waiting_edges:
            raise ValueError("edges that join several nodes: not a single path; use LangGraph")
        self._next: dict[str, str] = {}
        for source, target in builder.edges:
            if source in self._next:
                raise ValueError(f"node {source!r} has several edges out: not a single path; use LangGraph")
            self._next[source] = target
        self._nodes: dict[str, Callable[..., Any]] = {}
        self._takes_runtime: set[str] = set()
        for name, spec in builder.nodes.items():
            if spec.retry_policy or spec.cache_policy or spec.defer:
                raise ValueError(f"node {name!r} has a retry or cache policy or is deferred; use LangGraph")
            # What LangGraph hands the function besides the state, found as it finds it (by parameter).
            accepts = set(getattr(spec.runnable, "func_accepts", {}))
            if accepts - {"runtime"}:
                raise ValueError(f"node {name!r} takes {sorted(accepts - {'runtime'})}: only the runtime runs in line")
            self._nodes[name] = spec.runnable.func  # type: ignore[union-attr]  # LangGraph keeps a node function as .func of its RunnableCallable
            if accepts:
                self._takes_runtime.add(name)
        compiled = builder.compile(checkpointer=False)
        reduced = {
            name: channel for name, channel in compiled.channels.items() if isinstance(channel, BinaryOperatorAggregate)
        }
        self._reducers = {name: channel.operator for name, channel in reduced.items()}
        # A reduced key starts with its type's empty value (turns: []), as LangGraph's channel does.
        self._initial = {name: channel.get() for name, channel in reduced.items() if channel.is_available()}
        self._state_keys = _keys(builder.state_schema)
        self._input_keys = _keys(builder.input_schema)
        self._output_keys = _keys(builder.output_schema)
        self._context_schema = builder.context_schema

    def invoke(self, inputs: dict[str, Any], context: Any = None) -> dict[str, Any]:
        state: dict[str, Any] = {name: copy.copy(value) for name, value in self._initial.items()}
        self._apply(state, {key: value for key, value in inputs.items() if key in self._input_keys}, START)
        if isinstance(context, dict) and self._context_schema is not None:  # as LangGraph coerces it
            context = self._context_schema(**context)
        runtime = Runtime(context=context)
        memo = _run_memo.set({})
        try:
            return self._run(state, runtime)
        finally:
            _run_memo.reset(memo)

    def _run(self, state: dict[str, Any], runtime: Runtime) -> dict[str, Any]:
        node = self._next.get(START, END)
        for _ in range(STEP_LIMIT):
            if node == END:
                return {key: value for key, value in state.items() if key in self._output_keys}
            # A node's own copy of the state, as LangGraph gives it.
            result = (
                self._nodes[node](dict(state), runtime=runtime)
                if node in self._takes_runtime
                else self._nodes[node](dict(state))
            )
            following = self._next.get(node, END)
            if isinstance(result, Command):
                if result.graph is not None or not isinstance(result.goto, str) or result.resume is not None:
                    raise ValueError(f"node {node!r} returned {result!r}: only a goto to one node runs in line")
                if result.goto and node in self._next:  # LangGraph would follow both: two paths
                    raise ValueError(f"node {node!r} has an edge out and returned a goto: not a single path")
                following = result.goto or following
                result = result.update
            if result is not None:
                self._apply(state, result, node)
            node = following
        raise GraphRecursionError(f"no END after {STEP_LIMIT} steps")

    def _apply(self, state: dict[str, Any], update: Any, node: str) -> None:
        if not isinstance(update, dict):
            raise InvalidUpdateError(f"node {node!r} returned {type(update).__name__}, not a dict of state updates")
        for key, value in update.items():
            if key not in self._state_keys:
                raise InvalidUpdateError(f"node {node!r} updated {key!r}, which the state does not have")
            reducer = self._reducers.get(key)
            state[key] = reducer(state[key], value) if reducer is not None and key in state else value
