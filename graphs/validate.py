"""Validation of a benchmark against the user's own labelled questions: does it rank retriever
configurations as they do, and do the judges agree with the human labels?

    plan ─→ evaluate (one set per step: synthetic, then human; `benchsmith evaluate`) ─┐
               ↑___________________ (a set left) _____________________________________│
    ─→ pool ─→ judge ─→ report ─→ END

``plan`` checks that both sets share one corpus. The user may have labelled over the collection
the benchmark was synthesized from: judgments of the chunks the benchmark holds out (its
unanswerable and partial turns' chunks and their near-duplicates, ``Benchmark.held_out``) are
dropped, and so are questions left without gold (``held-out-labels.json`` says which). With a
labelled JSONL, or when anything was dropped, it writes the human set as a BEIR directory over
the synthetic benchmark's corpus, ``human/``, so retrievers see the same documents on both sets.
``evaluate`` scores
every configuration on one set with the evaluate job (its own resumable run, named
``<run id>-synthetic`` or ``<run id>-human``, reused when finished), as the robustness graph
does: the evaluate job already checks, retrieves, fuses, reranks and measures; calling it
keeps one implementation of each. ``pool`` (with judges) writes the (question, chunk) pairs to
judge once: every gold pair of the human set and a seeded sample, as many, of the non-gold
chunks in the top ``judge_depth`` of the configurations' runs on it. ``judge`` has each judge
label them relevant or not (the pool judge of `select`), one record per judge and question.
``report`` ranks the configurations on both sets by the measure, computes Kendall's τ-b, its
bootstrap interval over the queries, which pairs of configurations the human set's queries
cannot separate, the judges' agreement with the human labels, and writes ``validity.json`` and
the report.

State holds ids, settings and small results; scores and verdicts live in files.
"""

from __future__ import annotations

import concurrent.futures
import contextvars
import random
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NotRequired

import numpy as np
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from benchsmith.agents.label_seam import LABELS_PREFIX
from benchsmith.agents.pool_judge import PoolJudge
from benchsmith.evals.measures.intervals import DEFAULT_CONFIDENCE
from benchsmith.evals.measures.robustness import top_k
from benchsmith.evals.measures.separability import Separation, separations
from benchsmith.evals.measures.validity import (
    configuration_rows,
    kendall_tau_b,
    paired_configurations,
    per_query_matrix,
    relevance_agreement,
    separation_pairs,
    tau_interval,
    top1_agrees,
    top_not_separated,
    verdict,
)
from benchsmith.evals.reports.validity_report import validity_notes, validity_report_files
from benchsmith.graphs.contexts.evaluate import EvaluationContext
from benchsmith.graphs.contexts.validate import ValidationContext
from benchsmith.graphs.evaluate import EvaluationInput, evaluate_as_child
from benchsmith.graphs.runtime.corpus_indexes import (
    cached_benchmark,
    corpus_documents,
    corpus_statistics,
    document_text,
)
from benchsmith.graphs.runtime.job_runtime import JobRuntime
from benchsmith.graphs.runtime.progress import progress_reporter
from benchsmith.graphs.runtime.resources import run_seam
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.beir import Benchmark
from benchsmith.stores.formats.benchmark_files import write_beir_qrels
from benchsmith.stores.formats.labelled_questions import read_labelled_questions
from benchsmith.stores.formats.trec import read_trec_run
from benchsmith.stores.persistence.files import atomic_writer, write_files_atomic, write_json_atomic
from benchsmith.stores.persistence.jsonl import (
    RecordLog,
    load_jsonl,
    read_json,
    read_jsonl,
    record_log,
    write_jsonl_atomic,
)
from benchsmith.tools.corpus.held_out import HeldOutLabels, check_judged_ids, drop_held_out
from benchsmith.tools.retrieval.embedded_text import EMBEDDED_TEXT_NOTE

