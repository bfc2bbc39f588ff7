"""``benchsmith validate``: does a benchmark rank retrievers as your own labelled questions do?"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from benchsmith.cli.console import Table, console, print_paths, print_usage, report_paths, shown
from benchsmith.cli.deferred import deferred
from benchsmith.cli.job_command import run_job_command
from benchsmith.cli.settings import HISTORY_MODES, RETRIEVER_SPECS, RunOptions, repeated_option, settings_options
from benchsmith.graphs.contexts.validate import ValidationContext
from benchsmith.jobs.defaults import VALIDATE_RETRIEVERS

if TYPE_CHECKING:
    from benchsmith.evals.measures.separability import Separation
    from benchsmith.jobs.validate import ValidationResult
    from benchsmith.tools.corpus.held_out import HeldOutLabels

# The jobs load when the command runs (benchsmith/cli/deferred.py): --help and start-up stay free of models,
# Chroma, torch and scipy. Result types are for annotations only.
run_validation = deferred("benchsmith.jobs.validate", "validate")
estimate_validation = deferred("benchsmith.jobs.validate", "estimate_validation")

LISTED = 10  # ids printed before "more in validity.json"
VERDICT_STYLES = {"agrees": "green", "weak agreement": "yellow", "disagrees": "red", "undetermined": "yellow"}


@settings_options(ValidationContext)
def validate(
    synthetic: Annotated[
        str,
        typer.Argument(
            help="The benchmark to check: a synthesis run id or directory, or a BEIR directory (anything `benchsmith "
            "evaluate` accepts).",
            show_default=False,
        ),
    ],
    human: Annotated[
        Path,
        typer.Option(
            "--human",
            help="Your labelled questions over the same corpus: a BEIR directory (corpus.jsonl with the same "
            'document ids, queries.jsonl, qrels/<split>.tsv), or a JSONL file of {"id", "question", '
            '"gold": [{"chunk_id", "document", "evidence"}]} whose chunk ids are ids of '
            "SYNTHETIC's corpus or of the collection it was synthesized from (like "
            "data/stdlib-validity.jsonl).",
            show_default=False,
        ),
    ],
    retriever: Annotated[
        list[str] | None,
        repeated_option(
            "--retriever", f"{RETRIEVER_SPECS}. Repeat; rank at least 3 configurations.", ", ".join(VALIDATE_RETRIEVERS)
        ),
    ] = None,
    history: Annotated[
        list[str] | None,
        repeated_option(
            "--history",
            f"History modes on SYNTHETIC: {HISTORY_MODES}. Repeat. Your questions, standalone, are asked as they are.",
            "oracle when every query has a rewrite, else full",
        ),
    ] = None,
    run: Annotated[
        list[Path] | None,
        typer.Option(
            "--run",
            help="A TREC run file of your own system ranking the queries of both sets (named by its file "
            "name). Repeat.",
        ),
    ] = None,
    judge: Annotated[
        list[str] | None,
        typer.Option(
            "--judge",
            help="Also measure a relevance judge against your labels: 'baseline' (offline, lexical), "
            "openai:<model>, or qrels:FILE. Each labels your gold (question, chunk) pairs and as many "
            "sampled non-gold ones; reports Cohen's kappa and Krippendorff's alpha. Repeat.",
        ),
    ] = None,
    *,
    settings: dict[str, Any],
    run_options: RunOptions,
) -> None:
    """Check whether a benchmark ranks retriever configurations as your own labelled questions do.

    Every configuration is evaluated on both SYNTHETIC and --human (the `evaluate` job, one
    resumable run each) and ranked by --measure on each. Kendall's tau-b compares the two
    rankings: 1 the same order, 0 unrelated, -1 reversed; it comes with a 95% bootstrap interval
    over the queries of both sets and scipy's p-value. With few configurations one swap moves tau
    a lot: read the interval. The verdict says in words whether the benchmark agrees with your
    questions, and which configuration each ranks first. For each adjacent pair of your ranking
    (and the benchmark's top two), a paired bootstrap interval of the difference on your questions
    says whether they separate the two: pairs whose interval contains 0 are listed as not
    separated.

    HUMAN must be over the same corpus as SYNTHETIC, or over the collection SYNTHETIC was
    synthesized from: the chunks SYNTHETIC holds out (its unanswerable and partial turns' chunks
    and their near-duplicates) are left out of both sets, their label rows dropped and questions
    left without gold left out, all named in the output and the report. Other ids SYNTHETIC's
    corpus lacks stop the command (exit 2) before anything runs. Writes validity.json,
    validity-report.md and validity-report.html into the run directory.
    """
    judges = judge or []
    arguments = {
        "human": human,
        "retrievers": retriever,
        "histories": history,
        "runs": list(run or []),
        "judges": judges,
        **settings,
    }
    run_job_command(
        "validate",
        run_options,
        run=run_validation,
        arguments={"synthetic": synthetic, **arguments},
        estimate=estimate_validation,
        summary=print_validation_summary,
        about=f" · {shown(synthetic)} against {shown(human)}"
        + (f" · judges {shown(', '.join(judges))}" if judges else ""),
    )


def print_validation_summary(result: ValidationResult) -> None:
    """The configurations' scores and ranks on both sets, τ, the judges, and the verdict."""
    table = Table(title=f"Validity · run {shown(result.run_id)} · {shown(result.measure)}")
    for column in ("on your questions", "human", "rank", "on the synthetic benchmark", "synthetic", "rank"):
        table.add_column(column, justify="left" if column.startswith("on ") else "right", no_wrap=True)
    # Each configuration named as it ran on each set: your standalone questions run with another history mode.
    for row in sorted(result.configurations, key=lambda row: (row["human_rank"], row["name"])):
        table.add_row(
            shown(row["human_configuration"]),
            f"{row['human']:.3f}",
            str(row["human_rank"]),
            shown(row["name"]),
            f"{row['synthetic']:.3f}",
            str(row["synthetic_rank"]),
        )
    console.print(table)
    interval = result.interval
    tau = "undefined" if result.kendall_tau_b is None else f"{result.kendall_tau_b:+.3f}"
    bounds = (
        f", 95% interval [{interval['low']:+.3f}, {interval['high']:+.3f}]"
        if interval.get("low") is not None and interval.get("high") is not None
        else ""
    )
    p_value = "" if result.p_value is None else f", p = {result.p_value:.3g}"
    console.print(shown(f"Kendall's tau-b = {tau}{bounds}{p_value}"))
    print_separations(result.separations)
    print_held_out(result.held_out)
    for spec, values in result.judge_agreement.items():
        kappa, alpha = values["cohen_kappa"], values["krippendorff_alpha"]
        console.print(
            shown(
                f"judge {spec}: Cohen's kappa {'–' if kappa is None else f'{kappa:.3f}'}, "
                f"Krippendorff's alpha {'–' if alpha is None else f'{alpha:.3f}'} on {values['pairs']} pairs"
            )
        )
    style = VERDICT_STYLES.get(result.verdict.label, "")
    explanation = f"[{style}]: {shown(result.verdict.text)}[/]" if style else f": {shown(result.verdict.text)}"
    console.print(
        f"[bold]verdict: [/][{f'bold {style}'.strip()}]{shown(result.verdict.label)}[/]{explanation}", highlight=False
    )
    print_paths(report_paths(result.report))
    print_usage(result.usage)


def print_separations(separations: Sequence[Separation]) -> None:
    """The pairs of configurations the human questions do not separate."""
    apart = [pair for pair in separations if not pair.separated]
    if not separations:
        return
    if not apart:
        console.print(shown(f"your {separations[0].queries} questions separate every pair compared"))
        return
    console.print(
        shown(
            f"not separated by your {apart[0].queries} questions: "
            + "; ".join(
                f"{pair.first} vs {pair.second} ({pair.ranking}: difference {pair.difference or 0.0:+.3f}"
                + (
                    f", 95% interval [{pair.low:+.3f}, {pair.high:+.3f}])"
                    if pair.low is not None and pair.high is not None
                    else ", no interval)"
                )
                for pair in apart
            )
        )
    )


def print_held_out(held_out: HeldOutLabels) -> None:
    """The chunks the benchmark holds out that the labels name, the rows dropped, the questions left out."""
    if not held_out:
        return
    rows = [f"{question_id} {chunk_id}" for question_id, chunk_id in held_out.rows]
    console.print(
        shown(
            f"held out of the benchmark's corpus ({held_out.benchmark_chunks} chunks), so left out of both sets: "
            f"{len(held_out.chunks)} chunk(s) your labels name ({_listed(list(held_out.chunks))}); "
            f"{len(rows)} label row(s) dropped (question chunk: {_listed(rows)}); "
            f"{len(held_out.questions_left_out)} question(s) left out, all their gold held out"
            + (f" ({_listed(list(held_out.questions_left_out))})" if held_out.questions_left_out else "")
            + (f"; {held_out.documents} of them left out of your corpus" if held_out.documents else "")
        )
    )


def _listed(items: list[str]) -> str:
    """The first few items, and how many more (validity.json has them all)."""
    listed = ", ".join(items[:LISTED])
    return listed + (f", … {len(items) - LISTED} more in validity.json" if len(items) > LISTED else "")
