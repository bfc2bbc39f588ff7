"""Conversational paraphrasing (the ECAsT chain) of any conversational benchmark.

    plan ─→ dispatch ─┬→ Send × a batch of turns not yet paraphrased ─→ paraphrase_turn ─→ gather ─→ dispatch
                      ├→ wait ─→ dispatch     (other workers hold the last turns)
                      └→ finish ─→ END        (all done, or --per-turn 0)

``plan`` reads the benchmark once (CAsT topic files, a BEIR directory, a synthesis run or a
turn JSONL file) into ``turns.jsonl`` and joins imported ECAsT rows to its turns
(``imported.jsonl``; rows of turns it lacks go to ``unjoined.jsonl``, counted and reported).
Per turn, ``paraphrase_turn`` takes the turn's self-contained form (the benchmark's own
rewrite, else a CQR rewrite through the seam), asks for K paraphrases of it, turns each back
into a mid-conversation turn given the history (so each variant has a raw and a
self-contained form), filters them (near-duplicates by sentence BLEU or chrF, meaning
changes by embedding cosine, optionally a judge ensemble's 1-5 equivalence and fit) and
records the turn once, as a work item (``generated.jsonl`` for one process; with a database,
the queue workers on many machines claim turns from): a killed run resumes with the turns not
yet there, and every model reply is cached. ``finish`` writes ``paraphrases.jsonl``,
``diversity.json``, the test sets R1..Rn (BEIR query sets sharing the benchmark's qrels) and
the report.
"""

from __future__ import annotations

import functools
import json
import operator
import os
from pathlib import Path
from typing import Annotated, Any, Literal

from langgraph.graph import END, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send
from typing_extensions import TypedDict

from benchsmith.agents.paraphraser import ContextRestorer, Paraphraser, VariantJudge
from benchsmith.agents.rewriter import Rewriter
from benchsmith.evals.measures.diversity import diversity
from benchsmith.evals.reports.paraphrase_report import paraphrase_report_files
from benchsmith.graphs.contexts.paraphrase import ParaphraseContext
from benchsmith.graphs.runtime.fanout import add_fan_out, claimed_work, dispatch_items
from benchsmith.graphs.runtime.job_runtime import JobRuntime
from benchsmith.graphs.runtime.progress import report_advance
from benchsmith.graphs.runtime.resources import concurrency_slot, embedder_for, run_items, run_seam
from benchsmith.stores.formats.beir import Benchmark
from benchsmith.stores.formats.benchmark_files import write_beir_qrels
from benchsmith.stores.formats.conversational import has_corpus, load_conversational
from benchsmith.stores.formats.ecast import read_ecast
from benchsmith.stores.persistence.files import atomic_writer, write_files_atomic, write_json_atomic
from benchsmith.stores.persistence.jsonl import load_jsonl, write_jsonl_atomic
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.work_items import WorkItems
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.benchmark.paraphrase_filters import FilterSettings, filter_variants, similarities_to_source
from benchsmith.tools.benchmark.test_sets import draw_test_sets

TURNS_FILE, BENCHMARK_FILE, QRELS_FILE = "turns.jsonl", "benchmark.json", "qrels.tsv"
IMPORTED_FILE, UNJOINED_FILE, GENERATED_FILE = "imported.jsonl", "unjoined.jsonl", "generated.jsonl"
PARAPHRASES_FILE, DIVERSITY_FILE, TEST_SETS_DIR, TEST_SETS_FILE = (
    "paraphrases.jsonl",
    "diversity.json",
    "test-sets",
    "test-sets.json",
)
ORIGINAL = "original"
EXAMPLE_TURNS = 5


class ParaphraseInput(TypedDict):
    run_id: str
    benchmarks: list[str]  # the files or directory that make one benchmark


class ParaphraseOutput(TypedDict, total=False):
    run_id: str
    turns: int
    paraphrases: int
    turns_with_paraphrases: int
    unjoined: int
    test_sets: list[str]
    diversity: dict[str, Any]
    report: dict[str, str]


