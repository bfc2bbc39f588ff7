"""The paraphrase graph's nodes before finishing: plan (turns registered, ECAsT rows joined), dispatch and paraphrase_turn (rewrite, paraphrase, restore context, filter, judge)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import Send

from benchsmith.agents.paraphraser import ContextRestorer, Paraphraser, VariantJudge
from benchsmith.agents.rewriter import Rewriter
from benchsmith.graphs.contexts.paraphrase import ParaphraseContext
from benchsmith.graphs.paraphrase.inputs import _items, job, load_input_benchmark, read_turns
from benchsmith.graphs.paraphrase.state import (
    BENCHMARK_FILE,
    IMPORTED_FILE,
    QRELS_FILE,
    TURNS_FILE,
    UNJOINED_FILE,
    ParaphraseState,
    TurnTask,
)
from benchsmith.graphs.runtime.fanout import dispatch_items
from benchsmith.graphs.runtime.progress import report_advance
from benchsmith.graphs.runtime.resources import embedder_for, run_seam
from benchsmith.stores.formats.benchmark_files import write_beir_qrels
from benchsmith.stores.formats.conversational import has_corpus
from benchsmith.stores.formats.ecast import read_ecast
from benchsmith.stores.persistence.files import write_json_atomic
from benchsmith.stores.persistence.jsonl import write_jsonl_atomic
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.benchmark.paraphrase_filters import FilterSettings, filter_variants, similarities_to_source


def plan(state: ParaphraseState, runtime: Runtime[ParaphraseContext]) -> dict[str, Any]:
    """Read the benchmark into turns.jsonl and join the imported paraphrases (once per run)."""
    run_dir = job.run_dir(runtime, state["run_id"])
    if run_dir.file(TURNS_FILE).exists():  # turns.jsonl is written last: its presence means plan finished
        return {"turns": _registered(runtime, state["run_id"], list(read_turns(run_dir)))}
    context = job.context(runtime)
    benchmark = load_input_benchmark(state["benchmarks"], job.workspace(runtime), context)
    turns: list[dict[str, Any]] = [
        {
            "turn": query.id,
            "conversation_id": query.conversation_id,
            "number": query.turn,
            "raw": query.question,
            "rewrite": query.rewrite,
            "history": [list(pair) for pair in query.history],
            "response": query.response,
        }
        for query in benchmark.queries
    ]
    write_json_atomic(
        run_dir.file(BENCHMARK_FILE),
        {
            "name": benchmark.name,
            "inputs": state["benchmarks"],
            "conversational": benchmark.conversational,
            "corpus": str(benchmark.corpus_path.resolve()) if has_corpus(benchmark) else None,
            "qrels": bool(benchmark.qrels),
            "judged_turns": len(benchmark.qrels),
        },
    )
    if benchmark.qrels:
        write_beir_qrels(
            run_dir.file(QRELS_FILE),
            [
                (query_id, doc_id, relevance)
                for query_id, judged in benchmark.qrels.items()
                for doc_id, relevance in judged.items()
            ],
        )
    if context.import_ecast:
        _join_ecast(run_dir, Path(context.import_ecast), {turn["turn"] for turn in turns})
    write_jsonl_atomic(run_dir.file(TURNS_FILE), turns)
    return {"turns": _registered(runtime, state["run_id"], [turn["turn"] for turn in turns])}


def _registered(runtime: Runtime[ParaphraseContext], run_id: str, turn_ids: list[str]) -> int:
    """Register the turns as the run's work items (a joining worker reads the same benchmark)."""
    _items(runtime, run_id).add([(turn_id, {"turn": turn_id}) for turn_id in turn_ids])
    return len(turn_ids)


def _join_ecast(run_dir: RunDirectory, path: Path, turn_ids: set[str]) -> None:
    joined: list[dict[str, Any]] = []
    unjoined: list[dict[str, Any]] = []
    counts: dict[str, int] = {}
    for row in read_ecast(path).rows:
        if row.turn_id not in turn_ids:
            unjoined.append(
                {"line": row.line, "turn": row.turn_id, "self_contained": row.self_contained, "raw": row.raw}
            )
            continue
        counts[row.turn_id] = counts.get(row.turn_id, 0) + 1
        joined.append(
            {
                "variant": f"{row.turn_id}:e{counts[row.turn_id]}",
                "turn": row.turn_id,
                "origin": "ecast",
                "self_contained": row.self_contained,
                "raw": row.raw,
                "line": row.line,
            }
        )
    write_jsonl_atomic(run_dir.file(UNJOINED_FILE), unjoined)
    write_jsonl_atomic(run_dir.file(IMPORTED_FILE), joined)