SYNTHETIC, HUMAN = "synthetic", "human"
SETS = (SYNTHETIC, HUMAN)
EVALUATIONS_FILE, PAIRS_FILE, JUDGMENTS_FILE = "evaluations.jsonl", "judge-pairs.jsonl", "judgments.jsonl"
HUMAN_DIR = "human"  # the human set written as a BEIR directory over the synthetic corpus (a JSONL, or held-out ids)
HELD_OUT_FILE = "held-out-labels.json"  # what the human set's judgments lost to the benchmark's held-out chunks
JUDGE_BATCH = 8  # passages per judge call
IDS_SHOWN = 5  # ids named in a mismatch message


class ValidationInput(TypedDict):
    run_id: str
    synthetic: str  # anything `evaluate` accepts: a synthesis run id or directory, a BEIR directory
    human: str  # a BEIR directory over the same corpus, or a labelled JSONL (stores/formats/labelled_questions.py)
    retrievers: list[str]
    histories: list[str]  # on the synthetic set; empty: oracle when it has rewrites, else full
    runs: NotRequired[list[str]]  # TREC run files ranking the queries of both sets
    judges: NotRequired[list[str]]


class ValidationOutput(TypedDict, total=False):
    run_id: str
    measure: str
    configurations: list[dict[str, Any]]
    kendall_tau_b: float | None
    interval: dict[str, float | None]
    p_value: float | None
    top1_agrees: bool
    verdict: dict[str, str]  # {label, text}: evals.measures.validity.Verdict
    judge_agreement: dict[str, dict[str, Any]]
    separability: dict[
        str, Any
    ]  # {queries, resamples, seed, confidence, pairs: [evals.measures.separability.Separation]}
    held_out: dict[str, Any]  # what the human set lost to the benchmark's held-out chunks (tools/corpus/held_out.py)
    report: dict[str, str]  # {"markdown", "html", "results"}: paths


OUTPUT_KEYS = (
    "measure",
    "configurations",
    "kendall_tau_b",
    "interval",
    "p_value",
    "top1_agrees",
    "verdict",
    "judge_agreement",
    "separability",
    "held_out",
)  # of validity.json, returned as they are there


class ValidationState(ValidationInput, ValidationOutput, total=False):  # type: ignore[misc]  # LangGraph's state merges input and output: a key required on input may be left out of the output
    human_benchmark: str  # the BEIR directory the human set is evaluated on
    synthetic_histories: list[str]
    human_histories: list[str]
    pairs: int


# ---------------------------------------------------------------------------------------
# Inputs.

job = JobRuntime(ValidationContext)  # the runtime's settings, workspace and run directories


def default_histories(synthetic: Benchmark) -> list[str]:
    """``oracle`` (the self-contained rewrite, comparable to a standalone question) when every
    synthetic query carries one, else ``full``."""
    return ["oracle"] if synthetic.queries and all(query.rewrite for query in synthetic.queries) else ["full"]


def _shown(ids: Sequence[str]) -> str:
    listed = ", ".join(repr(item) for item in ids[:IDS_SHOWN])
    return f"{len(ids)}: {listed}{', …' if len(ids) > IDS_SHOWN else ''}"


def check_same_corpus(synthetic: Benchmark, human: str, workspace: Any, split: str) -> HumanLabels:
    """The human set is over the synthetic benchmark's corpus, or over the collection it was
    synthesized from: every chunk it judges is a document of the corpus or a chunk the benchmark
    holds out (``Benchmark.held_out``: held-out chunks and their near-duplicates), and a BEIR
    directory's corpus is the benchmark's, held-out chunks at most added. Returns the judgments
    without the held-out chunks (tools/corpus/held_out.drop_held_out) and what they lost; anything else
    stops with an InputError naming the file, the line or question and the ids (the first few
    and the count)."""
    documents, held_out = corpus_documents(synthetic), synthetic.held_out
    path = Path(human)
    if path.is_file():
        questions = read_labelled_questions(path)
        check_judged_ids(
            path,
            [(f"line {q.line}, question {q.id!r}", chunk_id) for q in questions for chunk_id in q.gold_ids],
            documents,
            held_out,
            synthetic.corpus_path,
        )
        qrels, dropped = drop_held_out({q.id: {chunk_id: 1 for chunk_id in q.gold_ids} for q in questions}, held_out)
        return HumanLabels(
            qrels,
            dropped,
            [{"_id": q.id, "text": q.question} for q in questions if q.id not in dropped.questions_left_out],
        )
    if not path.is_dir():
        raise InputError(f"--human {human}: not a BEIR directory or a labelled JSONL file")
    human_set = cached_benchmark(str(path.resolve()), workspace, split)
    human_documents = corpus_documents(human_set)
    _check_corpus_ids(human, synthetic, human_documents, documents, held_out)
    check_judged_ids(
        human_set.qrels_file or path,
        [(f"question {query_id!r}", doc_id) for query_id, judged in human_set.qrels.items() for doc_id in judged],
        documents,
        held_out,
        synthetic.corpus_path,
    )
    qrels, dropped = drop_held_out(
        human_set.qrels, held_out, documents=sum(1 for doc_id in held_out if doc_id in human_documents)
    )
    queries = [record for _, record in read_jsonl(human_set.queries_file)] if dropped else []
    return HumanLabels(
        qrels, dropped, [record for record in queries if str(record.get("_id")) not in dropped.questions_left_out]
    )


