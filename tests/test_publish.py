"""A synthesized benchmark with labelled turns (an unanswerable turn asking about a held-out chunk,
an underspecified turn, a multi-passage turn) through the synthesis export, `benchsmith publish`
in MTRAG's layout and as a Hugging Face dataset folder, and `evaluate`'s per-label breakdowns.

The conversations are written here (the dialogue graph's turn types are built elsewhere); the
collection holds a near-duplicate of the held-out chunk, planted with dedup off, which no
export may keep."""

from __future__ import annotations

import json
import os
import random
import shutil

import pytest
from langgraph.runtime import Runtime
from typer.testing import CliRunner

import benchsmith
from benchsmith.cli import app
from benchsmith.graphs.contexts.synthesize import SynthesisContext
from benchsmith.graphs.ingest import IngestContext
from benchsmith.graphs.ingest import builder as ingest_builder
from benchsmith.graphs.runtime.resources import chroma_client, register_embedder
from benchsmith.graphs.runtime.runner import run_job
from benchsmith.graphs.synthesis.run import export
from benchsmith.stores.formats.beir import load_benchmark, read_beir_qrels
from benchsmith.stores.formats.turn_labels import read_turn_labels
from benchsmith.stores.persistence.jsonl import load_jsonl, write_jsonl_atomic
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.vectors import VectorStore
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.corpus.dedup import _fingerprint, char_shingles, jaccard
from benchsmith.tools.retrieval.embedding import ChromaEmbeddingFunction
from tests.embedders import HashingEmbedder

TOPICS = ["chroma", "bm25", "fusion", "rerank", "nugget", "judge", "cache", "chunk"]
RUN = "synth-labels"
VOCABULARY = (
    "apple anchor basin cobalt delta ember falcon garnet harbor island jasper kettle lantern meadow nickel "
    "orchid pepper quartz raven saddle timber umber velvet walnut yonder zephyr amber bramble cinder dune "
    "fennel glacier hazel ivory juniper kelp lilac marble nutmeg onyx"
).split()


def document(i: int) -> str:
    """Documents share a template but each has words of its own: no two are near-duplicates."""
    topic = TOPICS[i % len(TOPICS)]
    own = " ".join(random.Random(i).sample(VOCABULARY, 12))
    return (
        f"Document {i} explains {topic} in detail: {own}. The {topic} component stores its settings in a "
        f"file, reads them at start-up and logs every change it makes to them."
    )


def turn(index: int, question: str, gold: list[str], **labels) -> dict:
    return {
        "index": index,
        "question": question,
        "question_unpolished": question,
        "rewrite": f"{question} (whole)",
        "response": f"Answer {index}.",
        "gold_ids": gold,
        "switch": "start" if index == 0 else "follow-up",
        "similarity_to_previous": None if index == 0 else 0.9,
        **labels,
    }


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory):
    root = tmp_path_factory.mktemp("publish")
    workspace = Workspace.resolve(root / "ws")
    corpus_dir = root / "docs"
    corpus_dir.mkdir()
    for i in range(16):
        (corpus_dir / f"doc{i:02}.txt").write_text(document(i), encoding="utf-8")
    # A near-duplicate of document 3: one word changed (dedup off at ingestion, so both are in the collection).
    (corpus_dir / "copy03.txt").write_text(document(3).replace("logs every", "records every"), encoding="utf-8")
    context = IngestContext(
        workspace=str(workspace.root), embedder=register_embedder(HashingEmbedder()), min_chars=20, dedup_threshold=1.0
    )
    run_job(
        ingest_builder,
        job="ingest",
        workspace=workspace,
        run_id="ingest",
        inputs={"run_id": "ingest", "sources": [str(corpus_dir)], "collection": "docs"},
        context=context,
        settings={},
    )
    store = VectorStore.open_existing(
        chroma_client(workspace, None), "docs", lambda spec: ChromaEmbeddingFunction(spec=spec)
    )
    chunks = {text: chunk_id for page in store.iter_all() for chunk_id, text in zip(page["ids"], page["documents"])}
    ids = {
        "held": chunks[document(3)],
        "copy": chunks[document(3).replace("logs every", "records every")],
        **{f"d{i}": chunks[document(i)] for i in (0, 1, 2, 5, 6, 7)},
    }
    dialogues = [
        {
            "conversation_id": "c0000",
            "cluster_id": 0,
            "seed": 0,
            "turns": [
                turn(
                    0,
                    "Where does chroma keep its settings?",
                    [ids["d0"]],
                    answerability="answerable",
                    question_type="factoid",
                    standalone=True,
                ),
                turn(
                    1,
                    "And what does the judge component log?",
                    [],
                    answerability="unanswerable",
                    question_type="explanation",
                    standalone=False,
                    held_out_ids=[ids["held"]],
                ),
                turn(
                    2,
                    "How do bm25 and fusion store settings, compared?",
                    [ids["d1"], ids["d2"]],
                    answerability="answerable",
                    question_type="comparison",
                    standalone=True,
                ),
            ],
        },
        {
            "conversation_id": "c0001",
            "cluster_id": 1,
            "seed": 0,
            "turns": [
                turn(
                    0,
                    "Which file holds the settings?",
                    [],
                    answerability="underspecified",
                    question_type="factoid",
                    standalone=True,
                ),
                turn(
                    1,
                    "The one of the judge component.",
                    [ids["d5"]],
                    answerability="answerable",
                    question_type="factoid",
                    standalone=False,
                ),
                turn(
                    2,
                    "Does the cache log changes?",
                    [ids["d6"], ids["d7"]],
                    answerability="partial",
                    question_type="yes/no",
                    standalone=False,
                ),
            ],
        },
    ]
    run_dir = RunDirectory(workspace, RUN)
    run_dir.start("synthesize", {"collection": "docs", "conversations": 2, "turns": 3, "llm": "baseline"})
    write_jsonl_atomic(run_dir.file("dialogues.jsonl"), dialogues)
    output = export(
        {"run_id": RUN, "collection": "docs", "conversations": 2, "turns": 3},
        Runtime(context=SynthesisContext(workspace=str(workspace.root), cluster_size=4)),
    )
    run_dir.finish(output)
    return {
        "root": root,
        "workspace": workspace,
        "run_dir": run_dir.path,
        "ids": ids,
        "dialogues": dialogues,
        "documents": len(chunks),
    }


