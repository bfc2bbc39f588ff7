"""Each setting is declared once (docs/design.md rule 11): a field of a job's context, its metadata
carrying the description and, where they apply, the bounds and the command line's spelling.
The API's arguments (:func:`takes_settings`), the CLI's options (benchsmith/cli/settings.py),
Studio's schema (LangGraph reads the dataclass) and the run record (:func:`recorded_settings`)
are derived from it.

Metadata keys of a field:

- ``description``: the help text everywhere (Studio, ``--help``).
- ``min`` / ``max``: bounds, checked by :func:`check_bounds` (API) and by the CLI's option.
- ``cli``: the flag(s), where they differ from ``--field-name`` (``--timeout`` for ``timeout_s``).
- ``envvar``, ``show_default``: the CLI option's environment variable and default shown.
- ``recorded: False``: not part of the run's identity (where it runs, how fast, how patiently):
  a resume or a worker may change it, so the run record leaves it out.
- ``internal: True``: not a user setting; neither an API argument nor a CLI option.

This module is light (no model client, Chroma, numpy): ``benchsmith --help`` imports it.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from benchsmith.agents.defaults import StructuredOutput
from benchsmith.graphs.runtime.bounds import MAX_ATTEMPTS, MAX_CONCURRENCY, SEED_BOUNDS
from benchsmith.stores.errors import InputError
from benchsmith.stores.postgres import database_url
from benchsmith.stores.work_items import DEFAULT_LEASE_S
from benchsmith.stores.workspace import WORKSPACE_ENV

DATABASE_ENV = "BENCHSMITH_DATABASE_URL"


@dataclass(kw_only=True)
class StoreOptions:
    """Where a job's files and vectors live (every job's context has these)."""

    workspace: str | None = field(default=None, metadata={
        "description": "Folder holding the Chroma index, checkpoints, model cache and runs. "
                       "Default: $BENCHSMITH_WORKSPACE, else ./.benchsmith.",
        "cli": ("--workspace", "-w"), "envvar": WORKSPACE_ENV, "show_default": "./.benchsmith", "recorded": False})
    chroma_host: str | None = field(default=None, metadata={
        "description": "HOST:PORT of a Chroma server instead of the embedded store in the workspace.",
        "recorded": False})
    database: str | None = field(default=None, metadata={
        "description": "A postgresql://USER@HOST/DATABASE URL for the run's checkpoints, model cache, usage and record in PostgreSQL; a "
                       "synthesis, audit or paraphrasing run is then shared by workers on any machine "
                       "(`benchsmith work RUN_ID`). Empty: $BENCHSMITH_DATABASE_URL, else SQLite in the workspace. "
                       "Pass a password through the environment variable, not the command line (commands are "
                       "kept for resuming).",
        "envvar": DATABASE_ENV, "recorded": False})
    lease_s: float = field(default=DEFAULT_LEASE_S, metadata={
        "description": "With a database: seconds a worker's claim on an item lasts without its heartbeat "
                       "(renewed every third of it); after that another worker takes the item over.",
        "cli": "--lease", "min": 1.0, "recorded": False})

    def database_url(self) -> str | None:
        return database_url(self.database)


@dataclass(kw_only=True)
class ModelOptions:
    """How a job talks to its model server (every job that calls a model has these)."""

    seed: int = field(default=0, metadata={"description": "Seed for sampling, choices and model calls.", **SEED_BOUNDS})
    rate_limit: float | None = field(default=None, metadata={
        "description": "At most this many model requests per second to one endpoint; empty: no limit.",
        "recorded": False})
    timeout_s: float = field(default=60.0, metadata={
        "description": "Seconds before a model request times out.", "cli": "--timeout", "min": 0.1,
        "recorded": False})
    max_attempts: int = field(default=6, metadata={
        "description": "Attempts per model call (retries on 429, 5xx, timeouts and invalid replies).", "min": 1,
        "max": MAX_ATTEMPTS, "recorded": False})
    structured_output: StructuredOutput = field(default="auto", metadata={
        "description": "How replies are asked for: auto (JSON schema, then function calling, then JSON mode, "
                       "remembered per endpoint), json_schema, function_calling or json_mode.",
        "recorded": False})

    def model_settings(self) -> Any:
        """The seam's settings (agents.backends.ModelSettings); an impossible value is an InputError."""
        from benchsmith.agents.backends import ModelSettings  # the model client loads with a job, not with --help

        try:
            return ModelSettings(seed=self.seed, requests_per_second=self.rate_limit,
                                 timeout_s=self.timeout_s, max_attempts=self.max_attempts,
                                 structured_output=self.structured_output)
        except ValueError as error:
            raise InputError(str(error)) from None