@dataclass(frozen=True)
class HumanLabels:
    """The human set over the synthetic benchmark's corpus: its judgments without held-out chunks,
    what they lost, and the queries to write (with a labelled JSONL, or when anything was dropped)."""

    qrels: dict[str, dict[str, int]]
    dropped: HeldOutLabels
    queries: list[dict[str, Any]]


def _check_corpus_ids(
    human: str,
    synthetic: Benchmark,
    human_documents: Mapping[str, Any],
    documents: Mapping[str, Any],
    held_out: Mapping[str, str],
) -> None:
    """A human BEIR corpus holds every document of the synthetic one, and otherwise held-out chunks only."""
    only_human = [doc_id for doc_id in human_documents if doc_id not in documents and doc_id not in held_out]
    only_synthetic = [doc_id for doc_id in documents if doc_id not in human_documents]
    if only_human or only_synthetic:
        parts = ([f"in {human} only, {_shown(only_human)}"] if only_human else []) + (
            [f"in {synthetic.corpus_path} only, {_shown(only_synthetic)}"] if only_synthetic else []
        )
        raise InputError(
            f"--human {human}: the two sets have different corpora (document ids {'; '.join(parts)}); "
            "both must be over the same collection"
        )


def human_directory(runtime: Runtime[ValidationContext], state: ValidationState) -> str:
    """The human set as a BEIR directory: the given one, or ``human/`` in the run directory (plan decides)."""
    if state.get("human_benchmark"):
        return state["human_benchmark"]
    path = Path(state["human"])  # a run planned before plan recorded it
    return str(path) if path.is_dir() else str(job.run_dir(runtime, state["run_id"]).file(HUMAN_DIR))


def write_human_benchmark(directory: Path, labels: HumanLabels, corpus_file: Path, split: str) -> None:
    """The human set as a BEIR directory whose ``corpus.jsonl`` is the synthetic benchmark's,
    copied byte for byte (the same corpus fingerprint, so both sets share one dense index), its
    judgments without held-out chunks."""
    directory.mkdir(parents=True, exist_ok=True)
    with (
        corpus_file.open(encoding="utf-8", newline="") as reader,
        atomic_writer(directory / "corpus.jsonl", newline="") as writer,
    ):
        shutil.copyfileobj(reader, writer)
    write_jsonl_atomic(directory / "queries.jsonl", labels.queries)
    write_beir_qrels(
        directory / "qrels" / f"{split}.tsv",
        [
            (query_id, doc_id, relevance)
            for query_id, judged in labels.qrels.items()
            for doc_id, relevance in judged.items()
        ],
    )


def _evaluation_log(runtime: Runtime[ValidationContext], run_id: str) -> RecordLog:
    return record_log(job.run_dir(runtime, run_id).file(EVALUATIONS_FILE), "set")


def _judgment_log(runtime: Runtime[ValidationContext], run_id: str) -> RecordLog:
    return record_log(job.run_dir(runtime, run_id).file(JUDGMENTS_FILE), "item")


