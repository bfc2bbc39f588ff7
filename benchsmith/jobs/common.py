"""What every job of the Python API shares: checks made before any work starts, the usage
and cost figures a result carries, and the estimate a dry run prints."""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, ParamSpec, TypeVar, cast

from benchsmith.agents.seam.endpoints import resolve_base_url
from benchsmith.agents.seam.models import BASELINE, parse_model_spec
from benchsmith.agents.seam.pricing import PriceTable
from benchsmith.graphs.runtime.resources import check_embedder_spec, check_model_spec, estimating, missing_key
from benchsmith.graphs.runtime.runner import AnyGraph, RunOutcome, run_job
from benchsmith.graphs.runtime.settings import recorded_settings
from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.postgres import database_url
from benchsmith.stores.persistence.runs import is_valid_run_id, new_run_id
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.retrieval.retriever_specs import parse_retriever

EventHandler = Callable[[dict[str, Any]], None]
P = ParamSpec("P")
R = TypeVar("R")

# Chroma's rule for collection names: 3-512 characters of [a-zA-Z0-9._-], starting and ending
# with a letter or digit.
COLLECTION_NAME = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9._-]{1,510}[a-zA-Z0-9]$")


@dataclass(frozen=True)
class Usage:
    """Model calls a run made, and what they cost."""

    calls: int = 0  # every agent call, the offline baseline's included
    cached_calls: int = 0
    offline_calls: int = 0  # answered by the offline baseline: no model was asked
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    retries: int = 0

    @classmethod
    def from_totals(cls, totals: dict[str, Any]) -> Usage:
        return cls(**{name: totals.get(name, 0) for name in cls.__dataclass_fields__})


@dataclass(frozen=True)
class JobRun:
    """Which run a result comes from, and how it got there."""

    run_id: str
    run_dir: Path
    resumed: bool  # continued from a checkpoint after an interruption
    already_finished: bool  # found finished: nothing was redone
    usage: Usage


_JOB_RUN_FIELDS = {item.name for item in fields(JobRun)}
J = TypeVar("J", bound=JobRun)


@dataclass(frozen=True)
class CostEstimate:
    """What a run would spend, before spending: model calls, tokens (about 4 characters each)
    and dollars at the known prices."""

    summary: str  # what would be done, in words
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    unpriced_models: list[str] = field(default_factory=list)  # models without a known price (counted as 0)
    notes: list[str] = field(default_factory=list)


def priced(summary: str, per_model: Iterable[tuple[str, int, int, int]], notes: Iterable[str] = ()) -> CostEstimate:
    """A :class:`CostEstimate` from ``(model spec, calls, input tokens, output tokens)`` rows."""
    prices = PriceTable.load()
    base_url = resolve_base_url()  # prices are per (endpoint, model): a local server costs 0 unless priced
    calls = input_tokens = output_tokens = 0
    cost = 0.0
    unpriced = []
    notes = list(notes)
    for spec, model_calls, model_input, model_output in per_model:
        if model_calls and (reason := missing_key(spec)) and not any(reason in note for note in notes):
            notes.append(f"a real run would stop at once: {reason}")
        _, model = parse_model_spec(spec) if spec != BASELINE else (BASELINE, BASELINE)
        calls, input_tokens, output_tokens = (
            calls + model_calls,
            input_tokens + model_input,
            output_tokens + model_output,
        )
        cost += prices.cost(model, model_input, model_output, base_url)
        if model_calls and model != BASELINE and not prices.is_priced(model, base_url):
            unpriced.append(spec)
    return CostEstimate(summary, calls, input_tokens, output_tokens, cost, unpriced, list(notes))


class _DryRunStop(Exception):
    """Carries a dry run's estimate out of the job function, from the step where the run would start."""

    def __init__(self, estimate: object) -> None:
        super().__init__("dry run")
        self.estimate = estimate


_dry_run: ContextVar[bool] = ContextVar("dry_run", default=False)


def estimate_of(name: str, job: Callable[P, Any], returns: type[R], doc: str) -> Callable[P, R]:
    """``name``: the dry run of ``job`` (returning a ``returns``: a :class:`CostEstimate`, or a preview that holds
    one), called with the job's own arguments (its signature is the job's:
    help() and editors show every setting): the arguments are checked as the job checks them, and
    where the job calls :func:`stop_if_dry_run`, before any run exists, the estimate is returned.
    Model specs are checked, but a missing key becomes a note of the estimate (a user may price a
    run before getting a key) instead of an error."""

    @functools.wraps(job)
    def estimate(*args: P.args, **kwargs: P.kwargs) -> R:
        marked = _dry_run.set(True)
        try:
            with estimating():
                job(*args, **kwargs)
        except _DryRunStop as stop:
            return cast(R, stop.estimate)
        finally:
            _dry_run.reset(marked)
        raise RuntimeError(f"{job.__name__} ran to the end of a dry run: it calls no stop_if_dry_run")

    estimate.__name__ = estimate.__qualname__ = name  # its own name in help() and the API's table
    estimate.__doc__ = doc
    estimate.__signature__ = inspect.signature(job).replace(return_annotation=returns.__name__)  # type: ignore[attr-defined]
    return estimate


