"""``benchsmith paraphrase``: conversational paraphrases of a benchmark's turns (ECAsT), their
diversity, and test sets R1..Rn."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from benchsmith.cli.console import Table, console, print_paths, print_usage, report_paths, shown
from benchsmith.cli.deferred import deferred
from benchsmith.cli.job_command import run_job_command
from benchsmith.cli.settings import RunOptions, settings_options
from benchsmith.graphs.contexts.paraphrase import ParaphraseContext

if TYPE_CHECKING:
    from benchsmith.jobs.paraphrase import ParaphraseResult

# The jobs load when the command runs (benchsmith/cli/deferred.py): --help and start-up stay free of models,
# Chroma, torch and scipy. Result types are for annotations only.
run_paraphrase = deferred("benchsmith.jobs.paraphrase", "paraphrase")
estimate_paraphrase = deferred("benchsmith.jobs.paraphrase", "estimate_paraphrase")


@settings_options(ParaphraseContext)
def paraphrase(
    benchmark: Annotated[
        list[str],
        typer.Argument(
            help="The benchmark: TREC CAsT topic files (several make one benchmark, e.g. 2019_evaluation_topics.json "
            "2019_evaluation_topics_resolved.tsv 2020_manual_evaluation_topics.json), a BEIR directory, a "
            "synthesis run directory or run id, or a turn JSONL file.",
            show_default=False,
        ),
    ],
    *,
    settings: dict[str, Any],
    run_options: RunOptions,
) -> None:
    """Paraphrase a conversational benchmark's turns and measure how diverse the variants are (ECAsT).

    Per turn: its self-contained form (the benchmark's rewrite, or a model's) is paraphrased
    --per-turn times, each paraphrase turned back into a mid-conversation turn, and near-duplicates
    and meaning changes dropped. Or --import-ecast joins existing paraphrases. Writes
    paraphrases.jsonl, diversity.json, test sets R1..Rn (BEIR query sets sharing the qrels, for
    `benchsmith robustness`) and paraphrase-report.md/.html into the run directory.
    """
    import_ecast, per_turn = settings["import_ecast"], settings["per_turn"]
    run_job_command(
        "paraphrase",
        run_options,
        run=run_paraphrase,
        arguments={"benchmark": benchmark, **settings},
        estimate=estimate_paraphrase,
        summary=print_paraphrase_summary,
        about=f" · {shown(' '.join(map(str, benchmark)))}"
        + (f" · import {shown(import_ecast)}" if import_ecast else "")
        + (f" · {per_turn} per turn by {shown(settings['llm'])}" if per_turn else ""),
    )


def print_paraphrase_summary(result: ParaphraseResult) -> None:
    for note in result.notes:
        console.print(f"note: {shown(note)}", style="yellow", highlight=False, soft_wrap=True)
    figures = result.diversity
    table = Table(title=f"Paraphrases · run {shown(result.run_id)}")
    table.add_column("figure")
    table.add_column("value", justify="right")
    for key in ("turns", "paraphrases", "turns_with_paraphrases", "unjoined"):
        table.add_row(key.replace("_", " "), f"{figures[key]:,}")
    for key in ("bleu_self_contained", "bleu_raw", "bleu_rewrite_vs_raw"):
        value = figures[key]
        table.add_row(key.replace("_", " ").replace("bleu", "BLEU"), "–" if value is None else f"{value:.2f}")
    for group in ("generated_before_filtering", "generated_after_filtering"):
        if group in figures:
            numbers = figures[group]
            table.add_row(
                group.replace("_", " "),
                f"{numbers['paraphrases']:,} · BLEU self-contained "
                + ("–" if numbers["bleu_self_contained"] is None else f"{numbers['bleu_self_contained']:.2f}"),
            )
    console.print(table)
    print_paths(
        {
            **report_paths(result.report, with_results=False),
            "diversity": result.files["diversity"],
            "test sets": result.run_dir / "test-sets",
        }
    )
    print_usage(result.usage)