def test_the_planted_copy_is_a_near_duplicate_by_the_dedup_rule(synthesized):
    original, copy = document(3), document(3).replace("logs every", "records every")
    assert jaccard(_fingerprint(char_shingles(original)), _fingerprint(char_shingles(copy))) >= 0.8


def test_the_export_leaves_out_the_held_out_chunk_and_its_near_duplicate_and_lists_every_turns_labels(synthesized):
    beir = synthesized["run_dir"] / "beir"
    ids = synthesized["ids"]
    exported = {record["_id"] for record in load_jsonl(beir / "corpus.jsonl")}
    assert ids["held"] not in exported and ids["copy"] not in exported
    assert len(exported) == synthesized["documents"] - 2
    qrels = read_beir_qrels(beir / "qrels" / "test.tsv")
    assert "c0000_t1" not in qrels and "c0001_t0" not in qrels  # unanswerable, underspecified: no qrels
    assert qrels["c0000_t2"] == {ids["d1"]: 1, ids["d2"]: 1}  # every gold of the multi-passage turn
    labels = read_turn_labels(beir / "turn_labels.tsv")
    assert len(labels) == 6
    assert (labels["c0000_t1"].answerability, labels["c0000_t1"].question_type, labels["c0000_t1"].standalone) == (
        "unanswerable",
        "explanation",
        False,
    )
    assert labels["c0001_t2"].question_type == "yes/no"
    query = next(q for q in load_jsonl(beir / "queries.jsonl") if q["_id"] == "c0001_t0")
    assert query["metadata"]["answerability"] == "underspecified"
    trec = (synthesized["run_dir"] / "qrels.trec").read_text(encoding="utf-8")
    assert "c0000_t1" not in trec and ids["d2"] in trec


def test_the_export_lists_the_chunks_it_leaves_out_and_the_benchmark_reads_them(synthesized, tmp_path):
    """held_out.tsv names the held-out chunk and its near-duplicate (with the chunk it copies);
    an export written before the file existed falls back on the turns' held_out_ids."""
    ids = synthesized["ids"]
    lines = (synthesized["run_dir"] / "beir" / "held_out.tsv").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "corpus-id\theld-out-id\tjaccard"
    assert sorted(line.split("\t")[:2] for line in lines[1:]) == sorted(
        [[ids["held"], ids["held"]], [ids["copy"], ids["held"]]]
    )
    assert load_benchmark(synthesized["run_dir"], synthesized["workspace"]).held_out == {
        ids["held"]: ids["held"],
        ids["copy"]: ids["held"],
    }
    older = tmp_path / "runs" / RUN
    shutil.copytree(synthesized["run_dir"], older)
    (older / "beir" / "held_out.tsv").unlink()
    assert load_benchmark(older, synthesized["workspace"]).held_out == {ids["held"]: ids["held"]}
    assert load_benchmark(older / "beir", synthesized["workspace"]).held_out == {ids["held"]: ids["held"]}


