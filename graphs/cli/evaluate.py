"""``benchsmith evaluate``: score retrievers on a benchmark with standard IR measures."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from benchsmith.graphs.cli.console import (ChromaHostOption, DatabaseOption, DryRunOption, EmbedderOption,
                                           MaxAttemptsOption, RateLimitOption, RunIdOption, StructuredOutputOption,
                                           TimeoutOption, WorkspaceOption, console, fail, guarded, model_options,
                                           offline_environment, print_estimate, print_group_table, print_measure_table,
                                           print_paths, print_usage, run_reported, shown)
from benchsmith.graphs.cli.deferred import deferred
from benchsmith.graphs.jobs.defaults import EVALUATE_BATCH_SIZE as DEFAULT_BATCH_SIZE
from benchsmith.graphs.jobs.defaults import EVALUATE_DEPTH as DEFAULT_DEPTH
from benchsmith.graphs.jobs.defaults import EVALUATE_HISTORIES as DEFAULT_HISTORIES
from benchsmith.graphs.jobs.defaults import EVALUATE_RETRIEVERS as DEFAULT_RETRIEVERS
from benchsmith.stores.files import write_json_atomic
from benchsmith.stores.runs import new_run_id
from benchsmith.tools.defaults import DEFAULT_EMBEDDER
from benchsmith.tools.rerank import DEFAULT_RERANK_DEPTH

# The jobs load when the command runs (graphs/cli/deferred.py): --help and start-up stay free of models,
# Chroma, torch and scipy.
run_evaluation = deferred("benchsmith.graphs.jobs.evaluate", "evaluate")
estimate_evaluation = deferred("benchsmith.graphs.jobs.evaluate", "estimate_evaluation")
checked_measures = deferred("benchsmith.graphs.jobs.evaluate", "checked_measures")
measure_runs = deferred("benchsmith.graphs.jobs.evaluate", "measure_runs")


def evaluate(
    benchmark: Annotated[Optional[str], typer.Argument(
        help="A BEIR directory (corpus.jsonl, queries.jsonl, qrels/<split>.tsv), a synthesis run directory, "
             "or a run id in the workspace.", show_default=False)] = None,
    retriever: Annotated[Optional[list[str]], typer.Option(
        "--retriever", help="bm25, dense[:MODEL], hybrid:rrf(dense,bm25), hybrid:combsum(...), "
                            "hybrid:wsum(dense=0.7,bm25=0.3). Repeat to compare.",
        show_default=", ".join(DEFAULT_RETRIEVERS))] = None,
    history: Annotated[Optional[list[str]], typer.Option(
        "--history", help="How much of the conversation each query carries: full, last:K, current, rewrite "
                          "(a model's self-contained rewrite, see --llm) or oracle (the benchmark's own rewrite). "
                          "Repeat to compare.", show_default=", ".join(DEFAULT_HISTORIES))] = None,
    rerank: Annotated[Optional[str], typer.Option(help="Also rerank each configuration's top --rerank-depth with "
                                                        "this sentence-transformers CrossEncoder (name or path).")] = None,
    rerank_depth: Annotated[int, typer.Option(min=1, help="Documents per query the reranker re-scores.")]
    = DEFAULT_RERANK_DEPTH,
    depth: Annotated[int, typer.Option(min=1, help="Documents retrieved per query.")] = DEFAULT_DEPTH,
    measure: Annotated[Optional[list[str]], typer.Option(
        "--measure", help="Any ir_measures measure (nDCG@10, R@100, RR@10, AP, Judged@10, P(rel=2)@5...), or "
                          "with --nugget-qrels alpha_nDCG@10 and Coverage@20 (added to the defaults then). "
                          "Repeat; replaces the defaults.", show_default="R@1,5,20,100,1000 nDCG@3,10,20 "
                                                                          "RR@10,20 AP Judged@10,20")] = None,
    run: Annotated[Optional[list[Path]], typer.Option(
        "--run", help="A TREC run file of your own system, evaluated beside the --retriever configurations "
                      "(named by its file name; with no --retriever, only the run files). Repeat to compare. "
                      "Without a BENCHMARK: only measure the files against --qrels.")] = None,
    qrels: Annotated[Optional[Path], typer.Option(
        help="Judgments, TREC qrels (qid iteration docid relevance) or BEIR TSV (query-id corpus-id score, "
             "header or not), told apart by their first line: what --run files are measured against without "
             "a BENCHMARK; with one, used instead of its own.")] = None,
    nugget_qrels: Annotated[Optional[Path], typer.Option(
        help="Nugget qrels (qid nugget_id doc_id label: a `benchsmith nuggets` run's nugget-qrels.trec) for "
             "--measure alpha_nDCG@10 and Coverage@20 beside the others. With --run and no BENCHMARK it can stand "
             "in for --qrels: a document's label is then the sum of its nugget labels.")] = None,
    strict: Annotated[bool, typer.Option(
        "--strict", help="Stop on judged query or document ids the benchmark lacks, run-file queries it lacks, "
                         "or document ids its corpus repeats (warnings otherwise).")] = False,
    batch_size: Annotated[int, typer.Option(
        min=1, help="Queries per batch: memory holds one batch of rankings at a time.")] = DEFAULT_BATCH_SIZE,
    json_file: Annotated[Optional[Path], typer.Option("--json", help="Also write the scores as JSON here.")] = None,
    split: Annotated[str, typer.Option(help="BEIR qrels split (qrels/<split>.tsv).")] = "test",
    extra_qrels: Annotated[Optional[Path], typer.Option(
        help="More judgments (query-id, corpus-id, score TSV) added to the benchmark's, e.g. the "
             "extra_qrels.tsv of `benchsmith audit`.")] = None,
    embedder: EmbedderOption = DEFAULT_EMBEDDER,
    llm: Annotated[str, typer.Option(help="Model for --history rewrite: 'baseline' or openai:<model>.")] = "baseline",
    test: Annotated[str, typer.Option(help="Significance test between configurations: randomization or t-test.")]
    = "randomization",
    concurrency: Annotated[int, typer.Option(min=1, help="Rewriter calls in flight.")] = 4,
    rate_limit: RateLimitOption = None,
    timeout: TimeoutOption = 60.0,
    max_attempts: MaxAttemptsOption = 6,
    structured_output: StructuredOutputOption = "auto",
    chroma_host: ChromaHostOption = None,
    database: DatabaseOption = None,
    run_id: RunIdOption = None,
    dry_run: DryRunOption = False,
    workspace: WorkspaceOption = None,
) -> None:
    """Score retrievers, and your own system's TREC run files, on a benchmark with standard IR
    measures, per turn and per switch type.

    Writes a TREC run file per configuration, report.md, report.html and results.json into
    the run directory. With --run and --qrels (or --nugget-qrels) but no BENCHMARK it only
    measures the run files.
    """
    offline_environment()
    measures = guarded(lambda: checked_measures(measure, nugget_qrels is not None))
    if benchmark is None:
        if not run or (qrels is None and nugget_qrels is None):
            fail("give a BENCHMARK to evaluate, or --run FILE --qrels FILE (or --nugget-qrels FILE) to measure "
                 "existing runs")
        guarded(lambda: _measure_run_files(run, qrels, measures, json_file, batch_size, nugget_qrels))
        return
    runs = list(run or [])
    retrievers = retriever or ([] if runs else list(DEFAULT_RETRIEVERS))
    histories = history or list(DEFAULT_HISTORIES)
    if dry_run:
        print_estimate(guarded(lambda: estimate_evaluation(benchmark, retrievers=retrievers, histories=histories,
                                                           runs=runs, rerank=rerank, split=split, llm=llm,
                                                           workspace=workspace)))
        return
    run_id = run_id or new_run_id("evaluate")
    evaluated = [f"{', '.join(retrievers)} × history {', '.join(histories)}"] if retrievers else []
    evaluated += [f"run file{'s' if len(runs) > 1 else ''} {', '.join(path.name for path in runs)}"] if runs else []
    console.print(f"[bold]evaluate[/] run [cyan]{shown(run_id)}[/] · {shown(benchmark)} · "
                  f"{shown(' + '.join(evaluated))}"
                  + (f" · rerank {shown(rerank)}" if rerank else ""), highlight=False)
    result = guarded(lambda: run_reported(
        run_evaluation, run_id=run_id, benchmark=benchmark, retrievers=retrievers, histories=histories, runs=runs,
        rerank=rerank, rerank_depth=rerank_depth, depth=depth, measures=measures, split=split, qrels=qrels,
        extra_qrels=extra_qrels, nugget_qrels=nugget_qrels, strict=strict, llm=llm, test=test, embedder=embedder,
        concurrency=concurrency, batch_size=batch_size, workspace=workspace, chroma_host=chroma_host,
        database=database,
        **model_options(rate_limit, timeout, max_attempts, structured_output)))
    if result.already_finished:  # its warnings were printed when it ran
        for warning in result.warnings:
            console.print(f"[yellow]warning:[/] {shown(warning)}", highlight=False, soft_wrap=True)
    print_measure_table(result.aggregate, result.measures, f"Evaluation · run {result.run_id}",
                        highlight=result.primary_measure)
    by_switch = result.results().get("by_switch") or {}
    if by_switch:
        print_group_table(by_switch, result.primary_measure,
                          f"{result.primary_measure} per switch type (queries) · run {result.run_id}")
    print_paths({"report": result.report["html"], "markdown": result.report["markdown"],
                 "results": result.report["results"]})
    print_usage(result.usage)
    if json_file is not None:
        results = result.results()
        _write_json(json_file, {"aggregate": results["aggregate"], "per_query": results["per_query"]})


def _measure_run_files(run_files: list[Path], qrels_file: Path | None, measures: list[str], json_file: Path | None,
                       batch_size: int, nugget_qrels: Path | None = None) -> None:
    scored = measure_runs(run_files, qrels_file, measures, batch_size, nugget_qrels=nugget_qrels)
    names = [Path(name).name for name in scored]
    labels = names if len(set(names)) == len(names) else list(scored)  # file names, unless two share one
    judged = len(next(iter(scored.values())).per_query) if scored else 0
    print_measure_table({label: result.aggregate for label, result in zip(labels, scored.values())}, measures,
                        f"{judged} judged queries · {qrels_file or nugget_qrels}")
    for name, result in scored.items():
        if result.unjudged_queries:
            examples = ", ".join(map(repr, result.unjudged_examples))
            more = ", …" if result.unjudged_queries > len(result.unjudged_examples) else ""
            console.print(f"{name}: {result.unjudged_queries} queries have no judgments and were not measured "
                          f"({examples}{more})", highlight=False, markup=False)
    if json_file is not None:
        as_json = {name: {"aggregate": result.aggregate, "per_query": result.per_query} for name, result in scored.items()}
        _write_json(json_file, next(iter(as_json.values())) if len(as_json) == 1 else {"runs": as_json})


def _write_json(path: Path, payload: dict[str, Any]) -> None:
    write_json_atomic(path, payload)
    console.print(f"{'json:':<10}{path}", highlight=False, markup=False)
