"""``benchsmith.paraphrase``: paraphrase a conversational benchmark's turns (the ECAsT chain:
rewrite to self-contained → paraphrase → restore the context), or import ECAsT's, measure their
diversity and draw test sets R1..Rn."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchsmith.agents.models import BASELINE, estimate_tokens
from benchsmith.agents.paraphraser import ContextRestorer, Paraphraser, VariantJudge
from benchsmith.agents.rewriter import Rewriter
from benchsmith.graphs.jobs.common import (CostEstimate, dry_run, EventHandler, JobRun, check_at_least, check_fraction,
                                           check_models, checked_run_id, job_run, priced, resolved_path,
                                           shared_arguments, workspace_for)
from benchsmith.graphs.jobs.defaults import PARAPHRASE_MIN_JUDGE_SCORE as DEFAULT_MIN_JUDGE_SCORE
from benchsmith.graphs.jobs.defaults import PARAPHRASE_PER_TURN as DEFAULT_PER_TURN
from benchsmith.graphs.paraphrase import (DIVERSITY_FILE, PARAPHRASES_FILE, TEST_SETS_DIR, TURNS_FILE, UNJOINED_FILE,
                                          ParaphraseContext, builder)
from benchsmith.graphs.runtime.runner import run_job
from benchsmith.stores.conversational import load_conversational
from benchsmith.stores.ecast import read_ecast
from benchsmith.stores.errors import InputError
from benchsmith.stores.postgres import database_url
from benchsmith.stores.work_items import DEFAULT_LEASE_S
from benchsmith.stores.workspace import Workspace
from benchsmith.tools.embedding import DEFAULT_EMBEDDER
from benchsmith.tools.paraphrase_filters import DEFAULT_MAX_OVERLAP, DEFAULT_MIN_SIMILARITY, OVERLAP_METRICS
from benchsmith.tools.test_sets import DEFAULT_TEST_SETS

OUTPUT_TOKENS_PER_VARIANT = 25
JUDGE_OUTPUT_TOKENS = 60


@dataclass(frozen=True)
class ParaphraseResult(JobRun):
    turns: int = 0
    paraphrases: int = 0  # variants kept, generated or joined
    turns_with_paraphrases: int = 0
    unjoined: int = 0  # imported rows whose turn is not in the benchmark
    diversity: dict[str, Any] = field(default_factory=dict)  # diversity.json
    test_sets: dict[str, Path] = field(default_factory=dict)  # {"original", "R1", ...: directory}
    report: dict[str, Path] = field(default_factory=dict)  # markdown, html, results (paraphrase.json)
    files: dict[str, Path] = field(default_factory=dict)  # paraphrases, diversity, turns, unjoined

    def results(self) -> dict[str, Any]:
        return json.loads(self.report["results"].read_text(encoding="utf-8"))


def paraphrase(benchmark: str | Path | Sequence[str | Path], *, import_ecast: str | Path | None = None,
               per_turn: int | None = None, llm: str = BASELINE, judges: Sequence[str] = (),
               min_judge_score: int = DEFAULT_MIN_JUDGE_SCORE, overlap_metric: str = "bleu",
               max_overlap: float = DEFAULT_MAX_OVERLAP, min_similarity: float = DEFAULT_MIN_SIMILARITY,
               embedder: str = DEFAULT_EMBEDDER, test_sets: int = DEFAULT_TEST_SETS, seed: int = 0,
               corpus: str | Path | None = None, qrels: str | Path | None = None, split: str = "test",
               concurrency: int = 4, requests_per_second: float | None = None, timeout_s: float = 60.0,
               max_attempts: int = 6, structured_output: str = "auto", workspace: str | Path | None = None,
               database: str | None = None, lease_s: float = DEFAULT_LEASE_S, run_id: str | None = None,
               on_event: EventHandler | None = None, resume: str | None = None) -> ParaphraseResult:
    """Paraphrase ``benchmark`` (CAsT topic files, several making one benchmark; a BEIR
    directory; a synthesis run; a turn JSONL file). ``per_turn`` defaults to 5, or to 0 (import
    only) with ``import_ecast``. The same call with the same ``run_id`` resumes. With
    ``database`` (a postgresql:// URL) the run is shared: ``benchsmith work RUN_ID`` on any
    machine that reads the benchmark at the same paths joins it, and each turn is paraphrased
    once."""
    arguments = shared_arguments(locals())  # first: nothing but the parameters is local yet

    resolved = workspace_for(workspace)
    specs = [benchmark] if isinstance(benchmark, str | Path) else list(benchmark)
    per_turn = per_turn if per_turn is not None else (0 if import_ecast else DEFAULT_PER_TURN)
    settings = _checked_settings(resolved, specs, import_ecast, per_turn, llm, judges, min_judge_score,
                                 overlap_metric, max_overlap, min_similarity, embedder, test_sets, seed, corpus,
                                 qrels, split)
    check_at_least(1, concurrency=concurrency, lease_s=lease_s)
    database = database_url(database)
    arguments.update(shared_arguments({name: settings[key] for name, key in (  # as resolved here
        ("benchmark", "benchmarks"), ("import_ecast", "import_ecast"), ("corpus", "corpus"), ("qrels", "qrels"))}))
    run_id = checked_run_id(run_id, "paraphrase")
    context = ParaphraseContext(
        workspace=str(resolved.root), llm=llm, per_turn=per_turn, import_ecast=settings["import_ecast"],
        judges=tuple(judges), min_judge_score=min_judge_score, overlap_metric=overlap_metric,  # type: ignore[arg-type]
        max_overlap=max_overlap, min_similarity=min_similarity, embedder=embedder, test_sets=test_sets, seed=seed,
        corpus=settings["corpus"], qrels=settings["qrels"], split=split, concurrency=concurrency,
        requests_per_second=requests_per_second, timeout_s=timeout_s, max_attempts=max_attempts,
        structured_output=structured_output, database=database, lease_s=lease_s)
    context.model_settings()  # an impossible model setting stops here, before the run exists
    outcome = run_job(builder, job="paraphrase", workspace=resolved, run_id=run_id,
                      inputs={"run_id": run_id, "benchmarks": settings["benchmarks"]}, context=context,
                      settings=settings, on_event=on_event, max_concurrency=concurrency, resume=resume,
                      database=database, arguments=arguments)
    values = outcome.values
    run_dir = outcome.run_dir
    return ParaphraseResult(
        **job_run(outcome), turns=values["turns"], paraphrases=values["paraphrases"],
        turns_with_paraphrases=values["turns_with_paraphrases"], unjoined=values["unjoined"],
        diversity=values["diversity"],
        test_sets={name: run_dir.file(TEST_SETS_DIR) / name for name in ["original", *values["test_sets"]]},
        report={kind: Path(path) for kind, path in values["report"].items()},
        files={"paraphrases": run_dir.file(PARAPHRASES_FILE), "diversity": run_dir.file(DIVERSITY_FILE),
               "turns": run_dir.file(TURNS_FILE), "unjoined": run_dir.file(UNJOINED_FILE)})


def _checked_settings(workspace: Workspace, specs: list[str | Path], import_ecast: str | Path | None, per_turn: int,
                      llm: str, judges: Sequence[str], min_judge_score: int, overlap_metric: str,
                      max_overlap: float, min_similarity: float, embedder: str, test_sets: int, seed: int,
                      corpus: str | Path | None, qrels: str | Path | None, split: str) -> dict[str, Any]:
    """Every setting checked, and the benchmark and the ECAsT file read, before any work."""

    check_at_least(0, per_turn=per_turn)
    check_at_least(1, test_sets=test_sets)
    if per_turn == 0 and import_ecast is None:
        raise InputError("nothing to do: give --per-turn K (K ≥ 1) to generate, or --import-ecast FILE")
    if overlap_metric not in OVERLAP_METRICS:
        raise InputError(f"--overlap-metric must be one of {', '.join(OVERLAP_METRICS)}, got {overlap_metric!r}")
    if not 0 <= max_overlap <= 100:
        raise InputError(f"--max-overlap must be within [0, 100], got {max_overlap}")
    check_fraction(min_similarity=min_similarity)
    if not 1 <= min_judge_score <= 5:
        raise InputError(f"--min-judge-score must be within 1-5, got {min_judge_score}")
    if len(set(judges)) != len(judges):
        raise InputError("each --judge may be given once")
    check_models(llm, *judges)
    benchmarks = [resolved_path(str(spec)) for spec in specs]
    corpus_path = str(Path(corpus).resolve()) if corpus else None
    qrels_path = str(Path(qrels).resolve()) if qrels else None
    load_conversational(benchmarks, workspace, split=split, corpus=Path(corpus_path) if corpus_path else None,
                        qrels=Path(qrels_path) if qrels_path else None)  # a bad benchmark stops here
    ecast_path = str(Path(import_ecast).resolve()) if import_ecast else None
    if ecast_path:
        read_ecast(Path(ecast_path))
    return {"benchmarks": benchmarks, "import_ecast": ecast_path, "per_turn": per_turn, "llm": llm,
            "judges": list(judges), "min_judge_score": min_judge_score, "overlap_metric": overlap_metric,
            "max_overlap": max_overlap, "min_similarity": min_similarity, "embedder": embedder,
            "test_sets": test_sets, "seed": seed, "corpus": corpus_path, "qrels": qrels_path, "split": split}


@dry_run
def estimate_paraphrase(benchmark: str | Path | Sequence[str | Path], *, import_ecast: str | Path | None = None,
                        per_turn: int | None = None, llm: str = BASELINE, judges: Sequence[str] = (),
                        corpus: str | Path | None = None, split: str = "test",
                        workspace: str | Path | None = None) -> CostEstimate:
    """Model calls, tokens and cost of a paraphrase run, from the real prompts of each turn
    (judges counted as if every variant passed the other filters: an upper bound)."""

    check_models(llm, *judges)
    per_turn = per_turn if per_turn is not None else (0 if import_ecast else DEFAULT_PER_TURN)
    specs = [benchmark] if isinstance(benchmark, str | Path) else list(benchmark)
    loaded = load_conversational([resolved_path(str(spec)) for spec in specs], workspace_for(workspace), split=split,
                                 corpus=Path(corpus) if corpus else None)
    generator, judge = [0, 0, 0], [0, 0, 0]  # calls, input tokens, output tokens

    def add(totals: list[int], messages: list[dict[str, str]], output_tokens: int) -> None:
        totals[0] += 1
        totals[1] += estimate_tokens("".join(message["content"] for message in messages))
        totals[2] += output_tokens

    if per_turn:
        for query in loaded.queries:
            source = query.rewrite or query.question
            if not query.rewrite and query.history:
                add(generator, Rewriter().messages(history=query.history, question=query.question), 40)
            add(generator, Paraphraser(per_turn).messages(query=source), per_turn * OUTPUT_TOKENS_PER_VARIANT)
            if query.history:
                add(generator, ContextRestorer(per_turn).messages(history=query.history, raw=query.question,
                                                                  rewrite=source, queries=[source] * per_turn),
                    per_turn * OUTPUT_TOKENS_PER_VARIANT)
            for _ in range(per_turn if judges else 0):
                add(judge, VariantJudge().messages(history=query.history, source=source, paraphrase=source,
                                                   raw=query.question), JUDGE_OUTPUT_TOKENS)
    notes = [f"{len(loaded.queries):,} turns" + (f"; ECAsT rows from {import_ecast} are joined, not generated"
                                                 if import_ecast else "")]
    return priced(f"{per_turn} paraphrases per turn of {len(loaded.queries):,} turns",
                  [(llm, *generator), *((spec, *judge) for spec in judges)], notes)
