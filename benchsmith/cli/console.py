"""The CLI's one home for printing and progress: the consoles, the shared options of the commands
that run no job, progress bars fed by the graphs' stream events (graphs/runtime/progress.py), running a job
under them, and printing usage, cost estimates and errors."""

from __future__ import annotations

import inspect
import shlex
import signal
import sys
from collections.abc import Callable, Mapping
from typing import Any, NoReturn, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table as RichTable

from benchsmith.agents.seam.redaction import redact
from benchsmith.cli.settings import option_of
from benchsmith.graphs.runtime.settings import StoreOptions
from benchsmith.graphs.runtime.stopping import clear_stop, request_stop
from benchsmith.printable import printable
from benchsmith.stores.errors import InputError
from benchsmith.tools.offline import offline_environment  # noqa: F401 (the commands call it from here)

console = Console()
errors = Console(stderr=True)


class Table(RichTable):
    """Every table the commands print: its cells wrap and a word wider than its column folds onto
    the next line, so piped output at 80 columns keeps every character (rich's default cut
    configuration names and variable names with "…")."""

    def add_column(self, *args: Any, **options: Any) -> None:
        super().add_column(*args, **{**options, "no_wrap": False, "overflow": "fold"})


def fold_long_words_in_help() -> None:
    """``--help`` wraps and never cuts: the option help Typer builds from rich Text items (a
    description, an environment variable, a default) folds a word wider than its column instead
    of cutting it with "…" (``[env var: BENCHSMITH_EMBEDDINGS…``)."""
    from typer import rich_utils

    if getattr(rich_utils._get_parameter_help, "folds", False):
        return
    described = rich_utils._get_parameter_help

    def folded(*args: Any, **kwargs: Any) -> Any:
        columns = described(*args, **kwargs)
        for item in columns.renderables:
            if hasattr(item, "overflow"):
                item.overflow = "fold"
        return columns

    folded.folds = True  # type: ignore[attr-defined]
    rich_utils._get_parameter_help = folded
    # The option names and types are Text made by these highlighters: fold them too (--underspecified-ra…).
    for name in ("highlighter", "negative_highlighter", "types_highlighter"):
        setattr(rich_utils, name, _Folding(getattr(rich_utils, name)))


class _Folding:
    """A rich highlighter whose Text folds a word wider than its column."""

    def __init__(self, highlighter: Any):
        self.highlighter = highlighter

    def __call__(self, text: Any) -> Any:
        highlighted = self.highlighter(text)
        highlighted.overflow = "fold"
        return highlighted


Result = TypeVar("Result")

# The shared options of the commands that run no job (cluster, runs, studio, demo...), derived from
# their one declaration (graphs/runtime/settings.py); a job's command gets them from its context.
WorkspaceOption = option_of(StoreOptions, "workspace")
ChromaHostOption = option_of(StoreOptions, "chroma_host")
DatabaseOption = option_of(StoreOptions, "database")


def reflowed_help(docstring: str | None) -> str | None:
    """A command's docstring as ``--help`` text: the lines of each prose paragraph joined, so the
    terminal wraps them (Typer keeps the source's line breaks, which break mid-sentence at 80
    columns); paragraphs of list items or indented lines keep their breaks."""
    if not docstring:
        return docstring
    paragraphs = inspect.cleandoc(docstring).split("\n\n")
    # a list item opens with "- " or "* "; a line opening with an option ("--per-turn times, ...") is prose
    return "\n\n".join(
        paragraph
        if any(line.startswith((" ", "- ", "* ", "|")) for line in paragraph.splitlines())
        else " ".join(paragraph.split("\n"))
        for paragraph in paragraphs
    )


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``1 chunk``, ``2 chunks``: a count with its noun in the number it takes."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


def shown(value: Any) -> str:
    """User text (a path, query, id, model reply, message naming them) for a console f-string
    with markup: its brackets are printed as written, never read as markup (``[/x]`` in a path
    would raise MarkupError, ``[null]`` in a reply would vanish), and its control characters as
    escapes (benchsmith/printable.py: an ESC sequence in a file name would act on the terminal,
    a newline forge a line). Every print of user text goes through it."""
    return escape(printable(str(value)))