def test_publish_mtrag_writes_a_layout_that_reads_back_with_the_same_turns_labels_and_qrels(synthesized, tmp_path):
    out = tmp_path / "mtrag"
    result = benchsmith.publish(RUN, format="mtrag", out=out, workspace=synthesized["workspace"].root)
    assert (result.conversations, result.turns, result.documents) == (2, 6, synthesized["documents"] - 2)
    conversations = json.loads((out / "conversations" / "conversations.json").read_text(encoding="utf-8"))
    messages = conversations[1]["messages"]
    assert [m["speaker"] for m in messages] == ["user", "agent"] * 3
    assert messages[0]["enrichments"]["Answerability"] == ["UNDERSPECIFIED"]
    assert messages[2]["enrichments"]["Multi-Turn"] == ["Clarification"]  # the user's answer to the clarifying question
    assert messages[4]["enrichments"]["Question Type"] == ["Yes/No"]
    assert [c["document_id"] for c in messages[5]["contexts"]] == [synthesized["ids"]["d6"], synthesized["ids"]["d7"]]
    benchmark = load_benchmark(out, synthesized["workspace"])
    assert len(benchmark.queries) == 6
    assert benchmark.qrels == {
        f"{cid}<::>{n + 1}": {gold: 1 for gold in t["gold_ids"]}
        for cid, d in (("c0000", synthesized["dialogues"][0]), ("c0001", synthesized["dialogues"][1]))
        for n, t in enumerate(d["turns"])
        if t["gold_ids"]
    }
    unanswerable = benchmark.queries_by_id["c0000<::>2"]
    assert (unanswerable.answerability, unanswerable.question_type, unanswerable.standalone) == (
        "unanswerable",
        "explanation",
        False,
    )
    assert benchmark.queries_by_id["c0000<::>3"].rewrite == "How do bm25 and fusion store settings, compared? (whole)"
    assert [benchmark.queries_by_id[f"c0001<::>{n + 1}"].switch for n in range(3)] == [
        turn["switch"] for turn in synthesized["dialogues"][1]["turns"]
    ]  # our Topic Switch enrichment
    corpus = {record["_id"] for record in load_jsonl(benchmark.corpus_path)}
    assert synthesized["ids"]["held"] not in corpus and synthesized["ids"]["copy"] not in corpus


def test_publish_hf_writes_a_folder_datasets_loads_with_a_card_of_settings_labels_and_audit(
    synthesized, tmp_path, monkeypatch
):
    datasets = pytest.importorskip("datasets")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    out = tmp_path / "hf"
    benchsmith.publish(RUN, format="hf", out=out, workspace=synthesized["workspace"].root)
    corpus = datasets.load_dataset(str(out), "corpus", split="test", cache_dir=str(tmp_path / "cache"))
    queries = datasets.load_dataset(str(out), "queries", split="test", cache_dir=str(tmp_path / "cache"))
    qrels = datasets.load_dataset(str(out), "qrels", split="test", cache_dir=str(tmp_path / "cache"))
    conversations = datasets.load_dataset(str(out), "conversations", split="test", cache_dir=str(tmp_path / "cache"))
    assert corpus.num_rows == synthesized["documents"] - 2 and synthesized["ids"]["held"] not in corpus["_id"]
    assert queries.num_rows == 6
    by_id = {row["_id"]: row for row in queries}
    assert by_id["c0000_t1"]["answerability"] == "unanswerable" and by_id["c0000_t1"]["standalone"] is False
    assert sorted(zip(qrels["query-id"], qrels["corpus-id"])) == sorted(
        (f"c000{c}_t{t['index']}", gold)
        for c, d in enumerate(synthesized["dialogues"])
        for t in d["turns"]
        for gold in t["gold_ids"]
    )
    assert conversations.num_rows == 2
    assert conversations[0]["turns"][1]["held_out_ids"] == [synthesized["ids"]["held"]]
    card = (out / "README.md").read_text(encoding="utf-8")
    assert card.startswith("---\n") and "config_name: conversations" in card
    assert "| collection | docs |" in card and "| unanswerable | 1 |" in card
    assert "None: no audit of this benchmark exists" in card
    # An audit of the run: its verdict goes into the card.
    audit = RunDirectory(synthesized["workspace"], "audit-of-it")
    audit.start("audit", {"benchmark": RUN, "judges": ["baseline"]})
    audit.finish({"verdict": {"label": "usable with caveats", "explanation": "3% noise."}})
    benchsmith.publish(str(synthesized["run_dir"]), format="hf", out=out, workspace=synthesized["workspace"].root)
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "Audit run `audit-of-it`: **usable with caveats**. 3% noise." in card


