"""The ``report`` node of a configuration search: the chosen configuration, its PR-AUC and counts per configuration from the judged pool, the judges' summary, and the report written."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from benchsmith.evals.measures.intervals import resample_weights
from benchsmith.evals.measures.selection_measures import (
    QueryCounts,
    configuration_scores,
    main_effects,
    micro_precision_recall,
    pr_auc,
)
from benchsmith.evals.reports.selection_report import selection_report_files
from benchsmith.graphs.contexts.select import SelectContext
from benchsmith.graphs.select.inputs import (
    configuration_of,
    file_records,
    job,
    judge_seams,
    min_votes_of,
    queries_of,
    run_file_of,
)
from benchsmith.graphs.select.judging import (
    stores_verdicts,
)
from benchsmith.graphs.select.outside import outside_counts, outside_notes
from benchsmith.graphs.select.results import (
    BEST_FILE,
    JudgedPool,
    best_by_f_beta,
    best_configuration_yaml,
    configuration_counts,
    measured_configurations,
    selection_notes,
    separation,
    separation_text,
)
from benchsmith.graphs.select.retrieval import chunk_index, corpus_of
from benchsmith.graphs.select.state import (
    CONFIGURATIONS_FILE,
    FACTS_FILE,
    JUDGMENTS_FILE,
    POOL_FILE,
    STAGES_FILE,
    SelectOutput,
    SelectState,
)
from benchsmith.stores.formats.trec import read_trec_run
from benchsmith.stores.persistence.files import write_text_atomic
from benchsmith.stores.persistence.jsonl import load_jsonl
from benchsmith.tools.retrieval.strategy_space import (
    DIMENSIONS,
    OutsideConfiguration,
    SelectConfiguration,
    space_from_mapping,
)


def _judged_pool(runtime: Runtime[SelectContext], state: SelectState) -> JudgedPool:
    run_dir = job.run_dir(runtime, state["run_id"])
    facts_records = load_jsonl(run_dir.file(FACTS_FILE)) if run_dir.file(FACTS_FILE).exists() else []
    return JudgedPool.of(
        file_records(run_dir.file(JUDGMENTS_FILE), "pair"),
        facts_records,
        [query.id for query in queries_of(state["queries"])],
    )


def _counts(runtime: Runtime[SelectContext], state: SelectState, judged: JudgedPool, name: str) -> QueryCounts:
    configuration = configuration_of(runtime, state["run_id"], name)
    if isinstance(configuration, OutsideConfiguration):
        return outside_counts(runtime, state["run_id"], configuration, judged)
    return configuration_counts(
        name,
        configuration,
        chunk_index(corpus_of(state["corpus"]), configuration.chunking),
        read_trec_run(run_file_of(runtime, state["run_id"], configuration)),
        judged,
    )


def _pr_auc(runtime: Runtime[SelectContext], state: SelectState, names: list[str]) -> dict[str, float]:
    judged = _judged_pool(runtime, state)
    return {name: float(pr_auc(*micro_precision_recall(_counts(runtime, state, judged, name)))) for name in names}


def report(state: SelectState, runtime: Runtime[SelectContext]) -> SelectOutput:
    """Measure every configuration, rank them, and write the report."""
    context = job.context(runtime)
    run_dir = job.run_dir(runtime, state["run_id"])
    space = space_from_mapping(state["space"], "the strategy space")
    judged = _judged_pool(runtime, state)
    weights = resample_weights(len(judged.query_ids), context.resamples, context.seed)
    scores = {
        name: configuration_scores(_counts(runtime, state, judged, name), weights, context.betas, context.confidence)
        for name in state["configurations"]
    }
    configurations = measured_configurations(scores, file_records(run_dir.file(CONFIGURATIONS_FILE), "name"))
    precision_first, recall_first = (
        best_by_f_beta(configurations, beta) for beta in (min(context.betas), max(context.betas))
    )
    decision = separation(configurations, scores, len(judged.query_ids), context.confidence)
    best = configurations[0] if decision["best"] is not None else None
    outside = {
        name: configuration
        for name in state["configurations"]
        if isinstance(configuration := configuration_of(runtime, state["run_id"], name), OutsideConfiguration)
    }
    # Your own retriever winning leaves nothing of select's to ship: no space file of it.
    best_yaml = (
        best_configuration_yaml(best["settings"], context.embedder) if best and best["name"] not in outside else None
    )
    judgments = _judgment_summary(runtime, state, context)
    results = {
        "configurations": configurations,
        "ranking": [c["name"] for c in configurations],
        # A winner only when its interval does not overlap the runner-up's; else null and the tie.
        "best": {
            "configuration": best["name"],
            "settings": best["settings"],
            "embedder": context.embedder,
            "space_file": BEST_FILE if best_yaml is not None else None,
            "yaml": best_yaml,
            "outside": best["name"] in outside,
        }
        if best
        else None,
        "tied": decision["tied"],
        "separation": {**decision, "text": separation_text(decision, context.confidence)},
        "precision_first": precision_first,
        "recall_first": recall_first,
        "main_effects": main_effects(  # of select's dimensions: the outside configurations have no levels
            {c["name"]: c["pr_auc"] for c in configurations if c["name"] not in outside},
            {c["name"]: c["settings"] for c in configurations if c["name"] not in outside},
            {d: space[d] for d in DIMENSIONS},
        ),
        "stages": sorted(file_records(run_dir.file(STAGES_FILE), "stage").values(), key=lambda r: int(r["stage"])),
        "judgments": judgments,
        "settings": {
            "search": space["search"],
            "order": space["order"],
            "space": {d: space[d] for d in DIMENSIONS},
            "outside": space.get("outside", []),
            "judges": state["judges"],
            "min_votes": min_votes_of(context, state["judges"]),
            "batch_size": context.batch_size,
            "betas": list(context.betas),
            "resamples": context.resamples,
            "confidence": context.confidence,
            "embedder": context.embedder,
            "llm": context.llm,
            "rerank_depth": context.rerank_depth,
            "seed": context.seed,
        },
        "queries": {
            "path": state["queries"],
            "count": len(judged.query_ids),
            "conversational": sum(1 for query in queries_of(state["queries"]) if query.conversational),
        },
        "corpus": {"sources": state["corpus"], "documents": len(corpus_of(state["corpus"]).documents)},
        "curves_shown": context.curves_shown,
        "outside": sorted(outside),
        "notes": [
            *selection_notes(
                state["judges"],
                min_votes_of(context, state["judges"]),
                context.batch_size,
                context.resamples,
                context.confidence,
                context.rerank_depth,
            ),
            *outside_notes(runtime, state["run_id"], outside),
        ],
    }
    if best_yaml is not None:
        write_text_atomic(run_dir.file(BEST_FILE), best_yaml)
    else:
        run_dir.file(BEST_FILE).unlink(missing_ok=True)  # no winner: no space file that names one
    return {
        "report": {
            **run_dir.write_report(selection_report_files(results)),
            **({"best": str(run_dir.file(BEST_FILE))} if best_yaml is not None else {}),
        },
        "best": decision["best"],
        "tied": decision["tied"],
        "ranking": results["ranking"],
        "pr_auc": {c["name"]: c["pr_auc"] for c in configurations},
        "precision_first": precision_first,
        "recall_first": recall_first,
        "pool_pairs": judgments["pool_pairs"],
        "model_verdicts": judgments["model_verdicts"],
        "verdicts": judgments["verdicts_in_run"],
        "whole_corpus_pairs": judgments["whole_corpus_pairs"],
    }


def _judgment_summary(runtime: Runtime[SelectContext], state: SelectState, context: SelectContext) -> dict[str, Any]:
    """Pairs judged against judging the whole corpus, verdicts by source, the run's model usage."""
    run_dir = job.run_dir(runtime, state["run_id"])
    judgments = file_records(run_dir.file(JUDGMENTS_FILE), "pair")
    pooled = file_records(run_dir.file(POOL_FILE), "pair")
    seams = dict(judge_seams(runtime, state["run_id"], state["judges"]))
    verdicts = [(spec, verdict) for record in judgments.values() for spec, verdict in record["verdicts"].items()]
    corpus = corpus_of(state["corpus"])
    planned = [configuration_of(runtime, state["run_id"], name) for name in state["configurations"]]
    chunkings = {configuration.chunking for configuration in planned if isinstance(configuration, SelectConfiguration)}
    texts = {chunk.key for spec in chunkings for chunk in chunk_index(corpus, spec).chunks}
    queries = len(queries_of(state["queries"]))
    facts_records = load_jsonl(run_dir.file(FACTS_FILE)) if run_dir.file(FACTS_FILE).exists() else []
    return {
        "pool_pairs": len(pooled),
        "judged_pairs": len(judgments.keys() & pooled.keys()),
        "relevant_pairs": sum(1 for pair in pooled if judgments.get(pair, {}).get("relevant")),
        "facts": sum(len(record["facts"]) for record in facts_records),
        "queries": queries,
        "distinct_chunks": len(texts),
        "whole_corpus_pairs": queries * len(texts),
        "judges": state["judges"],
        "model_verdicts": sum(
            1 for spec, verdict in verdicts if stores_verdicts(seams[spec]) and not verdict.get("cached")
        ),
        "stored_verdicts": sum(1 for _, verdict in verdicts if verdict.get("cached")),
        "free_verdicts": sum(1 for spec, _ in verdicts if not stores_verdicts(seams[spec])),
        # Every verdict on this run's pairs, by where it came from: what this run judged.
        "verdicts_in_run": {
            "total": len(verdicts),
            "model": sum(1 for spec, verdict in verdicts if stores_verdicts(seams[spec]) and not verdict.get("cached")),
            "stored": sum(1 for _, verdict in verdicts if verdict.get("cached")),
            "offline": sum(1 for spec, _ in verdicts if not stores_verdicts(seams[spec])),
        },
        "batch_size": context.batch_size,
        "usage": run_dir.usage.totals(),
    }