def concurrency_field(description: str, default: int = 4) -> Any:
    """The ``concurrency`` setting every fanning-out context has (what runs at once differs)."""
    return field(default=default, metadata={"description": description, "min": 1, "max": MAX_CONCURRENCY,
                                            "recorded": False})


# ---------------------------------------------------------------------------------------
# Reading the declarations.

def user_settings(context_type: type, exclude: Iterable[str] = ()) -> list[dataclasses.Field]:
    """The fields of a context a user sets (API argument, CLI option), in declaration order."""
    left_out = set(exclude)
    fields = [item for item in dataclasses.fields(context_type)
              if not item.metadata.get("internal") and item.name not in left_out]
    own = context_type.__dict__.get("__annotations__", {})
    return sorted(fields, key=lambda item: item.name not in own)  # the job's own first, then the shared ones


def default_of(item: dataclasses.Field) -> Any:
    return item.default_factory() if item.default is dataclasses.MISSING else item.default  # type: ignore[misc]


def flags_of(item: dataclasses.Field) -> tuple[str, ...]:
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
    return {item.name: _json_ready(getattr(context, item.name)) for item in user_settings(type(context))
            if item.metadata.get("recorded", True)}


def _json_ready(value: Any) -> Any:
    return [_json_ready(part) for part in value] if isinstance(value, tuple | list) else value


# ---------------------------------------------------------------------------------------
# The API's arguments.

# Settings renamed so the API keyword and the command-line option say one name (issue 31): the old
# keyword still works, with a DeprecationWarning, and a run recorded under it resumes.
RENAMED_SETTINGS = {"switch_probability": "switch_rate", "requests_per_second": "rate_limit", "rerank_model": "rerank"}


def current_names(settings: dict[str, Any]) -> dict[str, Any]:
    """``settings`` (API keywords, or a run record's settings) with each renamed one under its new name."""
    return {RENAMED_SETTINGS.get(name, name): value for name, value in settings.items()}


def takes_settings(context_type: type) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A job function whose keyword arguments include every user setting of ``context_type``
    (same names, same defaults): the function declares its own arguments (inputs, ``run_id``...)
    and a keyword-only ``settings`` parameter, which receives the context built from the
    settings given."""
    exposed = user_settings(context_type)
    hints = type_hints(context_type)

    def decorate(job: Callable[..., Any]) -> Callable[..., Any]:
        own = [parameter for parameter in inspect.signature(job).parameters.values() if parameter.name != "settings"]
        derived = [inspect.Parameter(item.name, inspect.Parameter.KEYWORD_ONLY, default=default_of(item),
                                     annotation=hints[item.name]) for item in exposed]
        names = {item.name for item in exposed}

        @functools.wraps(job)
        def call(*args: Any, **kwargs: Any) -> Any:
            for old in kwargs.keys() & RENAMED_SETTINGS.keys():
                warnings.warn(f"{job.__name__}({old}=...) is deprecated: use {RENAMED_SETTINGS[old]}=",
                              DeprecationWarning, stacklevel=2)
            kwargs = current_names(kwargs)
            values = {name: kwargs.pop(name) for name in list(kwargs) if name in names}
            return job(*args, settings=context_type(**values), **kwargs)

        call.__signature__ = inspect.Signature([*own, *derived],  # type: ignore[attr-defined]
                                               return_annotation=inspect.signature(job).return_annotation)
        call.__settings_context__ = context_type  # type: ignore[attr-defined]
        return call

    return decorate


def call_arguments(own: dict[str, Any], context: Any) -> dict[str, Any]:
    """A job's API arguments, as a caller would give them again: its own (``locals()`` on entry,
    ``settings`` left out) and each user setting of its context."""
    own = {name: value for name, value in own.items() if name != "settings"}
    return {**own, **{item.name: getattr(context, item.name) for item in user_settings(type(context))}}
