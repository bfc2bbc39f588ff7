"""The command line: ``benchsmith ingest | cluster | synthesize | evaluate | audit | paraphrase | robustness |
hardneg | nuggets | select | validate | demo | runs | work | export | studio``.

One module per command, plus console.py, the one home for progress and printing. Every
command takes ``--workspace`` (default ``./.benchsmith`` or ``$BENCHSMITH_WORKSPACE``); every
long command takes ``--run-id``: the same command with the same run id resumes an
unfinished run and reports a finished one.
"""

from __future__ import annotations

import importlib

import typer

from benchsmith.cli.console import fold_long_words_in_help, reflowed_help
from benchsmith.jobs.registry import command_targets

fold_long_words_in_help()
app = typer.Typer(
    help="Build, audit and use retrieval benchmarks for RAG systems.\n\n"
    "Start with `benchsmith demo` (offline, no API key), then `benchsmith ingest DIR`.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
# The commands of the job table (benchsmith/jobs/registry.py), in its order: a function is a command,
# a Typer app a group of subcommands named after its job.
for module, attribute in command_targets():
    command = getattr(importlib.import_module(module), attribute)
    if isinstance(command, typer.Typer):
        for subcommand in command.registered_commands:
            subcommand.help = subcommand.help or reflowed_help(subcommand.callback.__doc__)
        app.add_typer(command, name=module.rpartition(".")[2])
    else:
        app.command(help=reflowed_help(command.__doc__))(command)