class ParaphraseState(ParaphraseInput, ParaphraseOutput, total=False):  # type: ignore[misc]  # LangGraph's state merges input and output: a key required on input may be left out of the output
    paraphrased: Annotated[int, operator.add]


class TurnTask(TypedDict):
    run_id: str
    turn: str


# ---------------------------------------------------------------------------------------
# Inputs.

job = JobRuntime(ParaphraseContext)  # the runtime's settings, workspace and run directories


@functools.lru_cache(maxsize=2)
def _turns_in(path: Path, modified: float) -> dict[str, dict[str, Any]]:
    return {record["turn"]: record for record in load_jsonl(path)}


def read_turns(run_dir: RunDirectory) -> dict[str, dict[str, Any]]:
    """The run's turns in benchmark order: ``{turn id: {"turn", "conversation_id", "number",
    "raw", "rewrite", "history", "response"}}``."""
    path = run_dir.file(TURNS_FILE)
    return _turns_in(path, path.stat().st_mtime)


def load_input_benchmark(specs: list[str], workspace: Workspace, context: ParaphraseContext) -> Benchmark:
    return load_conversational(
        specs,
        workspace,
        split=context.split,
        corpus=Path(context.corpus) if context.corpus else None,
        qrels=Path(context.qrels) if context.qrels else None,
    )


# ---------------------------------------------------------------------------------------
# Nodes.