def test_the_cli_publishes_and_refuses_an_unknown_format_with_exit_2(synthesized, tmp_path):
    runner = CliRunner()
    workspace = str(synthesized["workspace"].root)
    bad = runner.invoke(app, ["publish", RUN, "--format", "parquet", "--out", str(tmp_path / "x"), "-w", workspace])
    assert bad.exit_code == 2 and "unknown --format 'parquet'" in bad.output
    missing = runner.invoke(
        app, ["publish", "no-such-run", "--format", "mtrag", "--out", str(tmp_path / "x"), "-w", workspace]
    )
    assert missing.exit_code == 2 and "no-such-run" in missing.output
    done = runner.invoke(app, ["publish", RUN, "--format", "mtrag", "--out", str(tmp_path / "m"), "-w", workspace])
    assert done.exit_code == 0, done.output
    assert (tmp_path / "m" / "retrieval_tasks" / "docs" / "qrels" / "dev.tsv").is_file()


def test_evaluate_on_the_synthesized_benchmark_breaks_down_by_label_and_sets_the_unjudged_turns_apart(synthesized):
    result = benchsmith.evaluate(
        synthesized["run_dir"],
        retrievers=["bm25"],
        histories=["current"],
        measures=["nDCG@10", "R@5"],
        workspace=str(synthesized["workspace"].root),
        run_id="eval-labels",
    )
    results = json.loads(result.report["results"].read_text(encoding="utf-8"))
    name = results["configurations"][0]["name"]
    assert set(results["per_query"][name]) == {"c0000_t0", "c0000_t2", "c0001_t1", "c0001_t2"}
    assert {group: values["queries"] for group, values in results["by_answerability"][name].items()} == {
        "answerable": 3,
        "partial": 1,
    }
    assert {group: values["queries"] for group, values in results["by_question_type"][name].items()} == {
        "comparison": 1,
        "factoid": 2,
        "yes/no": 1,
    }
    assert {group: values["queries"] for group, values in results["by_standalone"][name].items()} == {
        "non-standalone": 2,
        "standalone": 2,
    }
    factoid = [results["per_query"][name][q]["nDCG@10"] for q in ("c0000_t0", "c0001_t1")]
    assert results["by_question_type"][name]["factoid"]["nDCG@10"] == pytest.approx(sum(factoid) / 2)
    assert results["unjudged"]["queries"] == 2
    assert results["unjudged"]["by_answerability"] == {"unanswerable": 1, "underspecified": 1}
    assert results["unjudged"]["top_score"][name]["answerable"]["queries"] == 3  # the partial turn is not answerable


@pytest.fixture(autouse=True)
def _no_workspace_variable():
    os.environ.pop("BENCHSMITH_WORKSPACE", None)


def test_dense_evaluation_reuses_the_collections_vectors_though_the_corpus_holds_chunks_out(synthesized):
    """The exported corpus leaves out the held-out chunk and its near-duplicate, so it is a subset of
    the collection the benchmark came from: the dense retriever takes its vectors from there and
    embeds the queries alone, not the corpus again."""
    embedder = HashingEmbedder()
    result = benchsmith.evaluate(
        synthesized["run_dir"],
        retrievers=["dense"],
        histories=["current"],
        embedder=register_embedder(embedder),
        measures=["nDCG@10"],
        workspace=str(synthesized["workspace"].root),
        run_id="eval-reuse",
    )
    queries = len(load_jsonl(synthesized["run_dir"] / "beir" / "queries.jsonl"))
    assert embedder.texts_embedded == queries
    run_file = result.run_dir / result.results()["configurations"][0]["run_file"]
    ranked = {line.split()[2] for line in run_file.read_text(encoding="utf-8").splitlines()}
    assert synthesized["ids"]["held"] not in ranked and synthesized["ids"]["copy"] not in ranked
