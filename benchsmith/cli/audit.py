"""``benchsmith audit``: grade a benchmark with a judge ensemble and find its missing gold."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from benchsmith.cli.console import Table, class_counts, console, print_paths, print_usage, report_paths, shown
from benchsmith.cli.deferred import deferred
from benchsmith.cli.job_command import run_job_command
from benchsmith.cli.judges import judge_ensemble_option, judges_given
from benchsmith.cli.settings import RunOptions, settings_options
from benchsmith.graphs.contexts.audit import AuditContext

if TYPE_CHECKING:
    from benchsmith.jobs.audit import AuditResult

# The jobs load when the command runs (benchsmith/cli/deferred.py): --help and start-up stay free of models,
# Chroma, torch and scipy. Result types are for annotations only.
run_audit = deferred("benchsmith.jobs.audit", "audit")
estimate_audit = deferred("benchsmith.jobs.audit", "estimate_audit")


@settings_options(AuditContext)
def audit(
    benchmark: Annotated[
        str,
        typer.Argument(
            help="A BEIR directory, a synthesis run directory or run id, or a turn JSONL file (with --corpus).",
            show_default=False,
        ),
    ],
    judge: Annotated[
        list[str] | None,
        judge_ensemble_option("A judge model: 'baseline' (offline, lexical) or openai:<model>."),
    ] = None,
    *,
    settings: dict[str, Any],
    run_options: RunOptions,
) -> None:
    """Grade a benchmark with a judge ensemble and find the gold documents it misses.

    Each judge rates query-evidence alignment, picks the best document of a pool of the gold
    and hard negatives (discriminability), and rates answer faithfulness and quality. Measures,
    without a model, the shortcuts a retriever can exploit (questions copying their gold, answers
    leaked in questions, history that does not help, ill-formed questions); a flagged benchmark is
    never reliable. Writes audit-report.md, audit-report.html, audit.json, shortcuts.json and
    extra_qrels.tsv (for `benchsmith evaluate --extra-qrels`) into the run directory.
    """
    judges = judges_given(judge)
    run_job_command(
        "audit",
        run_options,
        run=run_audit,
        arguments={"benchmark": benchmark, "judges": judges, **settings},
        estimate=estimate_audit,
        summary=print_audit_summary,
        about=f" · {shown(benchmark)} · judges {shown(', '.join(judges))} · {settings['negatives']} negatives per pool",
    )


def print_audit_summary(result: AuditResult) -> None:
    style = {"reliable": "green", "unreliable": "red"}.get(result.verdict.label, "yellow")
    console.print(f"[bold {style}]verdict: {result.verdict.label}[/] · {result.instances} instances audited")
    console.print(shown(result.verdict.explanation), highlight=False)
    table = Table(title=f"Audit · run {shown(result.run_id)}")
    table.add_column("dimension")
    table.add_column("mean", justify="right")
    for name, mean in result.means.items():
        table.add_row(name.replace("_", " "), f"{mean:.1%}" if name == "gold_pick_rate" else f"{mean:.2f} / 5")
    table.add_row("confirmed missing gold", str(result.confirmed_missing_gold))
    table.add_row("suspected missing gold", str(result.suspected_missing_gold))
    table.add_row("ill-formed questions (noise)", str(result.ill_formed_questions))
    overlap = result.lexical_overlap
    if overlap.get("mean") is not None:
        table.add_row(
            "lexical overlap with gold (mean / median / p90)",
            f"{overlap['mean']:.2f} / {overlap['median']:.2f} / {overlap['p90']:.2f}",
        )
    table.add_row("shortcut flags", ", ".join(result.shortcut_flags) or "none")
    if gate := result.quality_gate:
        classes = class_counts(gate["by_class"], empty="")
        table.add_row(
            "quality gate: turns flagged",
            f"{gate['flagged']} of {gate['turns']}" + (f" ({classes})" if classes else ""),
        )
    for label, agreement in result.label_agreement.items():
        table.add_row(f"turn label agreement: {label}", f"{agreement:.1%}")
    console.print(table)
    print_paths(
        {
            **report_paths(result.report),
            "extra qrels": result.extra_qrels,
        }
    )
    print_usage(result.usage)