def _evaluations(runtime: Runtime[ValidationContext], run_id: str) -> dict[str, dict[str, Any]]:
    return {record["set"]: record for record in load_jsonl(job.run_dir(runtime, run_id).file(EVALUATIONS_FILE))}


# ---------------------------------------------------------------------------------------
# Nodes.


def plan(state: ValidationState, runtime: Runtime[ValidationContext]) -> dict[str, Any]:
    """Check that both sets share a corpus; write the human set as a BEIR directory over the
    synthetic corpus when it is a labelled JSONL or names held-out chunks, and what those lost;
    choose the history modes of each set."""
    context = job.context(runtime)
    workspace = job.workspace(runtime)
    run_dir = job.run_dir(runtime, state["run_id"])
    synthetic = cached_benchmark(state["synthetic"], workspace, context.split)
    split = _human_split(context, state)
    labels = check_same_corpus(synthetic, state["human"], workspace, split)
    human_dir = Path(state["human"])
    if human_dir.is_file() or labels.dropped:
        human_dir = run_dir.file(HUMAN_DIR)
        if not (human_dir / "qrels" / f"{split}.tsv").exists():
            write_human_benchmark(human_dir, labels, synthetic.corpus_path, split)
    write_json_atomic(run_dir.file(HELD_OUT_FILE), labels.dropped.to_json())
    histories = list(state.get("histories") or default_histories(synthetic))
    human = cached_benchmark(str(human_dir), workspace, split)
    # Standalone questions: every history mode but oracle sends the question itself, so one is enough.
    return {
        "synthetic_histories": histories,
        "human_histories": histories if human.conversational else ["full"],
        "human_benchmark": str(human_dir),
    }


def next_step(state: ValidationState, runtime: Runtime[ValidationContext]) -> Literal["evaluate", "pool"]:
    done = _evaluation_log(runtime, state["run_id"]).ids()
    return "pool" if all(name in done for name in SETS) else "evaluate"


def evaluate(state: ValidationState, runtime: Runtime[ValidationContext]) -> dict[str, Any]:
    """Evaluate the next set with the evaluate graph, run as a subgraph (a child run: resumable,
    reused when finished)."""
    context = job.context(runtime)
    log = _evaluation_log(runtime, state["run_id"])
    name = next(name for name in SETS if name not in log.ids())
    synthetic = name == SYNTHETIC
    child_id = f"{state['run_id']}-{name}"
    inputs: EvaluationInput = {
        "run_id": child_id,
        "benchmark": state["synthetic"] if synthetic else human_directory(runtime, state),
        "retrievers": list(state["retrievers"]),
        "runs": list(state.get("runs") or []),
        "histories": list(state["synthetic_histories" if synthetic else "human_histories"]),
    }
    split = context.split if synthetic else _human_split(context, state)
    child_context = EvaluationContext(
        chroma_host=context.chroma_host,
        database=context.database,
        split=split,
        depth=context.depth,
        measures=(context.measure,),
        rerank=context.rerank,
        rerank_depth=context.rerank_depth,
        llm=context.llm,
        embedder=context.embedder,
        concurrency=context.concurrency,
        rate_limit=context.rate_limit,
        timeout_s=context.timeout_s,
        max_attempts=context.max_attempts,
        structured_output=context.structured_output,
    )
    output = evaluate_as_child(
        job.workspace(runtime),
        state["run_id"],
        name,
        inputs,
        child_context,
        settings={
            **inputs,
            "split": split,
            "depth": context.depth,
            "measures": [context.measure],
            "rerank": context.rerank,
            "rerank_depth": context.rerank_depth,
            "llm": context.llm,
            "embedder": context.embedder,
        },
    )
    results_file = Path(output["report"]["results"])
    child_dir = job.run_dir(runtime, child_id)
    log.append_once(
        {
            "set": name,
            "evaluation_run": child_id,
            "results": str(results_file),
            "runs": {c["name"]: str(child_dir.path / c["run_file"]) for c in read_json(results_file)["configurations"]},
        }
    )
    return {}