def fail(message: str) -> NoReturn:
    errors.print(f"[red]error:[/] {shown(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(2)


def guarded(action: Callable[[], Result]) -> Result:
    """Bad input ends with a one-line message and exit status 2, never a traceback."""
    try:
        return action()
    except InputError as error:
        fail(str(error))


# ---------------------------------------------------------------------------------------
# Progress.


class ProgressBars:
    """One bar per stage, created by its first event (graphs/runtime/progress.py); a node's end
    completes the bar of the same name."""

    def __init__(self, progress: Progress):
        self.progress = progress
        self.tasks: dict[str, TaskID] = {}

    def __call__(self, event: dict[str, Any]) -> None:
        if "node" in event:
            if (task := self.tasks.get(event["node"])) is not None:
                total = self.progress.tasks[task].total or self.progress.tasks[task].completed or 1
                self.progress.update(task, total=total, completed=total)
            return
        if "warning" in event:
            self.progress.console.print(
                f"[yellow]warning:[/] {shown(event['warning'])}", highlight=False, soft_wrap=True
            )
            return
        stage = event.get("stage")
        if stage is None:
            return
        if stage not in self.tasks:
            self.tasks[stage] = self.progress.add_task(stage, total=None)
        task = self.tasks[stage]
        if event.get("reused"):
            self.progress.update(task, description=f"{stage} (reused)", total=1, completed=1)
        elif "advance" in event:
            self.progress.advance(task, event["advance"])
        else:
            self.progress.update(task, completed=event["done"], total=event.get("total"))


def progress_bars() -> Progress:
    return Progress(
        TextColumn("{task.description:<12}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )


def _terminate_as_exit(signum: int, _frame: Any) -> None:
    request_stop()  # the running node ends at its next progress report instead of running to its end
    raise SystemExit(f"terminated by signal {signal.Signals(signum).name}")


def _interrupt(_signum: int, _frame: Any) -> None:
    request_stop()
    raise KeyboardInterrupt


def resume_command(run_id: str) -> str:
    """The command line that resumes this run: the one typed, with its run id."""
    arguments = sys.argv[1:]
    if "--run-id" not in arguments:
        arguments = [*arguments, "--run-id", run_id]
    # A password typed in a --database URL is masked: the command is kept in run records.
    return redact("benchsmith " + " ".join(shlex.quote(argument) for argument in arguments))


def run_reported(job: Callable[..., Result], *, run_id: str, **arguments: Any) -> Result:
    """Run a job under progress bars; say whether it resumed or was already finished, and end a
    crashed run with its resume command instead of a traceback."""
    clear_stop()
    signal.signal(signal.SIGTERM, _terminate_as_exit)  # a terminated run is recorded as crashed
    signal.signal(signal.SIGINT, _interrupt)
    try:
        with progress_bars() as bars:
            result = job(run_id=run_id, on_event=ProgressBars(bars), resume=resume_command(run_id), **arguments)
    except (InputError, KeyboardInterrupt):
        raise
    except Exception as error:
        errors.print(
            f"[red]run {shown(run_id)} failed:[/] {shown(redact(f'{type(error).__name__}: {error}'))}",
            soft_wrap=True,
            highlight=False,
        )
        errors.print(
            f"Everything finished so far is kept. Resume with: {shown(resume_command(run_id))}",
            soft_wrap=True,
            highlight=False,
        )
        raise typer.Exit(1) from None
    if result.already_finished:  # type: ignore[attr-defined]
        console.print(f"run [cyan]{shown(run_id)}[/] already finished; nothing redone. Its results:")
    elif result.resumed:  # type: ignore[attr-defined]
        console.print(f"run [cyan]{shown(run_id)}[/] resumed from its last checkpoint.")
    return result


# ---------------------------------------------------------------------------------------
# Printing.


def print_usage(usage: Any) -> None:
    """Model calls, tokens and cost of a run (every job ends with it)."""
    offline = f"{usage.offline_calls:,} answered by the offline baseline" if usage.offline_calls else ""
    model_calls = usage.calls - usage.offline_calls
    if not model_calls:
        console.print(f"model calls: none{f' ({offline})' if offline else ''}", highlight=False)
        return
    console.print(
        f"model calls: {model_calls:,} ({usage.cached_calls:,} from the cache, {usage.retries:,} retries), "
        f"tokens in/out: {usage.input_tokens:,}/{usage.output_tokens:,}, cost: ${usage.cost_usd:.4f}"
        + (f"; {offline}" if offline else ""),
        highlight=False,
    )


def print_estimate(estimate: Any) -> None:
    """A dry run's estimate; nothing was called."""
    unpriced = (
        f" ({', '.join(estimate.unpriced_models)} has no known price: set BENCHSMITH_PRICES)"
        if estimate.unpriced_models
        else ""
    )
    console.print(
        f"dry run: {shown(estimate.summary)} → {estimate.calls:,} model calls, ~{estimate.input_tokens:,} "
        f"input and ~{estimate.output_tokens:,} output tokens, ~${estimate.cost_usd:.4f}{shown(unpriced)}. "
        "Nothing was called.",
        highlight=False,
    )
    for note in estimate.notes:
        console.print(f"  {shown(note)}", highlight=False)


def class_counts(counts: Mapping[str, int], empty: str = "none") -> str:
    """Counts per rubric class as a summary writes them ("unaskable 78, reply mismatch 2"), ``empty`` when none."""
    return ", ".join(f"{klass.replace('_', ' ')} {count}" for klass, count in counts.items() if count) or empty


def print_warnings(warnings: list[str]) -> None:
    for warning in warnings:
        console.print(f"warning: {shown(warning)}", style="yellow", highlight=False)


def report_paths(report: Mapping[str, Any], with_results: bool = True) -> dict[str, Any]:
    """A job's report as the summary lists it: the HTML page, its markdown and (``with_results``) results.json."""
    paths = {"report": report["html"], "markdown": report["markdown"]}
    return {**paths, "results": report["results"]} if with_results else paths


def print_paths(paths: dict[str, Any]) -> None:
    width = max(len(label) for label in paths) + 2
    for label, path in paths.items():
        console.print(f"{label + ':':<{width}}{shown(path)}", highlight=False)


MEASURE_COLUMN_WIDTH = 11  # a measure name such as "nDCG@10" or "Judged@10" and its score, with padding


def print_measure_table(
    aggregate: dict[str, dict[str, float]], measures: list[str], title: str, highlight: str | None = None
) -> None:
    """Configurations × measures, the best of each column in bold; every measure is shown, in as
    many blocks of columns as the terminal's width needs (the primary measure in each block)."""
    name_width = max(len(name) for name in aggregate) + 4
    per_block = max(1, (console.width - name_width) // MEASURE_COLUMN_WIDTH)
    rest = [name for name in measures if name != highlight]
    lead = [highlight] if highlight in measures else []
    step = max(1, per_block - len(lead))
    blocks = [lead + rest[start : start + step] for start in range(0, len(rest), step)] or [lead]
    for number, columns in enumerate(blocks):
        suffix = f" ({number + 1}/{len(blocks)})" if len(blocks) > 1 else ""
        _print_score_table(aggregate, columns, title + suffix, highlight)


def print_group_table(by_group: dict[str, dict[str, dict[str, float]]], measure: str, title: str) -> None:
    """One measure per configuration and group (switch type, turn...), with each group's query count."""
    groups = list(dict.fromkeys(group for groups in by_group.values() for group in groups))
    if not groups:
        return
    table = Table(title=shown(title))
    table.add_column("configuration", no_wrap=True)
    for group in groups:
        counts = {values[group]["queries"] for values in by_group.values() if group in values}
        table.add_column(f"{shown(group)} ({max(counts)})", justify="right", no_wrap=True)
    best = {
        group: max((values[group][measure] for values in by_group.values() if group in values), default=None)
        for group in groups
    }
    for configuration, values in by_group.items():
        cells = []
        for group in groups:
            score = values.get(group, {}).get(measure)
            cells.append(
                ""
                if score is None
                else f"[bold]{score:.3f}[/]"
                if score == best[group] and len(by_group) > 1
                else f"{score:.3f}"
            )
        table.add_row(shown(configuration), *cells)
    console.print(table)


def _print_score_table(
    aggregate: dict[str, dict[str, float]], columns: list[str], title: str, highlight: str | None
) -> None:
    table = Table(title=shown(title))
    table.add_column("configuration", no_wrap=True)
    for name in columns:
        table.add_column(f"[u]{shown(name)}[/]" if name == highlight else shown(name), justify="right", no_wrap=True)
    best = {name: max(scores[name] for scores in aggregate.values()) for name in columns}
    for configuration, scores in aggregate.items():
        cells = [
            f"[bold]{scores[m]:.3f}[/]" if scores[m] == best[m] and len(aggregate) > 1 else f"{scores[m]:.3f}"
            for m in columns
        ]
        table.add_row(shown(configuration), *cells)
    console.print(table)
