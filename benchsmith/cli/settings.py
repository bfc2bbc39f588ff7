"""A command's options, derived from the context of its graph (docs/design.md rule 11): one option per
user setting, named after the field (or its ``cli`` metadata), its help the field's description,
its default, bounds and environment variable the field's. The shared options (workspace,
database, model endpoint, limits) come with every context from its bases
(graphs/runtime/settings.py); the two that are the command line's own, ``--run-id`` and
``--dry-run``, are declared once here (:class:`RunOptions`).

    @settings_options(SynthesisContext)
    def synthesize(collection: Annotated[str, typer.Option(...)], *, settings: dict, run_options: RunOptions): ...

The command receives ``settings`` (the API's keyword arguments, by field name) and ``run_options``.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import types
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import typer

from benchsmith.graphs.runtime.settings import default_of, flags_of, type_hints, user_settings


@dataclass(kw_only=True)
class RunOptions:
    """What only the command line asks about a run (the API takes ``run_id`` as an argument of its own)."""

    run_id: str | None = field(
        default=None,
        metadata={"description": "Name this run; the same command with the same id resumes it after a crash."},
    )
    dry_run: bool = field(
        default=False,
        metadata={"description": "Print what would be done, the model calls, tokens and cost; do nothing."},
    )


def settings_options(
    context_type: type, *, exclude: Iterable[str] = ()
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Add an option per user setting of ``context_type`` (less ``exclude``) to a command, and
    ``--run-id``/``--dry-run`` when it has a ``run_options`` parameter. The derived options' parameter names
    are kept on the command (``__derived_options__``) so a test can tell them from hand-declared ones."""
    exposed = user_settings(context_type, exclude)

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        own = inspect.signature(command).parameters
        wants_run = "run_options" in own
        derived = [_parameter(item, type_hints(context_type)[item.name]) for item in exposed]
        renamed = {item.name: item for item in exposed if item.metadata.get("old_cli")}
        old_flags = [_old_flag_parameter(item, type_hints(context_type)[item.name]) for item in renamed.values()]
        run_parameters = (
            [_parameter(item, type_hints(RunOptions)[item.name]) for item in dataclasses.fields(RunOptions)]
            if wants_run
            else []
        )
        hints = typing.get_type_hints(command, include_extras=True)  # the module's annotations are postponed
        kept = [
            parameter.replace(kind=inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=hints[parameter.name])
            for parameter in own.values()
            if parameter.name not in ("settings", "run_options")
        ]
        clashes = {parameter.name for parameter in kept} & {parameter.name for parameter in derived + run_parameters}
        if clashes:
            raise TypeError(f"{command.__name__} declares by hand what its context declares: {sorted(clashes)}")

        @functools.wraps(command)
        def call(*args: Any, **given: Any) -> Any:
            # Typer passes every option by name; a Python caller (`benchsmith demo`) may leave some out.
            bound = call.__signature__.bind(*args, **given)  # type: ignore[attr-defined]
            bound.apply_defaults()
            given = dict(bound.arguments)
            for name, item in renamed.items():
                old_value = given.pop(_old_flag_name(name))
                if old_value is not None:
                    typer.echo(f"{item.metadata['old_cli']} is deprecated: use {flags_of(item)[0]}", err=True)
                    if given[name] == default_of(item):  # the new flag, given too, wins
                        given[name] = old_value
            settings = {item.name: _setting_value(item, given.pop(item.name)) for item in exposed}
            if wants_run:
                given["run_options"] = RunOptions(**{name: given.pop(name) for name in ("run_id", "dry_run")})
            return command(**given, settings=settings)

        # Typer reads inspect.signature: own parameters first (arguments), then the settings.
        call.__signature__ = inspect.Signature([*kept, *derived, *old_flags, *run_parameters])  # type: ignore[attr-defined]
        derived_options: dict[str, type] = {parameter.name: context_type for parameter in derived}
        derived_options.update({parameter.name: RunOptions for parameter in run_parameters})
        call.__derived_options__ = derived_options  # type: ignore[attr-defined]
        return call

    return decorate