def dispatch(state: ParaphraseState, runtime: Runtime[ParaphraseContext]) -> list[Send] | Literal["finish"]:
    """A batch of turns not paraphrased yet; finish when all are done (or nothing is generated)."""
    if job.context(runtime).paraphrases_per_turn < 1:
        return "finish"
    return dispatch_items(  # type: ignore[return-value]
        _items(runtime, state["run_id"]),
        "paraphrase",
        job.context(runtime).concurrency,
        lambda turn_id: Send("paraphrase_turn", {"run_id": state["run_id"], "turn": turn_id}),
        "finish",
    )


def paraphrase_turn(task: TurnTask, runtime: Runtime[ParaphraseContext]) -> dict[str, Any]:
    """Rewrite, paraphrase, restore the context and filter one turn; record it once."""
    run_dir = job.run_dir(runtime, task["run_id"])
    turn = read_turns(run_dir)[task["turn"]]
    items = _items(runtime, task["run_id"])
    record = job.run_new_item(
        runtime, task["run_id"], items, task["turn"], paraphrased_turn, {"run_id": task["run_id"], "turn": turn}
    )
    if record is None:
        return {"paraphrased": 0}  # its record was on file already
    run_dir.usage.sync()
    items.complete(task["turn"], record)
    report_advance("paraphrase")
    return {"paraphrased": 1}


def paraphrased_turn(task: dict[str, Any], context: ParaphraseContext) -> dict[str, Any]:
    """One turn's source, its origin and every candidate variant with its filter decision: the work
    of one item, here or on a Ray node. The task carries the turn: a node needs no benchmark file."""
    run_id, turn = task["run_id"], task["turn"]
    workspace = Workspace.resolve(context.workspace)
    history = [tuple(pair) for pair in turn["history"]]
    seam = run_seam(workspace, run_id, context.llm, context)
    if turn["rewrite"]:
        source, origin = turn["rewrite"], "benchmark"
    elif history:
        source, origin = seam.run(Rewriter(), history=history, question=turn["raw"]).query, "rewriter"
    else:  # a first turn is self-contained as it is
        source, origin = turn["raw"], "raw utterance"
    paraphrases = [
        text.strip() for text in seam.run(Paraphraser(context.paraphrases_per_turn), query=source).paraphrases
    ]
    raws = paraphrases
    if history:
        raws = [
            text.strip()
            for text in seam.run(
                ContextRestorer(len(paraphrases)), history=history, raw=turn["raw"], rewrite=source, queries=paraphrases
            ).turns
        ]
    embedder = embedder_for(context.embedder, workspace, run_id, context)
    similarities = similarities_to_source(embedder, source, paraphrases) if context.min_similarity > 0 else None
    decisions = filter_variants(
        source,
        paraphrases,
        FilterSettings(context.overlap_metric, context.max_sentence_score, context.min_similarity),
        similarities,
    )
    candidates = []
    for number, (text, raw, decision) in enumerate(zip(paraphrases, raws, decisions), start=1):
        candidate = {
            "variant": f"{turn['turn']}:g{number}",
            "self_contained": text,
            "raw": raw,
            "kept": decision.kept,
            "reason": decision.reason,
            "overlap_with_source": round(decision.overlap_with_source, 2),
            "overlap_with_kept": round(decision.overlap_with_kept, 2),
            "similarity": None if decision.similarity is None else round(decision.similarity, 4),
        }
        if decision.kept and context.judges:
            _judge_candidate(context, workspace, run_id, candidate, history, source)
        candidates.append(candidate)
    return {"turn": turn["turn"], "source": source, "source_origin": origin, "candidates": candidates}


def _judge_candidate(
    context: ParaphraseContext,
    workspace: Workspace,
    run_id: str,
    candidate: dict[str, Any],
    history: list[tuple[str, str]],
    source: str,
) -> None:
    """Every judge's equivalence and fit; the candidate is dropped when a mean falls short."""
    verdicts = {}
    for spec in context.judges:
        verdict = run_seam(workspace, run_id, spec, context).run(
            VariantJudge(), history=history, source=source, paraphrase=candidate["self_contained"], raw=candidate["raw"]
        )
        verdicts[spec] = verdict.model_dump()
    equivalence = sum(v["equivalence"] for v in verdicts.values()) / len(verdicts)
    fit = sum(v["fit"] for v in verdicts.values()) / len(verdicts)
    candidate["judges"] = verdicts
    if equivalence < context.min_judge_score or fit < context.min_judge_score:
        candidate["kept"] = False
        candidate["reason"] = (
            f"judged {'a meaning change' if equivalence < context.min_judge_score else 'a poor fit'} "
            f"(mean equivalence {equivalence:.1f}, fit {fit:.1f} < {context.min_judge_score})"
        )
