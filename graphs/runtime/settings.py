"""Each setting is declared once (docs/design.md rule 11): a field of a job's context, its metadata
carrying the description and, where they apply, the bounds and the command line's spelling.
The CLI's options (benchsmith/cli/settings.py), Studio's schema (LangGraph reads the dataclass) and the
run record (:func:`recorded_settings`) are derived from it. The API's job functions write each setting
out as a keyword parameter, so help() and editors show it: tests/test_settings_declared_once.py holds
their names and defaults to the context's fields.

Metadata keys of a field:

- ``description``: the help text everywhere (Studio, ``--help``).
- ``min`` / ``max``: bounds, checked by :func:`check_bounds` (API) and by the CLI's option.
- ``cli``: the flag(s), where they differ from ``--field-name`` (``--timeout`` for ``timeout_s``).
- ``envvar``, ``show_default``: the CLI option's environment variable and default shown.
- ``old_cli``: a renamed setting's former flag, still taken (hidden, with a deprecation notice).
- ``recorded: False``: not part of the run's identity (where it runs, how fast, how patiently):
  a resume may change it, so the run record leaves it out.
- ``internal: True``: not a user setting; neither an API argument nor a CLI option.

This module is light (no model client, Chroma, numpy): ``benchsmith --help`` imports it.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
import warnings
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ParamSpec, TypeVar

from benchsmith.agents.defaults import StructuredOutput
from benchsmith.graphs.runtime.bounds import MAX_ATTEMPTS, MAX_CONCURRENCY, SEED_BOUNDS
from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.postgres import database_url
from benchsmith.stores.persistence.workspace import WORKSPACE_ENV

DATABASE_ENV = "BENCHSMITH_DATABASE_URL"

P = ParamSpec("P")
R = TypeVar("R")
C = TypeVar("C")


def setting_field(
    default: Any, description: str, *, low: float | None = None, high: float | None = None, **metadata: Any
) -> Any:
    """A setting (a field of a job's context): its default, its help text, its bounds where it has
    them (``low``, ``high``: checked by :func:`check_bounds` and by the CLI's option) and its other
    metadata keys (``cli``, ``recorded``... above)."""
    bounds = {key: value for key, value in (("min", low), ("max", high)) if value is not None}
    return field(default=default, metadata={"description": description, **bounds, **metadata})


def share_field(description: str, default: float = 0.0) -> Any:
    """A setting that is a share, a rate or a probability: from 0 to 1."""
    return setting_field(default, description, low=0.0, high=1.0)


def seed_field(description: str) -> Any:
    """The ``seed`` setting (what it seeds differs), within numpy's seed range."""
    return setting_field(0, description, low=SEED_BOUNDS["min"], high=SEED_BOUNDS["max"])


def rate_limit_field(description: str) -> Any:
    """The ``rate_limit`` setting of a job that calls a server (a model's, or the user's own system)."""
    return setting_field(None, description, recorded=False)


def timeout_field(description: str, default: float = 60.0) -> Any:
    """The ``timeout_s`` setting (``--timeout``) of a job that calls a server."""
    return setting_field(default, description, low=0.1, cli="--timeout", recorded=False)


def attempts_field(description: str) -> Any:
    """The ``max_attempts`` setting of a job that calls a server (what is retried differs)."""
    return setting_field(6, description, low=1, high=MAX_ATTEMPTS, recorded=False)


def concurrency_field(description: str, default: int = 4) -> Any:
    """The ``concurrency`` setting every fanning-out context has (what runs at once differs)."""
    return setting_field(default, description, low=1, high=MAX_CONCURRENCY, recorded=False)


@dataclass(kw_only=True)
class StoreOptions:
    """Where a job's files and vectors live (every job's context has these)."""

    workspace: str | None = setting_field(
        None,
        "Folder holding the Chroma index, checkpoints, model cache and runs. "
        "Default: $BENCHSMITH_WORKSPACE, else ./.benchsmith.",
        cli=("--workspace", "-w"),
        envvar=WORKSPACE_ENV,
        show_default="./.benchsmith",
        recorded=False,
    )
    chroma_host: str | None = setting_field(
        None, "HOST:PORT of a Chroma server instead of the embedded store in the workspace.", recorded=False
    )
    database: str | None = setting_field(
        None,
        "A postgresql://USER@HOST/DATABASE URL for the run's checkpoints, model cache, usage and record in PostgreSQL "
        "(with --ray, the cache every node's tasks share). Empty: $BENCHSMITH_DATABASE_URL, else SQLite in the workspace. "
        "Pass a password through the environment variable, not the command line (commands are "
        "kept for resuming).",
        envvar=DATABASE_ENV,
        recorded=False,
    )

    def database_url(self) -> str | None:
        return database_url(self.database)


@dataclass(kw_only=True)
class ModelOptions:
    """How a job talks to its model server (every job that calls a model has these)."""

    seed: int = seed_field("Seed for sampling, choices and model calls.")
    rate_limit: float | None = rate_limit_field(
        "At most this many model requests per second to one endpoint; empty: no limit."
    )
    timeout_s: float = timeout_field("Seconds before a model request times out.")
    max_attempts: int = attempts_field("Attempts per model call (retries on 429, 5xx, timeouts and invalid replies).")
    structured_output: StructuredOutput = (
        field(  # field() itself: ruff's RUF009 flags any other call under a Literal alias
            default="auto",
            metadata={
                "description": "How replies are asked for: auto (JSON schema, then function calling, then JSON mode, "
                "remembered per endpoint), json_schema, function_calling or json_mode.",
                "recorded": False,
            },
        )
    )

    def model_settings(self) -> Any:
        """The seam's settings (agents.seam.backends.ModelSettings); an impossible value is an InputError."""
        from benchsmith.agents.seam.backends import ModelSettings  # the model client loads with a job, not with --help

        try:
            return ModelSettings(
                seed=self.seed,
                requests_per_second=self.rate_limit,
                timeout_s=self.timeout_s,
                max_attempts=self.max_attempts,
                structured_output=self.structured_output,
            )
        except ValueError as error:
            raise InputError(str(error)) from None


# ---------------------------------------------------------------------------------------
# Reading the declarations.


def user_settings(context_type: type, exclude: Iterable[str] = ()) -> list[dataclasses.Field[Any]]:
    """The fields of a context a user sets (API argument, CLI option), in declaration order."""
    left_out = set(exclude)
    fields = [
        item
        for item in dataclasses.fields(context_type)
        if not item.metadata.get("internal") and item.name not in left_out
    ]
    own = inspect.get_annotations(context_type)
    return sorted(fields, key=lambda item: item.name not in own)  # the job's own first, then the shared ones


def default_of(item: dataclasses.Field[Any]) -> Any:
    if item.default is dataclasses.MISSING and item.default_factory is not dataclasses.MISSING:
        return item.default_factory()
    return item.default


def flags_of(item: dataclasses.Field[Any]) -> tuple[str, ...]:
    """The CLI flags of a setting: its ``cli`` metadata, else ``--field-name``."""
    flags = item.metadata.get("cli") or f"--{item.name.replace('_', '-')}"
    return (flags,) if isinstance(flags, str) else tuple(flags)


def type_hints(context_type: type) -> dict[str, Any]:
    """The fields' types as objects (the modules use postponed annotations)."""
    return typing.get_type_hints(context_type)


def check_bounds(context: Any) -> None:
    """Each setting within its declared ``min``/``max``; the message names the CLI flag."""
    for item in user_settings(type(context)):
        value, low, high = getattr(context, item.name), item.metadata.get("min"), item.metadata.get("max")
        if value is None or isinstance(value, bool) or (low is None and high is None):
            continue
        flag = flags_of(item)[0]
        if low is not None and high is not None and not low <= value <= high:
            raise InputError(f"{flag} must be within [{low:g}, {high:g}], got {value}")
        if low is not None and value < low:
            raise InputError(f"{flag} must be at least {low:g}, got {value}")
        if high is not None and value > high:
            raise InputError(f"{flag} must be at most {high:g}, got {value}")


def recorded_settings(context: Any) -> dict[str, Any]:
    """The settings that make a run what it is, JSON-ready: the run record keeps them and a resume
    must repeat them (fields marked ``recorded: False`` or ``internal`` are left out)."""
    return {
        item.name: _json_ready(getattr(context, item.name))
        for item in user_settings(type(context))
        if item.metadata.get("recorded", True)
    }


def _json_ready(value: Any) -> Any:
    return [_json_ready(part) for part in value] if isinstance(value, tuple | list) else value


# ---------------------------------------------------------------------------------------
# The API's arguments.

# Settings renamed so the API keyword and the command-line option say one name (issue 31) and one name
# means one thing (issue 32: paraphrasing's BLEU/chrF limit was max_overlap, synthesis's word share is):
# the old keyword still works, with a DeprecationWarning, and a run recorded under it resumes.
RENAMED_SETTINGS = {
    "switch_probability": "switch_rate",
    "requests_per_second": "rate_limit",
    "rerank_model": "rerank",
    "max_overlap": "max_sentence_score",
}


def current_names(settings: Mapping[str, Any], taken: Collection[str]) -> dict[str, Any]:
    """``settings`` (API keywords, or a run record's settings) with each renamed one under its new name,
    where the job takes the new name and not the old (synthesis still takes max_overlap: its own)."""
    renamed = {old: new for old, new in RENAMED_SETTINGS.items() if new in taken and old not in taken}
    return {renamed.get(name, name): value for name, value in settings.items()}


def accepts_old_setting_names(job: Callable[P, R]) -> Callable[P, R]:
    """A job function that still takes each renamed setting's old keyword (with a DeprecationWarning).
    Its signature stays the job's own (``functools.wraps``): help() and editors show the settings."""
    taken = frozenset(inspect.signature(job).parameters)

    @functools.wraps(job)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        current = current_names(kwargs, taken)
        for old in kwargs.keys() - current.keys():
            warnings.warn(
                f"{job.__name__}({old}=...) is deprecated: use {RENAMED_SETTINGS[old]}=",
                DeprecationWarning,
                stacklevel=2,
            )
        return job(*args, **current)

    return call


def settings_given(context_type: type[C], arguments: Mapping[str, Any]) -> C:
    """A job's context from its keyword arguments (``locals()`` on entry), one per user setting of
    ``context_type``: the job function lists them with their defaults, and tests/test_settings_declared_once.py
    holds them to the context's fields."""
    return context_type(**{item.name: arguments[item.name] for item in user_settings(context_type)})