def stop_if_dry_run(estimate: Callable[[], object]) -> None:
    """In a dry run (:func:`estimate_of`), stop the job here with ``estimate()``; in a run, go on."""
    if _dry_run.get():
        raise _DryRunStop(estimate())


def run_settled(
    builder: AnyGraph,
    job: str,
    workspace: Workspace,
    inputs: dict[str, Any],
    context: Any,
    *,
    run_id: str | None,
    on_event: EventHandler | None,
    resume: str | None,
    max_concurrency: int | None = None,
) -> RunOutcome:
    """Run ``job``'s graph on its checked ``inputs`` with ``context`` settled: the run id checked
    (a new one when none is given), the workspace resolved, the database URL taken from the
    environment when not given, the model settings checked before the run exists, and the run
    recorded with its inputs and the context's recorded settings (graphs/runtime/settings.py).
    ``max_concurrency`` defaults to the context's ``concurrency`` setting, where it has one."""
    run_id = checked_run_id(run_id, job)
    context = replace(context, workspace=str(workspace.root), database=database_url(context.database))
    if hasattr(context, "model_settings"):
        context.model_settings()  # an impossible model setting stops here, before the run exists
    return run_job(
        builder,
        job=job,
        workspace=workspace,
        run_id=run_id,
        inputs={"run_id": run_id, **inputs},
        context=context,
        settings={**inputs, **recorded_settings(context)},
        on_event=on_event,
        max_concurrency=max_concurrency if max_concurrency is not None else getattr(context, "concurrency", None),
        resume=resume,
        database=context.database,
    )


def checked_run_id(run_id: str | None, job: str) -> str:
    """The given run id (checked) or a new one."""
    if run_id is None:
        return new_run_id(job)
    if not is_valid_run_id(run_id):
        raise InputError(f"invalid run id {run_id!r}: use letters, digits, '-' and '_'")
    return run_id


def check_collection_name(name: str) -> None:
    if not COLLECTION_NAME.match(name):
        raise InputError(
            f"invalid collection name {name!r}: 3 to 512 letters, digits, '.', '_' or '-', starting "
            "and ending with a letter or digit"
        )


def check_models(*specs: str) -> None:
    for spec in specs:
        check_model_spec(spec)


def check_embedders(*specs: str | None) -> None:
    """Each embedder spec (``None``: the default) names a registered embedder, ``openai:<model>`` or a
    sentence-transformers model this machine has."""
    for spec in specs:
        if spec:
            check_embedder_spec(spec)


def retriever_embedders(retrievers: Iterable[str]) -> list[str]:
    """The embedders ``dense:MODEL`` retrievers (alone or fused) name, for :func:`check_embedders`."""

    models = []
    for text in retrievers:
        spec = parse_retriever(text)
        models += [part.model for part in (spec, *spec.components) if part.kind == "dense" and part.model]
    return models


def check_within(minimum: float, maximum: float, **values: float | None) -> None:
    """Each named value (when given) is within ``[minimum, maximum]``, as a setting's declared bounds
    (graphs/runtime/settings.check_bounds) are for an argument declared by hand; the message names the option."""
    for name, value in values.items():
        if value is not None and not minimum <= value <= maximum:
            raise InputError(f"--{name.replace('_', '-')} must be within [{minimum:g}, {maximum:g}], got {value}")


def check_chunk_sizes(chunk_size: int, min_chars: int) -> None:
    """Chunks are at most ``chunk_size`` characters and those under ``min_chars`` are dropped: a
    chunk size below the minimum would drop every chunk and leave an empty corpus."""
    if chunk_size < min_chars:
        raise InputError(
            f"--chunk-size {chunk_size} is below --min-chars {min_chars}: every chunk would be dropped; "
            "give a chunk size of at least the minimum"
        )


def resolved_path(spec: str) -> str:
    """A benchmark or file argument as recorded with the run: absolute when it is a path."""
    return str(Path(spec).resolve()) if Path(spec).exists() else spec


def job_result(result_type: type[J], outcome: RunOutcome, **computed: Any) -> J:
    """The typed result of a finished run: its :class:`JobRun` fields, each other field of
    ``result_type`` the graph's output holds under the field's name (``report``: its files as paths),
    and ``computed``, the fields the job converts or finds in the run directory. A field the output
    lacks, or holds as None, keeps its default."""
    values = outcome.values
    taken = {
        name: values[name]
        for name in {item.name for item in fields(result_type)} - _JOB_RUN_FIELDS - computed.keys()
        if values.get(name) is not None
    }
    if "report" in taken:
        taken["report"] = {kind: Path(path) for kind, path in taken["report"].items()}
    return result_type(
        run_id=outcome.run_id,
        run_dir=outcome.run_dir.path,
        resumed=outcome.resumed,
        already_finished=outcome.already_finished,
        usage=Usage.from_totals(outcome.usage),
        **taken,
        **computed,
    )
