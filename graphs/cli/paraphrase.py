"""``benchsmith paraphrase``: conversational paraphrases of a benchmark's turns (ECAsT), their
diversity, and test sets R1..Rn."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer
from rich.table import Table

from benchsmith.graphs.cli.console import (DatabaseOption, DryRunOption, LeaseOption, MaxAttemptsOption,
                                           RateLimitOption, RunIdOption, StructuredOutputOption, TimeoutOption,
                                           WorkspaceOption, console, guarded, model_options, offline_environment,
                                           print_estimate, print_paths, print_usage, run_reported, shown)
from benchsmith.graphs.cli.deferred import deferred
from benchsmith.graphs.jobs.defaults import PARAPHRASE_MIN_JUDGE_SCORE as DEFAULT_MIN_JUDGE_SCORE
from benchsmith.stores.runs import new_run_id
from benchsmith.stores.work_items import DEFAULT_LEASE_S
from benchsmith.tools.defaults import DEFAULT_EMBEDDER
from benchsmith.tools.defaults import DEFAULT_PARAPHRASE_MAX_OVERLAP as DEFAULT_MAX_OVERLAP
from benchsmith.tools.defaults import DEFAULT_PARAPHRASE_MIN_SIMILARITY as DEFAULT_MIN_SIMILARITY
from benchsmith.tools.test_sets import DEFAULT_TEST_SETS

if TYPE_CHECKING:
    from benchsmith.graphs.jobs.paraphrase import ParaphraseResult

# The jobs load when the command runs (graphs/cli/deferred.py): --help and start-up stay free of models,
# Chroma, torch and scipy. Result types are for annotations only.
run_paraphrase = deferred("benchsmith.graphs.jobs.paraphrase", "paraphrase")
estimate_paraphrase = deferred("benchsmith.graphs.jobs.paraphrase", "estimate_paraphrase")


def paraphrase(
    benchmark: Annotated[list[str], typer.Argument(
        help="The benchmark: TREC CAsT topic files (several make one benchmark, e.g. 2019_evaluation_topics.json "
             "2019_evaluation_topics_resolved.tsv 2020_manual_evaluation_topics.json), a BEIR directory, a "
             "synthesis run directory or run id, or a turn JSONL file.", show_default=False)],
    import_ecast: Annotated[Optional[Path], typer.Option(
        "--import-ecast", help="Join the paraphrases of an ECAsT.csv (TURN_ID, MANUAL PARAPHRASE, RAW PARAPHRASE) "
                               "to the benchmark's turns instead of generating; rows of other turns are counted "
                               "as unjoined.")] = None,
    per_turn: Annotated[Optional[int], typer.Option(
        "--per-turn", min=0, help="Paraphrases to generate per turn (with --import-ecast: also generate).",
        show_default="5, or 0 with --import-ecast")] = None,
    llm: Annotated[str, typer.Option(help="Rewriter, paraphraser and context restorer: 'baseline' (offline "
                                          "rewordings, the plumbing path) or openai:<model>.")] = "baseline",
    judge: Annotated[Optional[list[str]], typer.Option(
        "--judge", help="Also have this model rate each generated variant's equivalence and conversational fit "
                        "(1-5). Repeat for an ensemble.", show_default="no judge")] = None,
    min_judge_score: Annotated[int, typer.Option(min=1, max=5, help="Judges' mean equivalence and fit a variant "
                                                                    "needs.")] = DEFAULT_MIN_JUDGE_SCORE,
    overlap_metric: Annotated[str, typer.Option(help="Near-duplicate measure (sacrebleu): bleu or chrf.")] = "bleu",
    max_overlap: Annotated[float, typer.Option(help="Drop a variant whose sentence BLEU/chrF (0-100) with its source "
                                                    "or a kept variant exceeds this.")] = DEFAULT_MAX_OVERLAP,
    min_similarity: Annotated[float, typer.Option(help="Drop a variant whose embedding cosine to its source is "
                                                       "below this (0: no check).")] = DEFAULT_MIN_SIMILARITY,
    embedder: Annotated[str, typer.Option(help="Embedder of the meaning check.")] = DEFAULT_EMBEDDER,
    test_sets: Annotated[int, typer.Option("--test-sets", min=1, help="Test sets R1..Rn to draw.")]
    = DEFAULT_TEST_SETS,
    seed: Annotated[int, typer.Option(help="Seed of the test sets and the model calls.")] = 0,
    corpus: Annotated[Optional[Path], typer.Option(help="The BEIR corpus.jsonl of a turn JSONL benchmark "
                                                        "(optional: paraphrasing reads no document).")] = None,
    qrels: Annotated[Optional[Path], typer.Option(help="TREC qrels of the benchmark (CAsT ships them apart), "
                                                       "shared by the test sets.")] = None,
    split: Annotated[str, typer.Option(help="BEIR qrels split (qrels/<split>.tsv).")] = "test",
    concurrency: Annotated[int, typer.Option(min=1, help="Turns paraphrased at once.")] = 4,
    rate_limit: RateLimitOption = None,
    timeout: TimeoutOption = 60.0,
    max_attempts: MaxAttemptsOption = 6,
    structured_output: StructuredOutputOption = "auto",
    database: DatabaseOption = None,
    lease: LeaseOption = DEFAULT_LEASE_S,
    run_id: RunIdOption = None,
    dry_run: DryRunOption = False,
    workspace: WorkspaceOption = None,
) -> None:
    """Paraphrase a conversational benchmark's turns and measure how diverse the variants are (ECAsT).

    Per turn: its self-contained form (the benchmark's rewrite, or a model's) is paraphrased
    --per-turn times, each paraphrase turned back into a mid-conversation turn, and near-duplicates
    and meaning changes dropped. Or --import-ecast joins existing paraphrases. Writes
    paraphrases.jsonl, diversity.json, test sets R1..Rn (BEIR query sets sharing the qrels, for
    `benchsmith robustness`) and paraphrase-report.md/.html into the run directory.
    """
    offline_environment()
    judges = judge or []
    if dry_run:
        print_estimate(guarded(lambda: estimate_paraphrase(benchmark, import_ecast=import_ecast, per_turn=per_turn,
                                                           llm=llm, judges=judges, corpus=corpus, split=split,
                                                           workspace=workspace)))
        return
    run_id = run_id or new_run_id("paraphrase")
    console.print(f"[bold]paraphrase[/] run [cyan]{shown(run_id)}[/] · {shown(' '.join(map(str, benchmark)))}"
                  + (f" · import {shown(import_ecast)}" if import_ecast else "")
                  + (f" · {per_turn} per turn by {shown(llm)}" if per_turn else ""), highlight=False)
    result = guarded(lambda: run_reported(
        run_paraphrase, run_id=run_id, benchmark=benchmark, import_ecast=import_ecast, per_turn=per_turn, llm=llm,
        judges=judges, min_judge_score=min_judge_score, overlap_metric=overlap_metric, max_overlap=max_overlap,
        min_similarity=min_similarity, embedder=embedder, test_sets=test_sets, seed=seed, corpus=corpus,
        qrels=qrels, split=split, concurrency=concurrency, workspace=workspace, database=database,
        lease_s=lease, **model_options(rate_limit, timeout, max_attempts, structured_output)))
    print_paraphrase_summary(result)


def print_paraphrase_summary(result: ParaphraseResult) -> None:
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
            table.add_row(group.replace("_", " "), f"{numbers['paraphrases']:,} · BLEU self-contained "
                          + ("–" if numbers["bleu_self_contained"] is None else f"{numbers['bleu_self_contained']:.2f}"))
    console.print(table)
    print_paths({"report": result.report["html"], "markdown": result.report["markdown"],
                 "diversity": result.files["diversity"], "test sets": result.run_dir / "test-sets"})
    print_usage(result.usage)
