"""``benchsmith.robustness``: how far measures move on a paraphrase run's test sets R1..Rn, and
how much of that is unjudged documents (ECAsT): evaluate, pool the unjudged top documents,
re-judge them with a judge ensemble (CAsT's 0-4 scale, the audit's vote rule), recompute."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from benchsmith.agents.defaults import StructuredOutput
from benchsmith.agents.seam.backends import estimate_tokens
from benchsmith.agents.seam.models import BASELINE
from benchsmith.evals.defaults import DEFAULT_MIN_VOTES, DEFAULT_SIGNIFICANCE_RESAMPLES
from benchsmith.graphs.contexts.evaluate import DEFAULT_DEPTH
from benchsmith.graphs.contexts.robustness import DEFAULT_JUDGE_DEPTH, DEFAULT_MEASURES, RobustnessContext
from benchsmith.graphs.robustness.graph import builder
from benchsmith.graphs.robustness.inputs import benchmark_qrels, test_set_names
from benchsmith.graphs.robustness.state import AUGMENTED_QRELS_FILE
from benchsmith.graphs.runtime.settings import accepts_old_setting_names, check_bounds, settings_given
from benchsmith.jobs.common import (
    CostEstimate,
    EventHandler,
    JobRun,
    check_models,
    estimate_of,
    job_result,
    priced,
    run_settled,
    stop_if_dry_run,
)
from benchsmith.jobs.defaults import ROBUSTNESS_HISTORIES, ROBUSTNESS_RETRIEVERS
from benchsmith.jobs.evaluate import SIGNIFICANCE_TESTS, checked_measures
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.trec import read_trec_run
from benchsmith.stores.persistence.jsonl import read_json, read_json_object
from benchsmith.stores.persistence.runs import RunDirectory, is_valid_run_id
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.defaults import DEFAULT_EMBEDDER
from benchsmith.tools.retrieval.outside_retrievers import spec_for
from benchsmith.tools.retrieval.query_building import parse_history_mode
from benchsmith.tools.retrieval.retriever_specs import check_outside_retrievers, parse_retriever

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
        return read_json_object(self.report["results"])


@accepts_old_setting_names
def robustness(
    paraphrase_run: str | Path,
    *,
    retrievers: Sequence[str | Any] | None = None,
    histories: Sequence[str] = ROBUSTNESS_HISTORIES,
    runs: Mapping[str, str | Path] | None = None,
    qrels: str | Path | None = None,
    judges: Sequence[str] = (BASELINE,),
    run_id: str | None = None,
    on_event: EventHandler | None = None,
    resume: str | None = None,
    seed: int = 0,
    measures: tuple[str, ...] = DEFAULT_MEASURES,
    judge_depth: int = DEFAULT_JUDGE_DEPTH,
    min_votes: int = DEFAULT_MIN_VOTES,
    corpus: str | None = None,
    concurrency: int = 4,
    significance_test: Literal["randomization", "t-test"] = "randomization",
    resamples: int = DEFAULT_SIGNIFICANCE_RESAMPLES,
    depth: int = DEFAULT_DEPTH,
    embedder: str = DEFAULT_EMBEDDER,
    llm: str = BASELINE,
    rate_limit: float | None = None,
    timeout_s: float = 60.0,
    max_attempts: int = 6,
    structured_output: StructuredOutput = "auto",
    workspace: str | None = None,
    chroma_host: str | None = None,
    database: str | None = None,
) -> RobustnessResult:
    """Score the original and the test sets of ``paraphrase_run`` (a run id or directory): with
    its corpus, by retrieval (``retrievers`` × ``histories``, default bm25 × full and oracle);
    without (CAsT), from ``runs`` = ``{"original": FILE, "R1": FILE, ...}`` (TREC run files) with
    ``qrels`` (TREC) and, to re-judge, ``corpus`` (BEIR corpus.jsonl of their documents); every
    setting of :class:`RobustnessContext` is a keyword argument too. With ``database`` (a
    postgresql:// URL) its checkpoints, run record and model cache are kept in PostgreSQL."""
    settings = settings_given(RobustnessContext, locals())

    resolved = Workspace.resolve(settings.workspace)
    inputs, context = _checked_inputs(resolved, paraphrase_run, retrievers, histories, runs, qrels, judges, settings)
    stop_if_dry_run(lambda: _estimate(inputs, context))
    outcome = run_settled(
        builder, "robustness", resolved, inputs, context, run_id=run_id, on_event=on_event, resume=resume
    )
    return job_result(RobustnessResult, outcome, augmented_qrels=outcome.run_dir.file(AUGMENTED_QRELS_FILE))


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


def _checked_inputs(
    workspace: Workspace,
    paraphrase_run: str | Path,
    retrievers: Sequence[str | Any] | None,
    histories: Sequence[str],
    runs: Mapping[str, str | Path] | None,
    qrels: str | Path | None,
    judges: Sequence[str],
    settings: RobustnessContext,
) -> tuple[dict[str, Any], RobustnessContext]:
    """The run's inputs, and its settings with the measures checked and the corpus made absolute:
    every one checked before any work starts."""
    check_bounds(settings)
    directory = paraphrase_run_directory(workspace, paraphrase_run)
    sets = test_set_names(directory)
    if not judges:
        raise InputError("give at least one --judge")
    if len(set(judges)) != len(judges):
        raise InputError("each --judge may be given once")
    check_models(settings.llm, *judges)
    if settings.significance_test not in SIGNIFICANCE_TESTS:
        raise InputError(
            f"--significance-test must be one of {', '.join(SIGNIFICANCE_TESTS)}, got {settings.significance_test!r}"
        )
    names = checked_measures(list(settings.measures or DEFAULT_MEASURES))  # none given: the defaults
    benchmark_qrels(directory, str(Path(qrels).resolve()) if qrels else None)
    given = {name: str(Path(path).resolve()) for name, path in (runs or {}).items()}
    if given:
        if retrievers:
            raise InputError(
                "give either --retriever (to retrieve over the benchmark's corpus) or --run files, not both"
            )
        if "original" not in given or len(given) < 2:
            raise InputError(
                "--run needs original=FILE and at least one test set, e.g. --run original=a.trec --run R1=b.trec"
            )
        for name, path in given.items():
            if name not in sets:
                raise InputError(
                    f"--run {name}=...: the paraphrase run has no test set {name!r} (it has {', '.join(sets)})"
                )
            if not read_trec_run(path):
                raise InputError(f"--run {name}={path}: no run lines")
        retrievers, histories = [], []
    else:
        corpus_file = directory / "test-sets" / "original" / "corpus.jsonl"
        if not corpus_file.exists():
            raise InputError(
                f"{paraphrase_run}: the benchmark has no corpus here (TREC CAsT): score your system on "
                "the test sets' raw.tsv or self-contained.tsv and give the run files: --run original=FILE "
                "--run R1=FILE ... --qrels FILE"
            )
        retrievers = [spec_for(retriever) for retriever in retrievers or ROBUSTNESS_RETRIEVERS]  # objects: by name
        check_outside_retrievers([parse_retriever(spec) for spec in retrievers])
        for mode in histories:
            parse_history_mode(mode)
        if not histories:
            raise InputError("give at least one --history")
    check_vote_rule(judges, settings.min_votes)
    inputs = {
        "paraphrase_run": str(directory),
        "judges": list(judges),
        "retrievers": list(retrievers),
        "histories": list(histories),
        "runs": given,
        "qrels": str(Path(qrels).resolve()) if qrels else None,
    }
    corpus = str(Path(settings.corpus).resolve()) if settings.corpus else None
    return inputs, replace(settings, measures=tuple(names), corpus=corpus)


def check_vote_rule(judges: Sequence[str], min_votes: int) -> None:
    """Refuse a vote rule the judges can never meet: with fewer judges than ``min_votes`` nothing
    would be confirmed, and re-judging would change nothing while looking done."""
    if min_votes > len(judges):
        given = f"{len(judges)} judge{'s' if len(judges) != 1 else ''} ({', '.join(judges)})"
        raise InputError(
            f"--min-votes {min_votes} needs at least {min_votes} judges, but {given} can never confirm "
            f"a grade: add --judge specs until there are {min_votes} (the audit's rule), or pass "
            f"--min-votes {len(judges)} to accept {'a single judge' if len(judges) == 1 else 'fewer'} "
            "votes unchecked"
        )


estimate_robustness = estimate_of(
    "estimate_robustness",
    robustness,
    CostEstimate,
    """An upper bound of the judging cost of a robustness run (:func:`robustness`'s arguments): every
    judged turn × every run × k documents, all unjudged (overlapping and judged documents make the real
    count lower).""",
)


def _estimate(inputs: dict[str, Any], settings: RobustnessContext) -> CostEstimate:
    """:func:`estimate_robustness` once the call is checked."""
    judges, judge_depth, runs = inputs["judges"], settings.judge_depth, inputs["runs"]
    directory = Path(inputs["paraphrase_run"])
    sets = [name for name in test_set_names(directory) if not runs or name in runs]
    judged_turns = len(benchmark_qrels(directory, inputs["qrels"]))
    configurations = 1 if runs else len(inputs["retrievers"]) * len(inputs["histories"])
    documents = judged_turns * len(sets) * configurations * judge_depth
    input_tokens = documents * estimate_tokens("x" * (ESTIMATE_DOCUMENT_CHARS + 1200))
    notes = [
        f"{len(sets)} test sets × {configurations} configuration(s) × {judged_turns:,} judged turns × top "
        f"{judge_depth}: at most {documents:,} documents to judge, fewer where runs overlap or the qrels judge them",
        "retrieval itself calls no model (except a 'rewrite' history)",
    ]
    return priced(
        f"re-judging at most {documents:,} documents × {len(judges)} judge(s)",
        [(judge, documents, input_tokens, documents * GRADE_OUTPUT_TOKENS) for judge in judges],
        notes,
    )