def pool(state: ValidationState, runtime: Runtime[ValidationContext]) -> dict[str, Any]:
    """The pairs the judges label, written once: every gold pair of the human set, and a seeded
    sample of as many non-gold chunks from the configurations' top ``judge_depth`` on it."""
    path = job.run_dir(runtime, state["run_id"]).file(PAIRS_FILE)
    if not state.get("judges"):
        return {"pairs": 0}
    if path.exists():
        return {"pairs": len(load_jsonl(path))}
    context = job.context(runtime)
    human = _human_benchmark(runtime, state)
    documents = corpus_documents(human)
    gold = sorted(
        (query_id, doc_id)
        for query_id, judged in human.qrels.items()
        if query_id in human.queries_by_id
        for doc_id, relevance in judged.items()
        if relevance > 0 and doc_id in documents
    )
    gold_queries = {query_id for query_id, _ in gold}
    found: set[tuple[str, str]] = set()
    for run_file in _evaluations(runtime, state["run_id"])[HUMAN]["runs"].values():
        for query_id, ranking in read_trec_run(run_file).items():
            if query_id in gold_queries:
                found.update(
                    (query_id, doc_id)
                    for doc_id in top_k(ranking, context.judge_depth)
                    if human.qrels[query_id].get(doc_id, 0) <= 0 and doc_id in documents
                )
    non_gold = random.Random(context.seed).sample(sorted(found), min(len(gold), len(found)))
    records = [{"query_id": query_id, "doc_id": doc_id, "human": True} for query_id, doc_id in gold]
    records += [{"query_id": query_id, "doc_id": doc_id, "human": False} for query_id, doc_id in non_gold]
    write_jsonl_atomic(path, sorted(records, key=lambda record: (record["query_id"], record["doc_id"])))
    return {"pairs": len(records)}


def _human_benchmark(runtime: Runtime[ValidationContext], state: ValidationState) -> Benchmark:
    context = job.context(runtime)
    return cached_benchmark(human_directory(runtime, state), job.workspace(runtime), _human_split(context, state))


def _human_split(context: ValidationContext, state: ValidationState) -> str:
    """A given BEIR directory's split is the setting's; a labelled JSONL is written as ``test``."""
    return context.split if Path(state["human"]).is_dir() else "test"


def judge(state: ValidationState, runtime: Runtime[ValidationContext]) -> dict[str, Any]:
    """Each judge labels every pair relevant or not: one call per judge, question and batch of
    passages; one record per judge and question, appended once (a resumed run skips them)."""
    if not state.get("judges"):
        return {}
    context = job.context(runtime)
    human = _human_benchmark(runtime, state)
    by_query: dict[str, list[str]] = {}
    for record in load_jsonl(job.run_dir(runtime, state["run_id"]).file(PAIRS_FILE)):
        by_query.setdefault(record["query_id"], []).append(record["doc_id"])
    log = _judgment_log(runtime, state["run_id"])
    tasks = [(spec, query_id) for spec in state["judges"] for query_id in by_query]
    pending = [task for task in tasks if f"{task[0]}\t{task[1]}" not in log]
    report = progress_reporter("judge")
    report(len(tasks) - len(pending), len(tasks))
    documents = corpus_documents(human)

    def label(spec: str, query_id: str) -> None:
        seam = run_seam(job.workspace(runtime), state["run_id"], _registered(spec), context)
        query = human.queries_by_id[query_id]
        verdicts: dict[str, bool] = {}
        doc_ids = by_query[query_id]
        for start in range(0, len(doc_ids), JUDGE_BATCH):
            batch = doc_ids[start : start + JUDGE_BATCH]
            # the offline judge weighs the question's words by the whole corpus's statistics, as the audit's
            # does (a batch of ten passages says nothing of which words are rare)
            words = {"statistics": corpus_statistics(human)} if seam.is_baseline else {}
            answer = seam.run(
                PoolJudge(len(batch)),
                history=query.history,
                question=query.question,
                passages=[document_text(*documents[doc_id]) for doc_id in batch],
                query_id=query_id,
                passage_ids=batch,
                passage_documents=batch,
                **words,
            )
            verdicts.update({doc_id: judgment.relevant for doc_id, judgment in zip(batch, answer.judgments)})
        log.append_once({"item": f"{spec}\t{query_id}", "judge": spec, "query_id": query_id, "verdicts": verdicts})

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, context.concurrency)) as executor:
        futures = [executor.submit(contextvars.copy_context().run, label, spec, query_id) for spec, query_id in pending]
        for done, future in enumerate(concurrent.futures.as_completed(futures), start=len(tasks) - len(pending) + 1):
            future.result()
            report(done, len(tasks))
    return {}


