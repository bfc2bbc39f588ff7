"""The jobs, one line each: the one table that the CLI (its commands), the Python API (the names
``benchsmith`` exports), `benchsmith studio` and langgraph.json (the graphs), and `benchsmith runs`
(what a run's items are) read.

Adding a job is its own files (its context, graph, job function and command, docs/design.md's
"How to add a job") plus one line here. This module imports nothing: ``import benchsmith`` and
``benchsmith --help`` read it without loading a job.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Job:
    """A job: ``benchsmith/jobs/<name>.py`` holds its API names, ``benchsmith/cli/<name>.py`` its
    commands (a plain function each, or a Typer app of subcommands), ``benchsmith/graphs/`` its graphs."""

    name: str
    api: tuple[str, ...] = ()  # what ``benchsmith`` exports from benchsmith/jobs/<name>.py
    commands: tuple[str, ...] = ()  # attributes of benchsmith/cli/<module>.py, as "attribute" or "module:attribute"
    graphs: dict[str, str] = field(default_factory=dict)  # Studio's name → "module:attribute" under benchsmith.graphs
    items: dict[str, tuple[str, str]] = field(
        default_factory=dict
    )  # run job → (result field, unit) in `benchsmith runs`


# In the order `benchsmith --help` lists the commands.
JOBS = (
    Job(
        "ingest",
        api=("IngestPreview", "IngestResult", "ingest", "preview_ingest"),
        commands=("ingest",),
        graphs={"ingest": "ingest:graph"},
        items={"ingest": ("indexed", "chunks")},
    ),
    Job(
        "synthesize",
        api=("ClusterResult", "SynthesisResult", "cluster", "estimate_synthesis", "synthesize"),
        commands=("cluster:cluster", "synthesize"),
        graphs={"synthesize": "synthesis.run:graph", "conversation": "synthesis.conversation:conversation_graph"},
        items={"synthesize": ("conversations_written", "conversations")},
    ),
    Job(
        "evaluate",
        api=("EvaluationResult", "estimate_evaluation", "evaluate", "measure_runs"),
        commands=("evaluate",),
        graphs={"evaluate": "evaluate.graph:graph"},
        items={"evaluate": ("aggregate", "configurations")},
    ),
    Job(
        "audit",
        api=("AuditResult", "Verdict", "audit", "estimate_audit"),
        commands=("audit",),
        graphs={"audit": "audit.graph:graph"},
        items={"audit": ("instances", "instances")},
    ),
    Job(
        "paraphrase",
        api=("ParaphraseResult", "estimate_paraphrase", "paraphrase"),
        commands=("paraphrase",),
        graphs={"paraphrase": "paraphrase.graph:graph"},
        items={"paraphrase": ("paraphrases", "paraphrases")},
    ),
    Job(
        "robustness",
        api=("RobustnessResult", "estimate_robustness", "robustness"),
        commands=("robustness",),
        graphs={"robustness": "robustness.graph:graph"},
        items={"robustness": ("sets", "test sets")},
    ),
    Job(
        "nuggets",
        api=("NuggetsResult", "estimate_nuggets", "nuggets"),
        commands=("nuggets",),
        graphs={"nuggets": "nuggets.graph:graph"},
        items={"nuggets": ("kept", "questions")},
    ),
    Job(
        "select",
        api=("SelectionResult", "estimate_selection", "select"),
        commands=("select",),
        graphs={"select": "select.graph:graph"},
        items={"select": ("ranking", "configurations")},
    ),
    Job(
        "validate",
        api=("ValidationResult", "estimate_validation", "validate"),
        commands=("validate",),
        graphs={"validate": "validate.graph:graph"},
        items={"validate": ("configurations", "configurations")},
    ),
    Job("label", api=("LabelResult", "label", "open_label_session"), commands=("label",)),
    Job("review", api=("ReviewResult", "review"), commands=("review",)),
    Job(
        "replay",
        api=("ReplayResult", "estimate_replay", "replay"),
        commands=("replay",),
        graphs={"replay": "replay:graph"},
        items={"replay": ("conversations_replayed", "conversations")},
    ),
    Job("demo", commands=("demo",)),
    Job("runs", api=("RunInfo", "runs"), commands=("runs",)),
    Job("publish", api=("PublishResult", "publish"), commands=("publish",)),
    Job("studio", commands=("studio",)),
    Job(
        "hardneg",
        api=(
            "HardnegBuildResult",
            "HardnegScoreResult",
            "build_hardneg",
            "estimate_hardneg",
            "rescore_tables",
            "score_hardneg",
        ),
        commands=("app",),
        graphs={"hardneg": "hardneg.build:graph", "hardneg-score": "hardneg.score:graph"},
        items={"hardneg": ("rows", "rows"), "hardneg-score": ("scorers", "scorers")},
    ),
)


def api_modules() -> dict[str, str]:
    """``{public name: module}`` of every job's API names."""
    return {name: f"benchsmith.jobs.{job.name}" for job in JOBS for name in job.api}


def studio_graphs() -> dict[str, str]:
    """Every job's graphs as langgraph.json names them: ``{name: "benchsmith.graphs.module:attribute"}``."""
    return {name: f"benchsmith.graphs.{target}" for job in JOBS for name, target in job.graphs.items()}


def command_targets() -> list[tuple[str, str]]:
    """``(module, attribute)`` of each command, in order, modules under ``benchsmith.cli``."""
    return [
        (f"benchsmith.cli.{command.partition(':')[0]}", command.partition(":")[2])
        if ":" in command
        else (f"benchsmith.cli.{job.name}", command)
        for job in JOBS
        for command in job.commands
    ]


def items_of_job() -> dict[str, tuple[str, str]]:
    """``{run job: (result field, unit)}``: what `benchsmith runs` counts for a finished run."""
    return {run_job: items for job in JOBS for run_job, items in job.items.items()}