def plan(state: ParaphraseState, runtime: Runtime[ParaphraseContext]) -> dict[str, Any]:
    """Read the benchmark into turns.jsonl and join the imported paraphrases (once per run)."""
    run_dir = job.run_dir(runtime, state["run_id"])
    if run_dir.file(TURNS_FILE).exists():  # turns.jsonl is written last: its presence means plan finished
        return {"turns": _registered(runtime, state["run_id"], list(read_turns(run_dir)))}
    context = job.context(runtime)
    benchmark = load_input_benchmark(state["benchmarks"], job.workspace(runtime), context)
    turns = [
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
    joined, unjoined, counts = [], [], {}
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


def _items(runtime: Runtime[ParaphraseContext], run_id: str) -> WorkItems:
    """The run's turns as work items: the generated log alone, or shared by workers."""
    return run_items(job.context(runtime), job.workspace(runtime), run_id, GENERATED_FILE, "turn")


def dispatch(state: ParaphraseState, runtime: Runtime[ParaphraseContext]) -> list[Send] | Literal["wait", "finish"]:
    """A batch of turns nobody paraphrased or holds; finish when all are done (or nothing is
    generated), wait while other workers still hold some."""
    if job.context(runtime).per_turn < 1:
        return "finish"
    return dispatch_items(  # type: ignore[return-value]
        _items(runtime, state["run_id"]),
        "paraphrase",
        job.context(runtime).concurrency,
        lambda turn_id: Send("paraphrase_turn", {"run_id": state["run_id"], "turn": turn_id}),
        "finish",
    )


def paraphrase_turn(task: TurnTask, runtime: Runtime[ParaphraseContext]) -> dict[str, Any]:
    """Rewrite, paraphrase, restore the context and filter one turn; record it once (claimed
    first when workers share the run)."""
    context = job.context(runtime)
    run_dir = job.run_dir(runtime, task["run_id"])
    turn = read_turns(run_dir)[task["turn"]]
    items = _items(runtime, task["run_id"])
    with concurrency_slot(task["run_id"], context.concurrency):
        record = claimed_work(items, task["turn"], lambda: _paraphrased(runtime, task["run_id"], turn))
    if record is None:
        return {"paraphrased": 0}  # another worker has it, or did it
    run_dir.usage.sync()
    items.complete(task["turn"], record)
    report_advance("paraphrase")
    return {"paraphrased": 1}


def _paraphrased(runtime: Runtime[ParaphraseContext], run_id: str, turn: dict[str, Any]) -> dict[str, Any]:
    """One turn's source, its origin and every candidate variant with its filter decision."""
    context = job.context(runtime)
    history = [tuple(pair) for pair in turn["history"]]
    seam = run_seam(job.workspace(runtime), run_id, context.llm, context)
    if turn["rewrite"]:
        source, origin = turn["rewrite"], "benchmark"
    elif history:
        source, origin = seam.run(Rewriter(), history=history, question=turn["raw"]).query, "rewriter"
    else:  # a first turn is self-contained as it is
        source, origin = turn["raw"], "raw utterance"
    paraphrases = [text.strip() for text in seam.run(Paraphraser(context.per_turn), query=source).paraphrases]
    raws = paraphrases
    if history:
        raws = [
            text.strip()
            for text in seam.run(
                ContextRestorer(len(paraphrases)), history=history, raw=turn["raw"], rewrite=source, queries=paraphrases
            ).turns
        ]
    embedder = embedder_for(context.embedder, job.workspace(runtime), run_id, context)
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
            _judge_candidate(runtime, run_id, candidate, history, source)
        candidates.append(candidate)
    return {"turn": turn["turn"], "source": source, "source_origin": origin, "candidates": candidates}


def _judge_candidate(
    runtime: Runtime[ParaphraseContext],
    run_id: str,
    candidate: dict[str, Any],
    history: list[tuple[str, str]],
    source: str,
) -> None:
    """Every judge's equivalence and fit; the candidate is dropped when a mean falls short."""
    context = job.context(runtime)
    verdicts = {}
    for spec in context.judges:
        verdict = run_seam(job.workspace(runtime), run_id, spec, context).run(
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


def finish(state: ParaphraseState, runtime: Runtime[ParaphraseContext]) -> ParaphraseOutput:
    """The kept variants, diversity.json, the test sets and the report."""
    context = job.context(runtime)
    run_dir = job.run_dir(runtime, state["run_id"])
    turns = read_turns(run_dir)
    if context.database_url() and context.per_turn > 0:  # the other workers' turns are in the database
        write_jsonl_atomic(run_dir.file(GENERATED_FILE), _items(runtime, state["run_id"]).results())
    benchmark = _read_json(run_dir.file(BENCHMARK_FILE))
    imported = load_jsonl(run_dir.file(IMPORTED_FILE)) if run_dir.file(IMPORTED_FILE).exists() else []
    unjoined = load_jsonl(run_dir.file(UNJOINED_FILE)) if run_dir.file(UNJOINED_FILE).exists() else []
    generated = (
        {record["turn"]: record for record in load_jsonl(run_dir.file(GENERATED_FILE))}
        if context.per_turn > 0 and run_dir.file(GENERATED_FILE).exists()
        else {}
    )
    order = {turn_id: position for position, turn_id in enumerate(turns)}
    candidates = [
        {**candidate, "turn": turn_id, "origin": "generated"}
        for turn_id, record in sorted(generated.items(), key=lambda item: order[item[0]])
        for candidate in record["candidates"]
    ]
    kept = sorted(
        [*imported, *(candidate for candidate in candidates if candidate["kept"])],
        key=lambda variant: (order[variant["turn"]], variant["origin"] != "ecast", _number(variant)),
    )
    write_jsonl_atomic(
        run_dir.file(PARAPHRASES_FILE),
        ({key: variant[key] for key in ("variant", "turn", "origin", "self_contained", "raw")} for variant in kept),
    )
    for turn_id, turn in turns.items():
        turn["self_contained"] = turn["rewrite"] or (generated[turn_id]["source"] if turn_id in generated else None)
        if turn_id in generated:
            turn["source"] = generated[turn_id]["source"]
    figures = diversity(turns, kept, len(unjoined), candidates if context.per_turn > 0 else None)
    write_json_atomic(run_dir.file(DIVERSITY_FILE), figures)
    sets = draw_test_sets(list(turns), _variant_ids(kept), context.test_sets, context.seed)
    write_json_atomic(run_dir.file(TEST_SETS_FILE), sets)
    variants = {variant["variant"]: variant for variant in kept}
    export_test_set(run_dir, ORIGINAL, turns, {}, {}, benchmark["corpus"])
    for name, choice in sets.items():
        export_test_set(run_dir, name, turns, choice, variants, benchmark["corpus"])
    results = _results(context, state, benchmark, turns, figures, kept, candidates, unjoined, sets)
    paths = write_files_atomic(run_dir.path, paraphrase_report_files(results))
    return {
        "turns": figures["turns"],
        "paraphrases": figures["paraphrases"],
        "turns_with_paraphrases": figures["turns_with_paraphrases"],
        "unjoined": figures["unjoined"],
        "test_sets": list(sets),
        "diversity": figures,
        "report": {kind: str(path) for kind, path in paths.items()},
    }


def _number(variant: dict[str, Any]) -> int:
    return int(variant["variant"].rsplit(":", 1)[1][1:])


def _variant_ids(variants: list[dict[str, Any]]) -> dict[str, list[str]]:
    by_turn: dict[str, list[str]] = {}
    for variant in variants:
        by_turn.setdefault(variant["turn"], []).append(variant["variant"])
    return by_turn


def _read_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def export_test_set(
    run_dir: RunDirectory,
    name: str,
    turns: dict[str, dict[str, Any]],
    choice: dict[str, str | None],
    variants: dict[str, dict[str, Any]],
    corpus: str | None,
) -> Path:
    """``test-sets/<name>/``: BEIR ``queries.jsonl`` (the raw form as text, the conversation and
    the self-contained form in metadata), ``raw.tsv`` and ``self-contained.tsv`` (``turn<TAB>text``,
    CAsT's resolved-file form), the benchmark's qrels and a link to its corpus when it has them."""
    directory = run_dir.file(TEST_SETS_DIR) / name
    phrasing: dict[str, tuple[str, str | None, str | None]] = {}
    for turn_id, turn in turns.items():
        variant = variants.get(choice.get(turn_id) or "")
        phrasing[turn_id] = (
            (variant["raw"], variant["self_contained"], variant["variant"])
            if variant
            else (turn["raw"], turn.get("self_contained"), None)
        )
    queries = []
    for turn_id, turn in turns.items():
        raw, self_contained, variant_id = phrasing[turn_id]
        metadata: dict[str, Any] = {"variant": variant_id}
        if self_contained:
            metadata["rewrite"] = self_contained
        if turn["conversation_id"] is not None:
            metadata.update(
                {
                    "conversation_id": turn["conversation_id"],
                    "turn": turn["number"],
                    "question": raw,
                    "response": turn.get("response"),
                }
            )
        queries.append({"_id": turn_id, "text": raw, "metadata": metadata})
    write_jsonl_atomic(directory / "queries.jsonl", queries)
    for file_name, position in (("raw.tsv", 0), ("self-contained.tsv", 1)):
        with atomic_writer(directory / file_name) as handle:
            for turn_id, forms in phrasing.items():
                if forms[position]:
                    handle.write(f"{turn_id}\t{' '.join(str(forms[position]).split())}\n")
    qrels = run_dir.file(QRELS_FILE)
    if qrels.exists():
        (directory / "qrels").mkdir(parents=True, exist_ok=True)
        _replace_with_copy(qrels, directory / "qrels" / "test.tsv")
    if corpus:
        link = directory / "corpus.jsonl"
        if link.is_symlink() or link.exists():
            link.unlink()
        os.symlink(corpus, link)  # the test sets share the benchmark's documents
    return directory


def _replace_with_copy(source: Path, target: Path) -> None:
    with atomic_writer(target) as handle:
        handle.write(source.read_text(encoding="utf-8"))


def _results(
    context: ParaphraseContext,
    state: ParaphraseState,
    benchmark: dict[str, Any],
    turns: dict[str, dict[str, Any]],
    figures: dict[str, Any],
    kept: list[dict[str, Any]],
    candidates: list[dict[str, Any]],
    unjoined: list[dict[str, Any]],
    sets: dict[str, dict[str, str | None]],
) -> dict[str, Any]:
    reasons: dict[str, int] = {}
    for candidate in candidates:
        if not candidate["kept"]:
            kind = str(candidate["reason"]).split(" (")[0]
            reasons[kind] = reasons.get(kind, 0) + 1
    unjoined_turns: dict[str, int] = {}
    for row in unjoined:
        unjoined_turns[row["turn"]] = unjoined_turns.get(row["turn"], 0) + 1
    by_turn = _variant_ids(kept)
    variants = {variant["variant"]: variant for variant in kept}
    examples = [
        {
            "turn": turn_id,
            "raw": turns[turn_id]["raw"],
            "self_contained": turns[turn_id].get("self_contained"),
            "variants": [
                {
                    "self_contained": variants[v]["self_contained"],
                    "raw": variants[v]["raw"],
                    "origin": variants[v]["origin"],
                }
                for v in by_turn[turn_id][:5]
            ],
        }
        for turn_id in list(by_turn)[:EXAMPLE_TURNS]
    ]
    return {
        "benchmark": {
            "name": benchmark["name"],
            "inputs": benchmark["inputs"],
            "turns": len(turns),
            "conversational": benchmark["conversational"],
            "corpus": benchmark["corpus"],
            "judged_turns": benchmark["judged_turns"],
        },
        "settings": {
            "llm": context.llm,
            "per_turn": context.per_turn,
            "import_ecast": context.import_ecast,
            "judges": list(context.judges),
            "min_judge_score": context.min_judge_score,
            "overlap_metric": context.overlap_metric,
            "max_sentence_score": context.max_sentence_score,
            "min_similarity": context.min_similarity,
            "embedder": context.embedder,
            "test_sets": context.test_sets,
            "seed": context.seed,
        },
        "diversity": figures,
        "filters": {"generated": len(candidates), "kept": sum(1 for c in candidates if c["kept"]), "dropped": reasons},
        "unjoined_turns": dict(sorted(unjoined_turns.items(), key=lambda item: -item[1])),
        "test_sets": {
            name: {"varied_turns": sum(1 for value in choice.values() if value), "directory": f"{TEST_SETS_DIR}/{name}"}
            for name, choice in sets.items()
        },
        "examples": examples,
        "notes": _notes(context),
    }


def _notes(context: ParaphraseContext) -> list[str]:
    notes = [
        "BLEU is corpus BLEU with sacrebleu's default settings (0-100), one reference per variant; lower means "
        "more diverse phrasing.",
        "Test sets take one variant per turn, drawn with the seed; a turn without variants keeps its original "
        "phrasing. Each test set is a BEIR query set (raw form as text, self-contained form as metadata.rewrite) "
        "sharing the benchmark's qrels.",
    ]
    if context.per_turn > 0:
        notes.append(
            f"Generated variants were dropped as near-duplicates when their sentence {context.overlap_metric} "
            f"with the source or a kept variant exceeded {context.max_sentence_score:g}"
            + (
                f", and as meaning changes when their embedding cosine to the source was below "
                f"{context.min_similarity:g} ({context.embedder})"
                if context.min_similarity > 0
                else ""
            )
            + "."
        )
        if context.llm == "baseline":
            notes.append(
                "The offline baseline paraphraser makes deterministic function-word rewrites and reorderings: "
                "it exercises the pipeline, it is not a paraphrase model."
            )
    if context.import_ecast:
        notes.append("Imported rows are kept exactly as given; the filters apply to generated variants only.")
    return notes


builder = StateGraph(
    ParaphraseState, context_schema=ParaphraseContext, input_schema=ParaphraseInput, output_schema=ParaphraseOutput
)
add_fan_out(builder, plan=plan, dispatch=dispatch, work=paraphrase_turn, finish=finish)
builder.add_edge("finish", END)

graph = builder.compile(name="paraphrase")  # the Studio copy: no checkpointer (the server brings its own)
