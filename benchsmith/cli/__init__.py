"""The command line: ``benchsmith ingest | cluster | synthesize | evaluate | audit | paraphrase | robustness |
hardneg | nuggets | select | validate | demo | runs | work | export | studio``.

One module per command, plus console.py, the one home for progress and printing. Every
command takes ``--workspace`` (default ``./.benchsmith`` or ``$BENCHSMITH_WORKSPACE``); every
long command takes ``--run-id``: the same command with the same run id resumes an
unfinished run and reports a finished one.
"""

from __future__ import annotations

import typer

from benchsmith.cli.audit import audit
from benchsmith.cli.cluster import cluster
from benchsmith.cli.console import fold_long_words_in_help, reflowed_help
from benchsmith.cli.demo import demo
from benchsmith.cli.evaluate import evaluate
from benchsmith.cli.hardneg import app as hardneg_app
from benchsmith.cli.ingest import ingest
from benchsmith.cli.paraphrase import paraphrase
from benchsmith.cli.publish import publish
from benchsmith.cli.robustness import robustness
from benchsmith.cli.nuggets import nuggets
from benchsmith.cli.runs import runs
from benchsmith.cli.select import select
from benchsmith.cli.studio import studio
from benchsmith.cli.synthesize import synthesize
from benchsmith.cli.validate import validate
from benchsmith.cli.work import export, work

fold_long_words_in_help()
app = typer.Typer(
    help="Build, audit and use retrieval benchmarks for RAG systems.\n\n"
    "Start with `benchsmith demo` (offline, no API key), then `benchsmith ingest DIR`.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
for command in (ingest, cluster, synthesize, evaluate, audit, paraphrase, robustness, nuggets, select, validate,
                demo, runs, work, export, publish, studio):
    app.command(help=reflowed_help(command.__doc__))(command)
for subcommand in hardneg_app.registered_commands:
    subcommand.help = subcommand.help or reflowed_help(subcommand.callback.__doc__)
app.add_typer(hardneg_app, name="hardneg")
