"""``benchsmith audit``: grade a benchmark with a judge ensemble and find its missing gold."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer
from rich.table import Table

from benchsmith.evals.defaults import DEFAULT_MIN_VOTES
from benchsmith.evals.question_form import DEFAULT_MANY_DOCUMENTS
from benchsmith.graphs.cli.console import (ChromaHostOption, DatabaseOption, DryRunOption, EmbedderOption, LeaseOption,
                                           MaxAttemptsOption, RateLimitOption, RunIdOption, StructuredOutputOption,
                                           TimeoutOption, WorkspaceOption, console, guarded, model_options,
                                           offline_environment, print_estimate, print_paths, print_usage, run_reported,
                                           shown)
from benchsmith.graphs.cli.deferred import deferred
from benchsmith.graphs.jobs.defaults import AUDIT_NEGATIVES as DEFAULT_NEGATIVES
from benchsmith.stores.runs import new_run_id
from benchsmith.stores.work_items import DEFAULT_LEASE_S
from benchsmith.tools.defaults import DEFAULT_EMBEDDER

if TYPE_CHECKING:
    from benchsmith.graphs.jobs.audit import AuditResult

# The jobs load when the command runs (graphs/cli/deferred.py): --help and start-up stay free of models,
# Chroma, torch and scipy. Result types are for annotations only.
run_audit = deferred("benchsmith.graphs.jobs.audit", "audit")
estimate_audit = deferred("benchsmith.graphs.jobs.audit", "estimate_audit")


def audit(
    benchmark: Annotated[str, typer.Argument(
        help="A BEIR directory, a synthesis run directory or run id, or a turn JSONL file (with --corpus).",
        show_default=False)],
    judge: Annotated[Optional[list[str]], typer.Option(
        "--judge", help="A judge model: 'baseline' (offline, lexical) or openai:<model>. Repeat for an ensemble.",
        show_default="baseline")] = None,
    negatives: Annotated[int, typer.Option(min=1, help="Hard negatives shown with the gold document.")]
    = DEFAULT_NEGATIVES,
    sample: Annotated[Optional[int], typer.Option(min=1, help="Audit a random sample of this many instances.")] = None,
    seed: Annotated[int, typer.Option(help="Seed for the sample and the pool orders.")] = 0,
    position_check: Annotated[bool, typer.Option(
        "--position-check", help="Show every pool again, rotated, to measure position bias.")] = False,
    min_votes: Annotated[int, typer.Option(
        min=1, help="Judges that must pick an unlabelled document (and be a majority) to confirm it as missing "
                    "gold; with fewer judges, candidates are only suspected.")] = DEFAULT_MIN_VOTES,
    corpus: Annotated[Optional[Path], typer.Option(help="The BEIR corpus.jsonl of a turn JSONL benchmark.")] = None,
    split: Annotated[str, typer.Option(help="BEIR qrels split (qrels/<split>.tsv).")] = "test",
    many_documents: Annotated[int, typer.Option(
        min=1, help="A question quoting a span that at least this many documents contain is ill-formed (it could "
                    "be about any of them) and counts as noise.")] = DEFAULT_MANY_DOCUMENTS,
    embedder: EmbedderOption = DEFAULT_EMBEDDER,
    concurrency: Annotated[int, typer.Option(min=1, help="Instances judged at once.")] = 4,
    rate_limit: RateLimitOption = None,
    timeout: TimeoutOption = 60.0,
    max_attempts: MaxAttemptsOption = 6,
    structured_output: StructuredOutputOption = "auto",
    chroma_host: ChromaHostOption = None,
    database: DatabaseOption = None,
    lease: LeaseOption = DEFAULT_LEASE_S,
    run_id: RunIdOption = None,
    dry_run: DryRunOption = False,
    workspace: WorkspaceOption = None,
) -> None:
    """Grade a benchmark with a judge ensemble and find the gold documents it misses.

    Each judge rates query-evidence alignment, picks the best document of a pool of the gold
    and hard negatives (discriminability), and rates answer faithfulness and quality. Measures,
    without a model, the shortcuts a retriever can exploit (questions copying their gold, answers
    leaked in questions, history that does not help, ill-formed questions); a flagged benchmark is
    never reliable. Writes audit-report.md, audit-report.html, audit.json, shortcuts.json and
    extra_qrels.tsv (for `benchsmith evaluate --extra-qrels`) into the run directory.
    """
    offline_environment()
    judges = judge or ["baseline"]
    if dry_run:
        print_estimate(guarded(lambda: estimate_audit(benchmark, judges=judges, negatives=negatives, sample=sample,
                                                      position_check=position_check, corpus=corpus, split=split,
                                                      workspace=workspace)))
        return
    run_id = run_id or new_run_id("audit")
    console.print(f"[bold]audit[/] run [cyan]{shown(run_id)}[/] · {shown(benchmark)} · judges "
                  f"{shown(', '.join(judges))} · {negatives} negatives per pool", highlight=False)
    result = guarded(lambda: run_reported(
        run_audit, run_id=run_id, benchmark=benchmark, judges=judges, negatives=negatives, sample=sample, seed=seed,
        position_check=position_check, min_votes=min_votes, corpus=corpus, split=split, embedder=embedder,
        concurrency=concurrency, many_documents=many_documents, workspace=workspace, chroma_host=chroma_host,
        database=database, lease_s=lease,
        **model_options(rate_limit, timeout, max_attempts, structured_output)))
    print_audit_summary(result)


def print_audit_summary(result: AuditResult) -> None:
    style = {"reliable": "green", "unreliable": "red"}.get(result.verdict.label, "yellow")
    console.print(f"[bold {style}]verdict: {result.verdict.label}[/] · {result.instances} instances audited")
    console.print(result.verdict.explanation, highlight=False, markup=False)
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
        table.add_row("lexical overlap with gold (mean / median / p90)",
                      f"{overlap['mean']:.2f} / {overlap['median']:.2f} / {overlap['p90']:.2f}")
    table.add_row("shortcut flags", ", ".join(result.shortcut_flags) or "none")
    console.print(table)
    print_paths({"report": result.report["html"], "markdown": result.report["markdown"],
                 "results": result.report["results"], "extra qrels": result.extra_qrels})
    print_usage(result.usage)
