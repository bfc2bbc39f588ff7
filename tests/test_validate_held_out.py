"""`benchsmith validate` with labels made over the ingested collection, against a synthesized
benchmark whose unanswerable and partial turns hold chunks out of its corpus: the label rows
naming held-out chunks are dropped, questions left without gold are left out, and the result,
the report and the command's output name them; an id that is neither in the corpus nor held out
still stops the command (exit 2) before any run record."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

import benchsmith
from benchsmith.cli import app
from benchsmith.graphs.runtime.resources import register_embedder
from benchsmith.stores.formats.beir import load_benchmark
from benchsmith.stores.persistence.jsonl import load_jsonl
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.corpus.held_out import drop_held_out
from tests.embedders import HashingEmbedder
from tests.synthesis_fixtures import synthesize
from tests.turn_type_fixtures import build_rich_collection

runner = CliRunner(env={"COLUMNS": "400"})
RETRIEVERS = ["bm25", "dense", "hybrid:rrf(dense,bm25)"]


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory):
    """A baseline synthesis run with unanswerable and partial turns over 40 one-chunk documents."""
    root = tmp_path_factory.mktemp("validate-held-out")
    workspace = Workspace.resolve(root / "ws")
    build_rich_collection(workspace, root / "corpus", documents=40)
    synthesize(workspace, "held", conversations=8, turns=5, unanswerable_rate=0.4, partial_rate=0.3)
    run_dir = RunDirectory(workspace, "held").path
    held = sorted(load_benchmark(run_dir, workspace).held_out)
    corpus = {record["_id"]: record["text"] for record in load_jsonl(run_dir / "beir" / "corpus.jsonl")}
    assert len(held) >= 2 and not set(held) & set(corpus)
    return {"root": root, "workspace": workspace, "run_dir": run_dir, "held": held, "corpus": corpus}


def question(question_id: str, text: str, *chunk_ids: str) -> dict:
    return {
        "id": question_id,
        "question": text,
        "gold": [
            {"chunk_id": chunk_id, "document": chunk_id.split(":")[0], "evidence": "kept"} for chunk_id in chunk_ids
        ],
    }


def rarest_words(text: str, spread: Counter, count: int = 3) -> list[str]:
    words = list(dict.fromkeys(word for word in text.lower().split() if word.isalpha()))
    return sorted(words, key=lambda word: (spread[word], words.index(word)))[:count]


def labels_over_the_collection(synthesized, path: Path, extra: tuple[dict, ...] = ()) -> Path:
    """A question per corpus chunk asked in the chunk's own rare words, one whose gold is a corpus
    chunk and a held-out one, and two whose every gold chunk is held out."""
    held = synthesized["held"]
    corpus = sorted(synthesized["corpus"].items())
    spread = Counter(word for _, text in corpus for word in set(text.lower().split()))
    rows = [
        question(f"q{number:02}", f"What does the {' '.join(rarest_words(text, spread))} limit control?", chunk_id)
        for number, (chunk_id, text) in enumerate(corpus[:14])
    ]
    first = sorted(synthesized["corpus"])[0]
    rows += [
        question("mixed", "Which limit controls how many records are kept, here or there?", first, held[0]),
        question("lost", "What does the held-out page say about its switch?", held[1]),
        question("lost-too", "And what does the other held-out page report?", held[0]),
        *extra,
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_labels_naming_held_out_chunks_are_dropped_and_named_in_the_result_and_the_report(synthesized, tmp_path):
    held = synthesized["held"]
    labels = labels_over_the_collection(synthesized, tmp_path / "mine.jsonl")
    result = benchsmith.validate(
        synthesized["run_dir"],
        human=labels,
        retrievers=RETRIEVERS,
        embedder=register_embedder(HashingEmbedder()),
        depth=20,
        bootstrap=50,
        workspace=synthesized["workspace"].root,
        run_id="held-labels",
    )
    dropped = result.held_out
    assert dropped.rows == (("mixed", held[0]), ("lost", held[1]), ("lost-too", held[0]))
    assert dropped.questions_left_out == ("lost", "lost-too")
    assert dropped.chunks == {held[0]: held[0], held[1]: held[1]}
    assert dropped.benchmark_chunks == len(held) and dropped.documents == 0
    validity = result.results()
    assert validity["human"]["queries"] == 15  # 14 + "mixed", which keeps its corpus chunk
    assert validity["held_out"]["questions_left_out"] == ["lost", "lost-too"]
    # Retrievers on the human set see the synthetic corpus: the held-out chunks are in neither.
    human_dir = result.run_dir / "human"
    assert (human_dir / "corpus.jsonl").read_bytes() == (synthesized["run_dir"] / "beir" / "corpus.jsonl").read_bytes()
    qrels = (human_dir / "qrels" / "test.tsv").read_text(encoding="utf-8")
    assert not any(chunk_id in qrels for chunk_id in held) and "mixed" in qrels and "lost" not in qrels
    assert {record["_id"] for record in load_jsonl(human_dir / "queries.jsonl")} >= {"mixed"}
    assert not {"lost", "lost-too"} & {record["_id"] for record in load_jsonl(human_dir / "queries.jsonl")}
    assert any("holds out" in note and "left out" in note for note in validity["notes"])
    for report in (result.report["markdown"], result.report["html"]):
        text = report.read_text(encoding="utf-8")
        assert "Held-out chunks" in text and held[0] in text and held[1] in text
        assert "mixed" in text and "lost-too" in text


def test_the_command_names_the_held_out_chunks_rows_and_questions(synthesized, tmp_path):
    labels = labels_over_the_collection(synthesized, tmp_path / "mine.jsonl")
    result = runner.invoke(
        app,
        [
            "validate",
            str(synthesized["run_dir"]),
            "--human",
            str(labels),
            "--embedder",
            register_embedder(HashingEmbedder()),
            "--depth",
            "20",
            "--bootstrap",
            "50",
            "-w",
            str(synthesized["workspace"].root),
            "--run-id",
            "held-cli",
            *(option for spec in RETRIEVERS for option in ("--retriever", spec)),
        ],
    )
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    held = synthesized["held"]
    assert "3 label row(s) dropped" in output and f"mixed {held[0]}" in output and f"lost {held[1]}" in output
    assert "2 question(s) left out, all their gold held out (lost, lost-too)" in output


def test_an_id_neither_in_the_corpus_nor_held_out_exits_2_naming_file_line_and_question(synthesized, tmp_path):
    labels = labels_over_the_collection(
        synthesized, tmp_path / "stray.jsonl", (question("stray", "Where is the missing page?", "nowhere.txt:0-10"),)
    )
    workspace = tmp_path / "ws"
    result = runner.invoke(
        app,
        [
            "validate",
            str(synthesized["run_dir"]),
            "--human",
            str(labels),
            "-w",
            str(workspace),
            "--run-id",
            "stray",
            *(option for spec in RETRIEVERS for option in ("--retriever", spec)),
        ],
    )
    output = " ".join(result.output.split())
    assert result.exit_code == 2, result.output
    assert str(labels) in output and "'nowhere.txt:0-10' (line 18, question 'stray')" in output
    assert not RunDirectory(Workspace(workspace), "stray").exists()
    assert not (workspace / "runs").exists() or not list((workspace / "runs").iterdir())


def beir_over_the_collection(synthesized, directory: Path, stray: str | None = None) -> Path:
    """A BEIR human set whose corpus is the whole collection (the held-out chunks too) and whose
    qrels name a held-out chunk."""
    held, corpus = synthesized["held"], synthesized["corpus"]
    (directory / "qrels").mkdir(parents=True)
    documents = {**corpus, **{chunk_id: f"The held-out page {chunk_id}." for chunk_id in held}}
    (directory / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": doc_id, "text": text}) + "\n" for doc_id, text in documents.items()),
        encoding="utf-8",
    )
    chosen = sorted(corpus)[:6]
    queries = {f"b{number}": " ".join(corpus[doc_id].split()[4:8]) for number, doc_id in enumerate(chosen)}
    queries["gone"] = "the held-out page"
    (directory / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": query_id, "text": text}) + "\n" for query_id, text in queries.items()),
        encoding="utf-8",
    )
    rows = [(f"b{number}", doc_id) for number, doc_id in enumerate(chosen)] + [("b0", held[0]), ("gone", held[1])]
    rows += [("b1", stray)] if stray else []
    (directory / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{query_id}\t{doc_id}\t1\n" for query_id, doc_id in rows),
        encoding="utf-8",
    )
    return directory


def test_a_beir_set_over_the_collection_loses_the_held_out_documents_and_rows(synthesized, tmp_path):
    held = synthesized["held"]
    human = beir_over_the_collection(synthesized, tmp_path / "beir")
    result = benchsmith.validate(
        synthesized["run_dir"],
        human=human,
        retrievers=RETRIEVERS,
        embedder=register_embedder(HashingEmbedder()),
        depth=20,
        bootstrap=50,
        workspace=synthesized["workspace"].root,
        run_id="held-beir",
    )
    assert result.held_out.rows == (("b0", held[0]), ("gone", held[1]))
    assert result.held_out.questions_left_out == ("gone",) and result.held_out.documents == len(held)
    human_dir = result.run_dir / "human"
    assert (human_dir / "corpus.jsonl").read_bytes() == (synthesized["run_dir"] / "beir" / "corpus.jsonl").read_bytes()
    assert result.results()["human"]["queries"] == 6

    stray = beir_over_the_collection(synthesized, tmp_path / "stray", stray="nowhere.txt:0-10")
    workspace = tmp_path / "ws"
    refused = runner.invoke(
        app,
        [
            "validate",
            str(synthesized["run_dir"]),
            "--human",
            str(stray),
            "-w",
            str(workspace),
            "--run-id",
            "stray-beir",
        ],
    )
    output = " ".join(refused.output.split())
    assert refused.exit_code == 2, refused.output
    assert str(stray / "qrels" / "test.tsv") in output and "'nowhere.txt:0-10' (question 'b1')" in output
    assert not RunDirectory(Workspace(workspace), "stray-beir").exists()


def test_dropping_held_out_judgments_keeps_the_rest_and_names_what_it_dropped():
    """A worked example: q1 keeps its other gold chunk, q2 loses its only one (a near-duplicate
    of a held-out chunk) and is left out, q3 has nothing held out."""
    qrels = {"q1": {"a": 1, "h": 1}, "q2": {"copy": 1}, "q3": {"b": 2, "c": 0}}
    kept, dropped = drop_held_out(qrels, {"h": "h", "copy": "h", "unused": "unused"})
    assert kept == {"q1": {"a": 1}, "q3": {"b": 2, "c": 0}}
    assert dropped.rows == (("q1", "h"), ("q2", "copy")) and dropped.questions_left_out == ("q2",)
    assert dropped.chunks == {"h": "h", "copy": "h"} and dropped.benchmark_chunks == 3
    assert type(dropped).from_json(json.loads(json.dumps(dropped.to_json()))) == dropped
    assert not drop_held_out(qrels, {})[1] and drop_held_out(qrels, {})[0] == qrels