def _registered(spec: str) -> str:
    """A ``qrels:FILE`` judge answers from those labels (registered once per process)."""
    if spec.startswith(LABELS_PREFIX):
        from benchsmith.graphs.select.inputs import label_judge

        return label_judge(spec)
    return spec


def report(state: ValidationState, runtime: Runtime[ValidationContext]) -> ValidationOutput:
    """Rank the configurations on both sets, compare the rankings, measure the judges, write the report."""
    context = job.context(runtime)
    evaluations = _evaluations(runtime, state["run_id"])
    results = {name: read_json(evaluations[name]["results"]) for name in SETS}
    measure = results[SYNTHETIC]["measures"][0]
    pairs = paired_configurations(
        results[SYNTHETIC]["configurations"],
        results[HUMAN]["configurations"],
        match_history=state["human_histories"] == state["synthetic_histories"],
    )
    human_values = per_query_matrix(results[HUMAN]["per_query"], [human for _, human in pairs], measure)
    synthetic_values = per_query_matrix(results[SYNTHETIC]["per_query"], [synthetic for synthetic, _ in pairs], measure)
    names = [synthetic for synthetic, _ in pairs]
    human_means = dict(zip(names, human_values.mean(axis=0).tolist() if len(human_values) else [0.0] * len(names)))
    synthetic_means = dict(
        zip(names, synthetic_values.mean(axis=0).tolist() if len(synthetic_values) else [0.0] * len(names))
    )
    correlation = kendall_tau_b([human_means[n] for n in names], [synthetic_means[n] for n in names])
    interval = tau_interval(human_values, synthetic_values, context.bootstrap, context.seed, DEFAULT_CONFIDENCE)
    entries = {name: {entry["name"]: entry for entry in results[name]["configurations"]} for name in SETS}
    configurations = configuration_rows(pairs, entries[SYNTHETIC], entries[HUMAN], human_means, synthetic_means)
    agreement, sample = _judge_agreement(runtime, state)
    held_out = _held_out(runtime, state)
    found, top_unseparated = _separability(pairs, human_values, human_means, synthetic_means, context)
    said = verdict(human_means, synthetic_means, correlation.tau, interval, top_unseparated, dict(pairs)).to_json()
    validity = {
        "measure": measure,
        "configurations": configurations,
        "kendall_tau_b": correlation.tau,
        "interval": {
            "low": interval.low,
            "high": interval.high,
            "confidence": DEFAULT_CONFIDENCE,
            "defined_resamples": interval.n,
        },
        "p_value": correlation.p_value,
        "top1_agrees": top1_agrees(human_means, synthetic_means),
        "verdict": said,
        "bootstrap": context.bootstrap,
        "seed": context.seed,
        "synthetic": _set_summary(
            results[SYNTHETIC], evaluations[SYNTHETIC], len(synthetic_values), state["synthetic_histories"]
        ),
        "human": {
            **_set_summary(results[HUMAN], evaluations[HUMAN], len(human_values), state["human_histories"]),
            **(
                {"name": Path(state["human"]).name, "labelled_questions": state["human"]}
                if Path(state["human"]).is_file()
                else {}
            ),
        },
        "separability": {
            "queries": len(human_values),
            "resamples": context.bootstrap,
            "seed": context.seed,
            "confidence": DEFAULT_CONFIDENCE,
            "pairs": [pair.to_json() for pair in found],
        },
        "judge_agreement": agreement,
        "judge_sample": sample,
        "settings": {
            "retrievers": state["retrievers"],
            "runs": list(state.get("runs") or []),
            "judges": list(state.get("judges") or []),
            "depth": context.depth,
            "rerank": context.rerank,
            "embedder": context.embedder,
            "split": context.split,
        },
        "held_out": held_out.to_json(),
    }
    validity["notes"] = [*validity_notes(validity), EMBEDDED_TEXT_NOTE]
    paths = write_files_atomic(job.run_dir(runtime, state["run_id"]).path, validity_report_files(validity))
    return {**{key: validity[key] for key in OUTPUT_KEYS}, "report": {kind: str(path) for kind, path in paths.items()}}


