"""``benchsmith.robustness``: how far measures move on a paraphrase run's test sets R1..Rn, and
how much of that is unjudged documents (ECAsT): evaluate, pool the unjudged top documents,
re-judge them with a judge ensemble (CAsT's 0-4 scale, the audit's vote rule), recompute."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchsmith.agents.models import BASELINE, estimate_tokens
from benchsmith.evals.audit_verdicts import DEFAULT_MIN_VOTES
from benchsmith.graphs.jobs.common import (CostEstimate, dry_run, EventHandler, JobRun, check_at_least, check_models,
                                           checked_run_id, job_run, priced, workspace_for)
from benchsmith.graphs.jobs.defaults import ROBUSTNESS_HISTORIES as DEFAULT_HISTORIES
from benchsmith.graphs.jobs.defaults import ROBUSTNESS_JUDGE_DEPTH as DEFAULT_JUDGE_DEPTH
from benchsmith.graphs.jobs.defaults import ROBUSTNESS_MEASURES as DEFAULT_MEASURES
from benchsmith.graphs.jobs.defaults import ROBUSTNESS_RETRIEVERS as DEFAULT_RETRIEVERS
from benchsmith.graphs.jobs.evaluate import SIGNIFICANCE_TESTS, checked_measures
from benchsmith.graphs.robustness import (AUGMENTED_QRELS_FILE, RobustnessContext, benchmark_qrels, builder,
                                          test_set_names)
from benchsmith.graphs.runtime.runner import run_job
from benchsmith.stores.errors import InputError
from benchsmith.stores.jsonl import read_json
from benchsmith.stores.postgres import database_url
from benchsmith.stores.runs import RunDirectory, is_valid_run_id
from benchsmith.stores.trec import read_trec_run
from benchsmith.stores.workspace import Workspace
from benchsmith.tools.embedding import DEFAULT_EMBEDDER
from benchsmith.tools.query_building import parse_history_mode
from benchsmith.tools.retriever_specs import parse_retriever

GRADE_OUTPUT_TOKENS = 60
ESTIMATE_DOCUMENT_CHARS = 1500


@dataclass(frozen=True)
class RobustnessResult(JobRun):
    sets: list[str] = field(default_factory=list)  # original, R1, ...
    pooled: int = 0  # unjudged top-k documents pooled
    confirmed: int = 0  # judgments appended to the augmented qrels
    # {configuration: {"before" | "after": {test set: {measure: mean}}}}
    means: dict[str, dict[str, dict[str, dict[str, float]]]] = field(default_factory=dict)
    report: dict[str, Path] = field(default_factory=dict)  # markdown, html, results (robustness.json)
    augmented_qrels: Path | None = None  # BEIR TSV; augmented_qrels.trec beside it

    def results(self) -> dict[str, Any]:
        return json.loads(self.report["results"].read_text(encoding="utf-8"))


def robustness(paraphrase_run: str | Path, *, retrievers: Sequence[str] | None = None,
               histories: Sequence[str] = DEFAULT_HISTORIES, runs: Mapping[str, str | Path] | None = None,
               qrels: str | Path | None = None, corpus: str | Path | None = None,
               judges: Sequence[str] = (BASELINE,), judge_depth: int = DEFAULT_JUDGE_DEPTH,
               min_votes: int = DEFAULT_MIN_VOTES, measures: Sequence[str] | None = None, depth: int = 1000,
               llm: str = BASELINE, embedder: str = DEFAULT_EMBEDDER, test: str = "randomization", seed: int = 0,
               concurrency: int = 4, requests_per_second: float | None = None, timeout_s: float = 60.0,
               max_attempts: int = 6, structured_output: str = "auto", workspace: str | Path | None = None,
               chroma_host: str | None = None, database: str | None = None, run_id: str | None = None,
               on_event: EventHandler | None = None, resume: str | None = None) -> RobustnessResult:
    """Score the original and the test sets of ``paraphrase_run`` (a run id or directory): with
    its corpus, by retrieval (``retrievers`` × ``histories``, default bm25 × full and oracle);
    without (CAsT), from ``runs`` = ``{"original": FILE, "R1": FILE, ...}`` (TREC run files) with
    ``qrels`` (TREC) and, to re-judge, ``corpus`` (BEIR corpus.jsonl of their documents). With
    ``database`` (a postgresql:// URL) its checkpoints, run record and model cache are kept in
    PostgreSQL."""

    resolved = workspace_for(workspace)
    settings = _checked_settings(resolved, paraphrase_run, retrievers, histories, runs, qrels, corpus, judges,
                                 judge_depth, min_votes, measures, depth, llm, test)
    check_at_least(1, concurrency=concurrency)
    database = database_url(database)
    run_id = checked_run_id(run_id, "robustness")
    context = RobustnessContext(
        workspace=str(resolved.root), chroma_host=chroma_host, measures=tuple(settings["measures"]),
        judge_depth=judge_depth, min_votes=min_votes, corpus=settings["corpus"], depth=depth, embedder=embedder,
        llm=llm, concurrency=concurrency, significance_test=test, seed=seed,  # type: ignore[arg-type]
        requests_per_second=requests_per_second, timeout_s=timeout_s, max_attempts=max_attempts,
        structured_output=structured_output, database=database)
    inputs = {"run_id": run_id, "paraphrase_run": settings["paraphrase_run"], "judges": settings["judges"],
              "retrievers": settings["retrievers"], "histories": settings["histories"], "runs": settings["runs"],
              "qrels": settings["qrels"]}
    context.model_settings()  # an impossible model setting stops here, before the run exists
    outcome = run_job(builder, job="robustness", workspace=resolved, run_id=run_id, inputs=inputs, context=context,
                      settings=settings, on_event=on_event, max_concurrency=concurrency, resume=resume,
                      database=database)
    values = outcome.values
    return RobustnessResult(**job_run(outcome), sets=values["sets"], pooled=values["pooled"],
                            confirmed=values["confirmed"], means=values["means"],
                            report={kind: Path(path) for kind, path in values["report"].items()},
                            augmented_qrels=outcome.run_dir.file(AUGMENTED_QRELS_FILE))


def paraphrase_run_directory(workspace: Workspace, paraphrase_run: str | Path) -> Path:
    """The directory of a paraphrase run given by id or path; an InputError when it is none."""

    path = Path(paraphrase_run)
    if not path.is_dir() and is_valid_run_id(str(paraphrase_run)):
        path = RunDirectory(workspace, str(paraphrase_run)).path
    record = path / "run.json"
    if not record.is_file() or not isinstance(job := read_json(record), dict) or job.get("job") != "paraphrase":
        raise InputError(f"{paraphrase_run}: not a paraphrase run (a run id or directory of `benchsmith paraphrase`)")
    if not (path / "test-sets.json").is_file():
        raise InputError(f"{paraphrase_run}: the paraphrase run has not finished: resume it first")
    return path.resolve()


def _checked_settings(workspace: Workspace, paraphrase_run: str | Path, retrievers: Sequence[str] | None,
                      histories: Sequence[str], runs: Mapping[str, str | Path] | None, qrels: str | Path | None,
                      corpus: str | Path | None, judges: Sequence[str], judge_depth: int, min_votes: int,
                      measures: Sequence[str] | None, depth: int, llm: str, test: str) -> dict[str, Any]:
    directory = paraphrase_run_directory(workspace, paraphrase_run)
    sets = test_set_names(directory)
    if not judges:
        raise InputError("give at least one --judge")
    if len(set(judges)) != len(judges):
        raise InputError("each --judge may be given once")
    check_models(llm, *judges)
    check_at_least(1, judge_depth=judge_depth, min_votes=min_votes, depth=depth)
    if test not in SIGNIFICANCE_TESTS:
        raise InputError(f"--test must be one of {', '.join(SIGNIFICANCE_TESTS)}, got {test!r}")
    names = checked_measures(list(measures or DEFAULT_MEASURES))
    benchmark_qrels(directory, str(Path(qrels).resolve()) if qrels else None)
    given = {name: str(Path(path).resolve()) for name, path in (runs or {}).items()}
    if given:
        if retrievers:
            raise InputError("give either --retriever (to retrieve over the benchmark's corpus) or --run files, "
                             "not both")
        if "original" not in given or len(given) < 2:
            raise InputError("--run needs original=FILE and at least one test set, e.g. --run original=a.trec "
                             "--run R1=b.trec")
        for name, path in given.items():
            if name not in sets:
                raise InputError(f"--run {name}=...: the paraphrase run has no test set {name!r} "
                                 f"(it has {', '.join(sets)})")
            if not read_trec_run(path):
                raise InputError(f"--run {name}={path}: no run lines")
        retrievers, histories = [], []
    else:
        corpus_file = directory / "test-sets" / "original" / "corpus.jsonl"
        if not corpus_file.exists():
            raise InputError(f"{paraphrase_run}: the benchmark has no corpus here (TREC CAsT): score your system on "
                             "the test sets' raw.tsv or self-contained.tsv and give the run files: --run original=FILE "
                             "--run R1=FILE ... --qrels FILE")
        retrievers = list(retrievers or DEFAULT_RETRIEVERS)
        for spec in retrievers:
            parse_retriever(spec)
        for mode in histories:
            parse_history_mode(mode)
        if not histories:
            raise InputError("give at least one --history")
    check_vote_rule(judges, min_votes)
    return {"paraphrase_run": str(directory), "retrievers": list(retrievers), "histories": list(histories),
            "runs": given, "qrels": str(Path(qrels).resolve()) if qrels else None,
            "corpus": str(Path(corpus).resolve()) if corpus else None, "judges": list(judges),
            "judge_depth": judge_depth, "min_votes": min_votes, "measures": names, "depth": depth, "llm": llm,
            "test": test}


@dry_run
def check_vote_rule(judges: Sequence[str], min_votes: int) -> None:
    """Refuse a vote rule the judges can never meet: with fewer judges than ``min_votes`` nothing
    would be confirmed, and re-judging would change nothing while looking done."""
    if min_votes > len(judges):
        given = f"{len(judges)} judge{'s' if len(judges) != 1 else ''} ({', '.join(judges)})"
        raise InputError(f"--min-votes {min_votes} needs at least {min_votes} judges, but {given} can never confirm "
                         f"a grade: add --judge specs until there are {min_votes} (the audit's rule), or pass "
                         f"--min-votes {len(judges)} to accept {'a single judge' if len(judges) == 1 else 'fewer'} "
                         "votes unchecked")


def estimate_robustness(paraphrase_run: str | Path, *, runs: Mapping[str, str | Path] | None = None,
                        retrievers: Sequence[str] | None = None, histories: Sequence[str] = DEFAULT_HISTORIES,
                        qrels: str | Path | None = None, judges: Sequence[str] = (BASELINE,),
                        judge_depth: int = DEFAULT_JUDGE_DEPTH,
                        workspace: str | Path | None = None) -> CostEstimate:
    """An upper bound of the judging cost: every judged turn × every run × k documents, all
    unjudged (overlapping and judged documents make the real count lower)."""

    check_models(*judges)
    directory = paraphrase_run_directory(workspace_for(workspace), paraphrase_run)
    sets = [name for name in test_set_names(directory) if not runs or name in runs]
    judged_turns = len(benchmark_qrels(directory, str(Path(qrels).resolve()) if qrels else None))
    configurations = 1 if runs else len(list(retrievers or DEFAULT_RETRIEVERS)) * len(histories)
    documents = judged_turns * len(sets) * configurations * judge_depth
    input_tokens = documents * estimate_tokens("x" * (ESTIMATE_DOCUMENT_CHARS + 1200))
    notes = [f"{len(sets)} test sets × {configurations} configuration(s) × {judged_turns:,} judged turns × top "
             f"{judge_depth}: at most {documents:,} documents to judge, fewer where runs overlap or the qrels judge them",
             "retrieval itself calls no model (except a 'rewrite' history)"]
    return priced(f"re-judging at most {documents:,} documents × {len(judges)} judge(s)",
                  [(judge, documents, input_tokens, documents * GRADE_OUTPUT_TOKENS) for judge in judges], notes)
