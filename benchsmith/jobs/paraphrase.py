"""``benchsmith.paraphrase``: paraphrase a conversational benchmark's turns (the ECAsT chain:
rewrite to self-contained → paraphrase → restore the context), or import ECAsT's, measure their
diversity and draw test sets R1..Rn."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from benchsmith.agents.defaults import BASELINE, StructuredOutput
from benchsmith.agents.paraphraser import ContextRestorer, Paraphraser, VariantJudge
from benchsmith.agents.rewriter import Rewriter
from benchsmith.agents.seam.backends import estimate_tokens
from benchsmith.graphs.contexts.paraphrase import DEFAULT_MIN_JUDGE_SCORE, ParaphraseContext
from benchsmith.graphs.paraphrase.graph import builder
from benchsmith.graphs.paraphrase.state import (
    DIVERSITY_FILE,
    PARAPHRASES_FILE,
    TEST_SETS_DIR,
    TURNS_FILE,
    UNJOINED_FILE,
)
from benchsmith.graphs.runtime.ray_items import prepare as prepare_ray
from benchsmith.graphs.runtime.ray_items import where_items_run
from benchsmith.graphs.runtime.settings import accepts_old_setting_names, check_bounds, settings_given
from benchsmith.jobs.common import (
    CostEstimate,
    EventHandler,
    JobRun,
    check_models,
    estimate_of,
    job_result,
    priced,
    resolved_path,
    run_settled,
    stop_if_dry_run,
)
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.conversational import load_conversational
from benchsmith.stores.formats.ecast import read_ecast
from benchsmith.stores.persistence.jsonl import read_json_object
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.benchmark.paraphrase_filters import OVERLAP_METRICS
from benchsmith.tools.benchmark.test_sets import DEFAULT_TEST_SETS
from benchsmith.tools.defaults import DEFAULT_EMBEDDER, DEFAULT_MAX_SENTENCE_SCORE, DEFAULT_PARAPHRASE_MIN_SIMILARITY

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
    notes: list[str] = field(default_factory=list)  # what reading the inputs found and forgave (ECAsT repeats)

    def results(self) -> dict[str, Any]:
        return read_json_object(self.report["results"])


@accepts_old_setting_names
def paraphrase(
    benchmark: str | Path | Sequence[str | Path],
    *,
    run_id: str | None = None,
    on_event: EventHandler | None = None,
    resume: str | None = None,
    seed: int = 0,
    llm: str = BASELINE,
    per_turn: int | None = None,
    import_ecast: str | None = None,
    judges: tuple[str, ...] = (),
    min_judge_score: int = DEFAULT_MIN_JUDGE_SCORE,
    overlap_metric: Literal["bleu", "chrf"] = "bleu",
    max_sentence_score: float = DEFAULT_MAX_SENTENCE_SCORE,
    min_similarity: float = DEFAULT_PARAPHRASE_MIN_SIMILARITY,
    embedder: str = DEFAULT_EMBEDDER,
    test_sets: int = DEFAULT_TEST_SETS,
    corpus: str | None = None,
    qrels: str | None = None,
    split: str = "test",
    concurrency: int = 4,
    rate_limit: float | None = None,
    timeout_s: float = 60.0,
    max_attempts: int = 6,
    structured_output: StructuredOutput = "auto",
    workspace: str | None = None,
    chroma_host: str | None = None,
    database: str | None = None,
    ray: str | None = None,
) -> ParaphraseResult:
    """Paraphrase ``benchmark`` (CAsT topic files, several making one benchmark; a BEIR
    directory; a synthesis run; a turn JSONL file); every setting of :class:`ParaphraseContext`
    is a keyword argument too. ``per_turn`` defaults to 5, or to 0 (import only) with
    ``import_ecast``. The same call with the same ``run_id`` resumes. With ``ray`` each turn is
    paraphrased as a Ray task (graphs/runtime/ray_items.py)."""
    settings = settings_given(ParaphraseContext, locals())

    resolved = Workspace.resolve(settings.workspace)
    specs = [benchmark] if isinstance(benchmark, str | Path) else list(benchmark)
    inputs, notes, context = _checked_inputs(resolved, specs, settings)
    stop_if_dry_run(lambda: _estimate(resolved, inputs["benchmarks"], context))
    prepare_ray(context.ray)  # a cluster that cannot be joined stops here, before the run exists
    outcome = run_settled(
        builder,
        "paraphrase",
        resolved,
        inputs,
        context,
        run_id=run_id,
        on_event=on_event,
        resume=resume,
    )
    run_dir = outcome.run_dir
    return job_result(
        ParaphraseResult,
        outcome,
        test_sets={name: run_dir.file(TEST_SETS_DIR) / name for name in ["original", *outcome.values["test_sets"]]},
        files={
            "paraphrases": run_dir.file(PARAPHRASES_FILE),
            "diversity": run_dir.file(DIVERSITY_FILE),
            "turns": run_dir.file(TURNS_FILE),
            "unjoined": run_dir.file(UNJOINED_FILE),
        },
        notes=notes,
    )


def _checked_inputs(
    workspace: Workspace, specs: list[str | Path], settings: ParaphraseContext
) -> tuple[dict[str, Any], list[str], ParaphraseContext]:
    """The run's inputs, what reading them forgave (notes for the user), and its settings with paths
    made absolute: every one checked, and the benchmark and the ECAsT file read, before any work."""

    check_bounds(settings)
    if settings.per_turn == 0 and settings.import_ecast is None:
        raise InputError("nothing to do: give --per-turn K (K ≥ 1) to generate, or --import-ecast FILE")
    if settings.overlap_metric not in OVERLAP_METRICS:
        raise InputError(
            f"--overlap-metric must be one of {', '.join(OVERLAP_METRICS)}, got {settings.overlap_metric!r}"
        )
    if len(set(settings.judges)) != len(settings.judges):
        raise InputError("each --judge may be given once")
    check_models(settings.llm, *settings.judges)
    benchmarks = [resolved_path(str(spec)) for spec in specs]
    corpus_path = str(Path(settings.corpus).resolve()) if settings.corpus else None
    qrels_path = str(Path(settings.qrels).resolve()) if settings.qrels else None
    load_conversational(
        benchmarks,
        workspace,
        split=settings.split,
        corpus=Path(corpus_path) if corpus_path else None,
        qrels=Path(qrels_path) if qrels_path else None,
    )  # a bad benchmark stops here
    ecast_path = str(Path(settings.import_ecast).resolve()) if settings.import_ecast else None
    notes = []
    if ecast_path and (repeats := read_ecast(Path(ecast_path)).repeats_summary()):
        notes.append(repeats)
    return (
        {"benchmarks": benchmarks},
        notes,
        replace(settings, import_ecast=ecast_path, corpus=corpus_path, qrels=qrels_path, judges=tuple(settings.judges)),
    )


estimate_paraphrase = estimate_of(
    "estimate_paraphrase",
    paraphrase,
    CostEstimate,
    """Model calls, tokens and cost of a paraphrase run (:func:`paraphrase`'s arguments), from the real
    prompts of each turn (judges counted as if every variant passed the other filters: an upper bound).""",
)


def _estimate(workspace: Workspace, benchmarks: list[str], settings: ParaphraseContext) -> CostEstimate:
    """:func:`estimate_paraphrase` once the call is checked."""
    llm, judges, import_ecast = settings.llm, settings.judges, settings.import_ecast
    per_turn = settings.paraphrases_per_turn
    loaded = load_conversational(
        benchmarks,
        workspace,
        split=settings.split,
        corpus=Path(settings.corpus) if settings.corpus else None,
    )
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
                add(
                    generator,
                    ContextRestorer(per_turn).messages(
                        history=query.history, raw=query.question, rewrite=source, queries=[source] * per_turn
                    ),
                    per_turn * OUTPUT_TOKENS_PER_VARIANT,
                )
            for _ in range(per_turn if judges else 0):
                add(
                    judge,
                    VariantJudge().messages(
                        history=query.history, source=source, paraphrase=source, raw=query.question
                    ),
                    JUDGE_OUTPUT_TOKENS,
                )
    notes = [
        f"{len(loaded.queries):,} turns"
        + (f"; ECAsT rows from {import_ecast} are joined, not generated" if import_ecast else ""),
        where_items_run(settings.ray, "turns"),
    ]
    return priced(
        f"{per_turn} paraphrases per turn of {len(loaded.queries):,} turns",
        [(llm, generator[0], generator[1], generator[2]), *((spec, judge[0], judge[1], judge[2]) for spec in judges)],
        notes,
    )