def option_of(context_type: type, name: str) -> Any:
    """One setting's option as a parameter annotation, for a command that takes it without a job's
    context (``benchsmith runs``): ``workspace: option_of(StoreOptions, "workspace") = None``."""
    item = next(item for item in dataclasses.fields(context_type) if item.name == name)
    return _parameter(item, type_hints(context_type)[name]).annotation


def _parameter(item: dataclasses.Field[Any], hint: Any) -> inspect.Parameter:
    cli_type, default, show_default = _cli_type(hint, default_of(item))
    metadata = item.metadata
    option = typer.Option(
        *flags_of(item),
        help=metadata["description"],
        min=metadata.get("min"),
        max=metadata.get("max"),
        envvar=metadata.get("envvar"),
        show_envvar=bool(metadata.get("envvar")),
        show_default=metadata.get("show_default", show_default),
    )
    return inspect.Parameter(
        item.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=Annotated[cli_type, option]
    )


def _old_flag_name(name: str) -> str:
    return f"{name}__old_flag"


def _old_flag_parameter(item: dataclasses.Field[Any], hint: Any) -> inspect.Parameter:
    """A renamed setting's former flag: hidden from --help, empty unless given."""
    cli_type, _, _ = _cli_type(hint, default_of(item))
    option = typer.Option(
        item.metadata["old_cli"], hidden=True, min=item.metadata.get("min"), max=item.metadata.get("max")
    )
    return inspect.Parameter(
        _old_flag_name(item.name),
        inspect.Parameter.KEYWORD_ONLY,
        default=None,
        annotation=Annotated[cli_type | None, option],
    )


def _cli_type(hint: Any, default: Any) -> tuple[Any, Any, Any]:
    """The option's type, default and shown default for a field's type: a tuple is a repeatable
    option (none given: the field's default); a Literal is text, checked by the job with the same
    message as the API's."""
    optional = _is_optional(hint)
    inner = next(arg for arg in typing.get_args(hint) if arg is not type(None)) if optional else hint
    if typing.get_origin(inner) is tuple:
        shown = ", ".join(str(value) for value in default) if default else False
        item_type = typing.get_args(inner)[0]
        return list[item_type] | None, None, shown  # type: ignore[valid-type]  # a type known at run time only
    if typing.get_origin(inner) is Literal:
        inner = str
    return (inner | None if optional else inner), default, True


def _is_optional(hint: Any) -> bool:
    return typing.get_origin(hint) in (typing.Union, types.UnionType) and type(None) in typing.get_args(hint)


def _setting_value(item: dataclasses.Field[Any], value: Any) -> Any:
    if isinstance(value, list):
        return tuple(value) if value else default_of(item)
    if value is None and isinstance(default_of(item), tuple):
        return default_of(item)
    return value


# Options that are a graph's inputs rather than settings (what to compare, not how): their
# vocabularies are declared once here, each command saying what they mean to it.
RETRIEVER_SPECS = (
    "bm25, dense[:MODEL], hybrid:rrf(dense,bm25), hybrid:combsum(...), hybrid:wsum(dense=0.7,bm25=0.3), or your own: "
    'http://HOST/PATH (POST {"query", "history", "k"} -> {"results": [{"id", "score", optional "text"}]}), '
    "py:package.module:object (a LangChain retriever or a callable (query, history, k) -> [(id, score)])"
)
HISTORY_MODES = (
    "full, last:K, current, rewrite (a model's self-contained rewrite, see --llm), oracle (the "
    "benchmark's own rewrite) or raw (your own retriever gets the earlier turns and builds its own query)"
)


def repeated_option(flag: str, help: str, shown: str | None = None) -> Any:
    """A repeatable input option (``--retriever``, ``--history``): ``list[str]`` or None when not given."""
    return typer.Option(flag, help=help, show_default=shown if shown is not None else False)
