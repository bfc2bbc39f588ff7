"""The ``finish`` node: the test sets exported (the original and R1..Rn, each a BEIR directory), diversity measured, and the results and report written."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime

from benchsmith.evals.measures.diversity import diversity
from benchsmith.evals.reports.paraphrase_report import paraphrase_report_files
from benchsmith.graphs.contexts.paraphrase import ParaphraseContext
from benchsmith.graphs.paraphrase.inputs import job, read_turns
from benchsmith.graphs.paraphrase.state import (
    BENCHMARK_FILE,
    DIVERSITY_FILE,
    EXAMPLE_TURNS,
    GENERATED_FILE,
    IMPORTED_FILE,
    ORIGINAL,
    PARAPHRASES_FILE,
    QRELS_FILE,
    TEST_SETS_DIR,
    TEST_SETS_FILE,
    UNJOINED_FILE,
    ParaphraseOutput,
    ParaphraseState,
)
from benchsmith.stores.persistence.files import atomic_writer, write_json_atomic
from benchsmith.stores.persistence.jsonl import load_jsonl, write_jsonl_atomic
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.tools.benchmark.test_sets import draw_test_sets


def finish(state: ParaphraseState, runtime: Runtime[ParaphraseContext]) -> ParaphraseOutput:
    """The kept variants, diversity.json, the test sets and the report."""
    context = job.context(runtime)
    run_dir = job.run_dir(runtime, state["run_id"])
    turns = read_turns(run_dir)
    benchmark = _read_json(run_dir.file(BENCHMARK_FILE))
    imported = load_jsonl(run_dir.file(IMPORTED_FILE)) if run_dir.file(IMPORTED_FILE).exists() else []
    unjoined = load_jsonl(run_dir.file(UNJOINED_FILE)) if run_dir.file(UNJOINED_FILE).exists() else []
    generated = (
        {record["turn"]: record for record in load_jsonl(run_dir.file(GENERATED_FILE))}
        if context.paraphrases_per_turn > 0 and run_dir.file(GENERATED_FILE).exists()
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
    figures = diversity(turns, kept, len(unjoined), candidates if context.paraphrases_per_turn > 0 else None)
    write_json_atomic(run_dir.file(DIVERSITY_FILE), figures)
    sets = draw_test_sets(list(turns), _variant_ids(kept), context.test_sets, context.seed)
    write_json_atomic(run_dir.file(TEST_SETS_FILE), sets)
    variants = {variant["variant"]: variant for variant in kept}
    export_test_set(run_dir, ORIGINAL, turns, {}, {}, benchmark["corpus"])
    for name, choice in sets.items():
        export_test_set(run_dir, name, turns, choice, variants, benchmark["corpus"])
    results = _results(context, state, benchmark, turns, figures, kept, candidates, unjoined, sets)
    report_paths = run_dir.write_report(paraphrase_report_files(results))
    return {
        "turns": figures["turns"],
        "paraphrases": figures["paraphrases"],
        "turns_with_paraphrases": figures["turns_with_paraphrases"],
        "unjoined": figures["unjoined"],
        "test_sets": list(sets),
        "diversity": figures,
        "report": report_paths,
    }


def _number(variant: dict[str, Any]) -> int:
    return int(variant["variant"].rsplit(":", 1)[1][1:])


def _variant_ids(variants: list[dict[str, Any]]) -> dict[str, list[str]]:
    by_turn: dict[str, list[str]] = {}
    for variant in variants:
        by_turn.setdefault(variant["turn"], []).append(variant["variant"])
    return by_turn


def _read_json(path: Path) -> dict[str, Any]:
    record: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return record


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
    if context.paraphrases_per_turn > 0:
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