def _separability(
    pairs: Sequence[tuple[str, str]],
    human_values: np.ndarray,
    human_means: Mapping[str, float],
    synthetic_means: Mapping[str, float],
    context: ValidationContext,
) -> tuple[list[Separation], list[Separation]]:
    """Whether the human set's queries separate each adjacent pair of its ranking and the synthetic
    ranking's top two (evals/measures/separability.py), the configurations named as they ran on the human
    set; and the top pairs they do not separate."""
    columns = {human: human_values[:, index] for index, (_, human) in enumerate(pairs)}
    scores = {human: human_means[synthetic] for synthetic, human in pairs}
    human_of = dict(pairs)
    synthetic_order = [human_of[name] for name in sorted(synthetic_means, key=lambda n: (-synthetic_means[n], n))]
    found = separations(
        columns, separation_pairs(scores, synthetic_order), context.bootstrap, context.seed, DEFAULT_CONFIDENCE
    )
    return found, top_not_separated(found, scores, synthetic_order)


def _judge_agreement(
    runtime: Runtime[ValidationContext], state: ValidationState
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    if not state.get("judges"):
        return {}, {}
    context = job.context(runtime)
    run_dir = job.run_dir(runtime, state["run_id"])
    pairs = load_jsonl(run_dir.file(PAIRS_FILE))
    verdicts: dict[str, dict[tuple[str, str], bool]] = {spec: {} for spec in state["judges"]}
    for record in load_jsonl(run_dir.file(JUDGMENTS_FILE)) if run_dir.file(JUDGMENTS_FILE).exists() else []:
        for doc_id, relevant in record["verdicts"].items():
            verdicts[record["judge"]][(record["query_id"], doc_id)] = relevant
    agreement = {}
    for spec in state["judges"]:
        judged = [pair for pair in pairs if (pair["query_id"], pair["doc_id"]) in verdicts[spec]]
        agreement[spec] = relevance_agreement(
            [pair["human"] for pair in judged], [verdicts[spec][(pair["query_id"], pair["doc_id"])] for pair in judged]
        )
    sample = {
        "gold": sum(1 for pair in pairs if pair["human"]),
        "non_gold": sum(1 for pair in pairs if not pair["human"]),
        "depth": context.judge_depth,
        "seed": context.seed,
    }
    return agreement, sample


def _set_summary(
    results: Mapping[str, Any], evaluation: Mapping[str, Any], measured: int, histories: list[str]
) -> dict[str, Any]:
    benchmark = results["benchmark"]
    return {
        "name": benchmark["name"],
        "path": benchmark["path"],
        "queries": measured,
        "documents": benchmark["documents"],
        "histories": histories,
        "evaluation_run": evaluation["evaluation_run"],
    }


def _held_out(runtime: Runtime[ValidationContext], state: ValidationState) -> HeldOutLabels:
    path = job.run_dir(runtime, state["run_id"]).file(HELD_OUT_FILE)
    return HeldOutLabels.from_json(read_json(path)) if path.exists() else HeldOutLabels()


builder = StateGraph(
    ValidationState, context_schema=ValidationContext, input_schema=ValidationInput, output_schema=ValidationOutput
)
for node in (plan, evaluate, pool, judge, report):
    builder.add_node(node)
builder.add_edge(START, "plan")
builder.add_conditional_edges("plan", next_step, ["evaluate", "pool"])
builder.add_conditional_edges("evaluate", next_step, ["evaluate", "pool"])
builder.add_edge("pool", "judge")
builder.add_edge("judge", "report")
builder.add_edge("report", END)

graph = builder.compile(name="validate")  # the Studio copy: no checkpointer (the server brings its own)
