"""``benchsmith.validate``: does a benchmark rank retriever configurations as the user's own
labelled questions do (Kendall's τ-b with a bootstrap interval), and how far do LLM judges
agree with the human labels (Cohen's κ, Krippendorff's α)?"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchsmith.agents.models import BASELINE, estimate_tokens
from benchsmith.evals.validity import DEFAULT_BOOTSTRAP
from benchsmith.graphs.runtime.corpus_indexes import cached_benchmark, corpus_documents, document_text
from benchsmith.graphs.jobs.common import (CostEstimate, EventHandler, JobRun, check_at_least, check_embedders,
                                           check_models, checked_run_id, job_run, priced, resolved_path,
                                           retriever_embedders, workspace_for)
from benchsmith.graphs.jobs.defaults import VALIDATE_JUDGE_DEPTH as DEFAULT_JUDGE_DEPTH
from benchsmith.graphs.jobs.defaults import VALIDATE_MEASURE as DEFAULT_MEASURE
from benchsmith.graphs.jobs.defaults import VALIDATE_RETRIEVERS as DEFAULT_RETRIEVERS
from benchsmith.graphs.jobs.evaluate import checked_measures
from benchsmith.graphs.jobs.select import checked_judges
from benchsmith.graphs.runtime.runner import run_job
from benchsmith.graphs.validate import JUDGE_BATCH, ValidationContext, builder, check_same_corpus, default_histories
from benchsmith.stores.errors import InputError
from benchsmith.stores.labelled_questions import read_labelled_questions
from benchsmith.stores.postgres import database_url
from benchsmith.stores.workspace import Workspace
from benchsmith.tools.embedding import DEFAULT_EMBEDDER
from benchsmith.tools.query_building import parse_history_mode, require_oracle_rewrites
from benchsmith.tools.rerank import DEFAULT_RERANK_DEPTH
from benchsmith.tools.retriever_specs import expand_configurations, parse_retriever, run_file_configurations

MIN_CONFIGURATIONS = 3  # τ over fewer says next to nothing
JUDGE_OUTPUT_TOKENS = 60  # per passage


@dataclass(frozen=True)
class ValidationResult(JobRun):
    measure: str = ""
    configurations: list[dict[str, Any]] = field(default_factory=list)  # [{name, human, synthetic, ranks...}]
    kendall_tau_b: float | None = None
    interval: dict[str, Any] = field(default_factory=dict)  # {low, high, confidence, defined_resamples}
    p_value: float | None = None
    top1_agrees: bool = False
    verdict: dict[str, str] = field(default_factory=dict)  # {label, text}
    judge_agreement: dict[str, dict[str, Any]] = field(default_factory=dict)  # {judge: {cohen_kappa, ...}}
    report: dict[str, Path] = field(default_factory=dict)  # markdown, html, results (validity.json)

    def results(self) -> dict[str, Any]:
        return json.loads(self.report["results"].read_text(encoding="utf-8"))


def validate(synthetic: str | Path, *, human: str | Path, retrievers: Sequence[str] | None = None,
             histories: Sequence[str] | None = None, runs: Sequence[str | Path] = (), rerank: str | None = None,
             rerank_depth: int = DEFAULT_RERANK_DEPTH, measure: str = DEFAULT_MEASURE, depth: int = 1000,
             split: str = "test", judges: Sequence[str] = (), judge_depth: int = DEFAULT_JUDGE_DEPTH,
             bootstrap: int = DEFAULT_BOOTSTRAP, seed: int = 0, llm: str = BASELINE,
             embedder: str = DEFAULT_EMBEDDER, concurrency: int = 4, requests_per_second: float | None = None,
             timeout_s: float = 60.0, max_attempts: int = 6, structured_output: str = "auto",
             workspace: str | Path | None = None, chroma_host: str | None = None, database: str | None = None,
             run_id: str | None = None, on_event: EventHandler | None = None,
             resume: str | None = None) -> ValidationResult:
    """Rank every configuration (``retrievers`` × ``histories``, ``rerank``, TREC ``runs`` that
    rank the queries of both sets) on ``synthetic`` (anything `evaluate` accepts) and on
    ``human`` (a BEIR directory over the same corpus, or a labelled JSONL whose gold chunk ids are
    ids of the synthetic corpus) by ``measure``, and compare the two rankings: Kendall's τ-b,
    a seeded bootstrap interval over the queries of both sets, scipy's p-value, whether the
    same configuration comes first. ``judges`` (``baseline``, ``openai:<model>``, a registered
    name or ``qrels:FILE``) each label the human set's gold pairs and as many sampled non-gold
    ones; their agreement with the human labels is in ``judge_agreement``. Different corpora stop
    with an InputError before any run exists. The same call with the same ``run_id`` resumes."""

    resolved = workspace_for(workspace)
    settings = _checked_settings(resolved, synthetic, human, retrievers, histories, runs, rerank, rerank_depth,
                                 measure, depth, split, judges, judge_depth, bootstrap, llm)
    check_at_least(1, concurrency=concurrency)
    check_embedders(embedder, *retriever_embedders(settings["retrievers"]))
    database = database_url(database)
    run_id = checked_run_id(run_id, "validate")
    context = ValidationContext(
        workspace=str(resolved.root), chroma_host=chroma_host, database=database, measure=settings["measure"],
        split=split, depth=depth, embedder=embedder, rerank_model=rerank, rerank_depth=rerank_depth, llm=llm,
        bootstrap=bootstrap, judge_depth=judge_depth, concurrency=concurrency, seed=seed,
        requests_per_second=requests_per_second, timeout_s=timeout_s, max_attempts=max_attempts,
        structured_output=structured_output)  # type: ignore[arg-type]
    context.model_settings()  # an impossible model setting stops here, before the run exists
    inputs = {"run_id": run_id, "synthetic": settings["synthetic"], "human": settings["human"],
              "retrievers": settings["retrievers"], "histories": settings["histories"], "runs": settings["runs"],
              "judges": settings["judges"]}
    outcome = run_job(builder, job="validate", workspace=resolved, run_id=run_id, inputs=inputs, context=context,
                      settings={**settings, "seed": seed}, on_event=on_event, max_concurrency=1, resume=resume,
                      database=database)
    values = outcome.values
    return ValidationResult(**job_run(outcome), measure=values["measure"], configurations=values["configurations"],
                            kendall_tau_b=values["kendall_tau_b"], interval=values["interval"],
                            p_value=values["p_value"], top1_agrees=values["top1_agrees"], verdict=values["verdict"],
                            judge_agreement=values.get("judge_agreement") or {},
                            report={kind: Path(path) for kind, path in values["report"].items()})


def _checked_settings(workspace: Workspace, synthetic: str | Path, human: str | Path,
                      retrievers: Sequence[str] | None, histories: Sequence[str] | None, runs: Sequence[str | Path],
                      rerank: str | None, rerank_depth: int, measure: str, depth: int, split: str,
                      judges: Sequence[str], judge_depth: int, bootstrap: int, llm: str) -> dict[str, Any]:
    """Every setting checked, both sets loaded and their corpora compared, before any work starts."""

    retrievers = list(dict.fromkeys(retrievers if retrievers is not None else () if runs else DEFAULT_RETRIEVERS))
    run_files = [str(Path(path).resolve()) for path in runs]
    for path in run_files:
        if not Path(path).is_file():
            raise InputError(f"--run {path}: file not found")
    specs = [parse_retriever(spec) for spec in retrievers]
    names = checked_measures([measure])
    if len(names) != 1:
        raise InputError(f"--measure {measure!r}: give one measure to rank the configurations by")
    check_at_least(1, depth=depth, rerank_depth=rerank_depth, judge_depth=judge_depth, bootstrap=bootstrap)
    check_models(llm)
    judge_specs = checked_judges(judges) if judges else []
    loaded = cached_benchmark(resolved_path(str(synthetic)), workspace, split)
    modes = list(dict.fromkeys(histories or default_histories(loaded)))
    history_modes = [parse_history_mode(mode) for mode in modes]
    if specs:
        require_oracle_rewrites(loaded, history_modes)
    configurations = expand_configurations(specs, history_modes, rerank is not None) if specs else []
    run_file_configurations(run_files, taken={configuration.name for configuration in configurations})
    if len(configurations) + len(run_files) < MIN_CONFIGURATIONS:
        raise InputError(f"rank at least {MIN_CONFIGURATIONS} configurations (--retriever, --history, --run); "
                         f"{len(configurations) + len(run_files)} given")
    human_path = Path(human).resolve()
    check_same_corpus(loaded, str(human_path), workspace, split)
    return {"synthetic": resolved_path(str(synthetic)), "human": str(human_path), "retrievers": retrievers,
            "histories": modes, "runs": run_files, "rerank": rerank, "rerank_depth": rerank_depth,
            "measure": names[0], "depth": depth, "split": split, "judges": judge_specs, "judge_depth": judge_depth,
            "bootstrap": bootstrap, "llm": llm}


def estimate_validation(synthetic: str | Path, *, human: str | Path, retrievers: Sequence[str] | None = None,
                        histories: Sequence[str] | None = None, runs: Sequence[str | Path] = (),
                        rerank: str | None = None, measure: str = DEFAULT_MEASURE, split: str = "test",
                        judges: Sequence[str] = (), judge_depth: int = DEFAULT_JUDGE_DEPTH, llm: str = BASELINE,
                        workspace: str | Path | None = None) -> CostEstimate:
    """The configurations a validation would rank on both sets, and the judges' cost: each judge
    reads every gold pair of the human set and as many non-gold ones (at most), in batches."""

    resolved = workspace_for(workspace)
    settings = _checked_settings(resolved, synthetic, human, retrievers, histories, runs, rerank, DEFAULT_RERANK_DEPTH,
                                 measure, 1000, split, judges, judge_depth, DEFAULT_BOOTSTRAP, llm)
    loaded = cached_benchmark(settings["synthetic"], resolved, split)
    documents = corpus_documents(loaded)
    if Path(settings["human"]).is_file():
        gold = {question.id: question.gold_ids for question in read_labelled_questions(settings["human"])}
    else:
        human_set = cached_benchmark(settings["human"], resolved, split)
        gold = {query_id: [doc for doc, rel in judged.items() if rel > 0] for query_id, judged in human_set.qrels.items()}
    pairs = {query_id: 2 * len([doc for doc in ids if doc in documents]) for query_id, ids in gold.items()}
    calls = sum(-(-count // JUDGE_BATCH) for count in pairs.values())
    mean_passage = (sum(len(document_text(*text)) for text in documents.values()) / len(documents)) if documents else 0
    input_tokens = estimate_tokens("x" * int(sum(pairs.values()) * mean_passage + calls * 1200))
    configurations = expand_configurations([parse_retriever(spec) for spec in settings["retrievers"]],
                                           [parse_history_mode(mode) for mode in settings["histories"]],
                                           rerank is not None) if settings["retrievers"] else []
    names = [*(Path(path).name for path in settings["runs"]), *(c.name for c in configurations)]
    notes = [f"configurations: {', '.join(names)}, ranked by {settings['measure']} on both sets",
             f"{len(loaded.queries):,} synthetic queries; {len(gold):,} labelled questions with "
             f"{sum(pairs.values()) // 2:,} gold pairs",
             "retrieval itself calls no model (except a 'rewrite' history)"]
    return priced(f"{len(names)} configurations × 2 sets" + (f", {len(settings['judges'])} judge(s) on at most "
                                                              f"{sum(pairs.values()):,} pairs" if settings["judges"] else ""),
                  [(spec, calls, input_tokens, JUDGE_OUTPUT_TOKENS * sum(pairs.values()))
                   for spec in settings["judges"] if not spec.startswith("qrels:")], notes)
