"""Shortcut diagnostics (evals/measures/shortcuts.py and the audit's ``shortcuts`` node): questions that
copy their gold are flagged and paraphrases are not, query-only BM25 is exactly what the
evaluate job reports, answer leakage and history dependence follow their definitions, and a
flagged benchmark is never reliable."""

from __future__ import annotations

import json
import re
from functools import partial
from pathlib import Path

import pytest

import benchsmith
from benchsmith.agents.seam.backends import ScriptedBackend
from benchsmith.agents.seam.models import ModelSeam
from benchsmith.evals.measures import shortcuts
from benchsmith.evals.measures.audit_verdicts import overall_verdict
from benchsmith.graphs.audit.graph import builder
from benchsmith.graphs.audit.shortcuts import benchmark_shortcuts
from benchsmith.graphs.audit.state import SHORTCUTS_FILE
from benchsmith.graphs.contexts.audit import AuditContext
from benchsmith.graphs.runtime.resources import register_embedder, register_model
from benchsmith.graphs.runtime.runner import run_job
from benchsmith.stores.formats.beir import load_benchmark
from benchsmith.stores.persistence.workspace import Workspace
from tests.audit_fixtures import judge_reply, write_audit_benchmark
from tests.audit_runs import beir_view
from tests.embedders import HashingEmbedder

# (document, a question copying its words, a paraphrase: the same meaning in other words)
TOPICS = [
    (
        "The zorbium furnace melts copper ingots at twelve hundred degrees.",
        "Which zorbium furnace melts copper ingots at twelve hundred degrees?",
        "What heater turns bars of reddish metal liquid, and how hot does it get?",
    ),
    (
        "Quaxil lanterns glow green when the harbour tide rises.",
        "When do quaxil lanterns glow green in the harbour tide?",
        "Which lamps change colour as the sea level near the port goes up?",
    ),
    (
        "Merolite tiles crack during frost unless sealed with resin.",
        "Do merolite tiles crack during frost unless sealed with resin?",
        "How can I keep ceramic floor squares from splitting in freezing weather?",
    ),
    (
        "Plinthane pumps move brine through the desalination pipes every hour.",
        "How often do plinthane pumps move brine through desalination pipes?",
        "What pushes salty water along the purification tubing, and how frequently?",
    ),
    (
        "Vexonium cables carry telegraph signals beneath the northern lake.",
        "Which vexonium cables carry telegraph signals beneath the northern lake?",
        "What wires transmit coded messages under the water up north?",
    ),
    (
        "Drabulite bricks insulate bakery ovens against heat loss.",
        "Do drabulite bricks insulate bakery ovens against heat loss?",
        "Which building blocks stop bread kilns from wasting warmth?",
    ),
    (
        "Kestrine valves regulate steam pressure inside locomotive boilers.",
        "What do kestrine valves regulate inside locomotive boilers?",
        "Which fittings control vapour force within train engines?",
    ),
    (
        "Morvane sails resist mildew on long ocean voyages.",
        "Do morvane sails resist mildew on long ocean voyages?",
        "What canvas stays free of mould during lengthy sea trips?",
    ),
]
FILLER = [
    "Harbour records list the ships that arrived this season.",
    "The bakery guild elects its warden every spring.",
    "Telegraph offices close on public holidays.",
    "Copper prices rose after the northern mines flooded.",
]


def write_single_turn_benchmark(directory: Path, form: int) -> Path:
    """A BEIR directory: one question per topic (``form`` 1: copying, 2: paraphrased)."""
    (directory / "qrels").mkdir(parents=True)
    corpus = [{"_id": f"d{index}", "title": "", "text": topic[0]} for index, topic in enumerate(TOPICS)]
    corpus += [{"_id": f"f{index}", "title": "", "text": text} for index, text in enumerate(FILLER)]
    queries = [{"_id": f"q{index}", "text": topic[form]} for index, topic in enumerate(TOPICS)]
    (directory / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in corpus), encoding="utf-8")
    (directory / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries), encoding="utf-8")
    (directory / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"q{index}\td{index}\t1\n" for index in range(len(TOPICS))),
        encoding="utf-8",
    )
    return directory


def summary_of(directory: Path) -> dict:
    return benchmark_shortcuts(load_benchmark(directory, Workspace.resolve(directory.parent / "ws")))[0]


def test_questions_copying_their_gold_are_lexically_trivial_and_their_paraphrases_are_not(tmp_path):
    copied = summary_of(write_single_turn_benchmark(tmp_path / "copied", 1))
    paraphrased = summary_of(write_single_turn_benchmark(tmp_path / "paraphrased", 2))
    assert copied["lexical_overlap"]["mean"] > shortcuts.TRIVIAL_MEAN_OVERLAP
    assert copied["flags"] == ["lexically_trivial"]
    assert paraphrased["lexical_overlap"]["mean"] < shortcuts.REFERENCE_OVERLAP["mean"]
    assert paraphrased["flags"] == []
    # BM25 with the question alone profits from the copying: every copied question finds its gold first.
    assert copied["query_only"]["bm25"]["current"] == {"R@10": 1.0, "RR@10": 1.0}
    assert paraphrased["query_only"]["bm25"]["current"]["RR@10"] < 0.5
    assert sum(copied["lexical_overlap"]["histogram"]["counts"]) == len(TOPICS) == copied["turns"]
    # Single-turn: no history to gain from, no rewrite, no answers.
    assert copied["history_gain"] is None and copied["query_only"]["bm25"]["rewrite"] is None
    assert copied["answer_leak_rate"] is None
    assert set(copied) == {
        "turns",
        "lexical_overlap",
        "query_only",
        "answer_leak_rate",
        "history_gain",
        "ill_formed",
        "flags",
    }


def test_answer_share_and_leakage_follow_the_definition():
    # Answer stems {densiti, zorbium, gram, measur}; the question holds three of the four.
    assert shortcuts.answer_share(
        "What is the density of zorbium in grams?", "Zorbium density is measured as 17 grams."
    ) == pytest.approx(3 / 4)
    assert shortcuts.leaks_answer("What is the density of zorbium in grams?", "Zorbium density is 17 grams.")
    assert not shortcuts.leaks_answer("How heavy is this metal?", "Zorbium density is 17 grams.")
    assert shortcuts.answer_share("Is it?", "No, it is not.") is None  # no content words to leak
    assert shortcuts.leak_rate({"a": True, "b": False, "c": False, "d": False}) == 0.25
    assert shortcuts.leak_rate({}) is None


def test_overlap_histogram_bins_and_the_flags_limits():
    histogram = shortcuts.overlap_histogram([0.0, 0.05, 0.1, 0.55, 0.99, 1.0])
    assert histogram["counts"] == [2, 1, 0, 0, 0, 1, 0, 0, 0, 2]  # 1.0 falls in the last, closed bin
    assert sum(shortcuts.REFERENCE_OVERLAP_HISTOGRAM["counts"]) == 58
    assert shortcuts.shortcut_flags(0.9, 0.5, 0.2, 0.2) == ["lexically_trivial", "answer_leak", "ill_formed"]
    assert shortcuts.shortcut_flags(0.6, 0.0, -0.01, 0.0) == ["history_free"]
    assert shortcuts.shortcut_flags(0.6, None, None, 0.01) == []


def test_a_flagged_benchmark_is_never_reliable():
    judgments = {
        f"q{index}": {
            "judge": {"alignment": {"score": 5, "rationale": ""}, "choice": {"slot": 1, "doc_id": "d", "rationale": ""}}
        }
        for index in range(20)
    }
    discriminability = {"confirmed_missing_gold": 0, "gold_pick_rate": 1.0}
    assert overall_verdict(judgments, discriminability)["label"] == "reliable"
    for flag in shortcuts.FLAGS:
        verdict = overall_verdict(judgments, discriminability, shortcut_flags=[flag])
        assert verdict["label"] == "usable with caveats" and flag in verdict["explanation"]
    worse = overall_verdict(
        {
            **judgments,
            "bad": {
                "judge": {
                    "alignment": {"score": 1, "rationale": ""},
                    "choice": {"slot": 1, "doc_id": "d", "rationale": ""},
                }
            },
        },
        {"confirmed_missing_gold": 6, "gold_pick_rate": 1.0},
        shortcut_flags=["answer_leak"],
    )
    assert worse["label"] == "unreliable"  # a flag never makes a verdict better


def test_history_that_retrieval_does_not_need_is_flagged_history_free(tmp_path):
    """Conversations whose every turn names its topic: the history adds nothing to BM25."""
    directory = tmp_path / "standalone"
    (directory / "qrels").mkdir(parents=True)
    corpus = [{"_id": f"d{index}", "title": "", "text": topic[0]} for index, topic in enumerate(TOPICS)]
    queries = [
        {
            "_id": f"c{index // 2}_t{index % 2}",
            "text": topic[1],
            "metadata": {"conversation_id": f"c{index // 2}", "turn": index % 2, "question": topic[1]},
        }
        for index, topic in enumerate(TOPICS)
    ]
    (directory / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in corpus), encoding="utf-8")
    (directory / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries), encoding="utf-8")
    (directory / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n"
        + "".join(f"{query['_id']}\td{index}\t1\n" for index, query in enumerate(queries)),
        encoding="utf-8",
    )
    summary = summary_of(directory)
    assert summary["history_gain"] is not None and summary["history_gain"] <= 0
    assert "history_free" in summary["flags"]


def test_the_audits_query_only_bm25_is_what_evaluate_reports_and_its_flags_reach_the_verdict(tmp_path):
    """A conversational benchmark with answers (the audit fixture): the audit's shortcuts.json
    against ``benchsmith.evaluate(retrievers=["bm25"], histories=["current"])``."""
    turns, corpus = write_audit_benchmark(tmp_path / "bench")
    benchmark = beir_view(turns, corpus)
    workspace = Workspace.resolve(tmp_path / "ws")
    judges = {
        "scripted:judge-a": ModelSeam(ScriptedBackend(replier=judge_reply, model="judge-a")),
        "scripted:judge-b": ModelSeam(ScriptedBackend(replier=partial(judge_reply, strict=True), model="judge-b")),
    }
    for spec, seam in judges.items():
        register_model(spec, seam)
    context = AuditContext(workspace=str(workspace.root), embedder=register_embedder(HashingEmbedder()))
    outcome = run_job(
        builder,
        job="audit",
        workspace=workspace,
        run_id="audit",
        context=context,
        settings={},
        inputs={"run_id": "audit", "benchmark": str(benchmark), "judges": list(judges)},
        max_concurrency=2,
    )
    summary = json.loads((workspace.run_dir("audit") / SHORTCUTS_FILE).read_text(encoding="utf-8"))
    evaluation = benchsmith.evaluate(
        benchmark,
        retrievers=["bm25"],
        histories=["current"],
        measures=["R@10", "RR@10"],
        workspace=workspace.root,
        run_id="evaluate",
    )
    (scores,) = evaluation.aggregate.values()
    current = summary["query_only"]["bm25"]["current"]
    assert current["R@10"] == scores["R@10"] and current["RR@10"] == scores["RR@10"]
    assert 0 < current["R@10"] < 1  # follow-ups ("And its hardness?") lack their topic without the history
    assert summary["history_gain"] > 0
    # Every answer restates its question ("The density of zorbium is 17 grams."): leaked.
    assert summary["answer_leak_rate"] == 1.0 and "answer_leak" in summary["flags"]
    assert outcome.values["shortcut_flags"] == summary["flags"]
    results = json.loads(Path(outcome.values["report"]["results"]).read_text(encoding="utf-8"))
    assert results["verdict"]["label"] != "reliable" and "answer_leak" in results["verdict"]["explanation"]
    report = Path(outcome.values["report"]["markdown"]).read_text(encoding="utf-8")
    assert "## Shortcuts" in report and "answer\\_leak" in report


@pytest.mark.slow
def test_the_stdlib_human_questions_raise_no_shortcut_flag(tmp_path):
    """The hand-labelled set over the stdlib corpus (chunked as ingest does, before
    deduplication and the quality filter; no embedding): the human reference itself is clean."""
    from benchsmith.stores.formats.benchmark_files import write_beir_qrels
    from benchsmith.stores.formats.labelled_questions import CorpusChunk, read_labelled_questions, resolve_gold
    from benchsmith.stores.persistence.jsonl import write_jsonl_atomic
    from tests.validity_fixtures import DATA_FILE, stdlib_chunks

    chunks = stdlib_chunks()
    questions = read_labelled_questions(DATA_FILE)
    gold = resolve_gold(
        questions, [CorpusChunk(chunk.id, chunk.doc_id, chunk.text) for chunk in chunks.values()]
    ).gold_ids
    directory = tmp_path / "stdlib"
    write_jsonl_atomic(
        directory / "corpus.jsonl",
        ({"_id": chunk.id, "title": chunk.title, "text": chunk.text} for chunk in chunks.values()),
    )
    write_jsonl_atomic(
        directory / "queries.jsonl", ({"_id": question.id, "text": question.question} for question in questions)
    )
    write_beir_qrels(
        directory / "qrels" / "test.tsv",
        [(question.id, chunk_id, 1) for question in questions for chunk_id in gold[question.id]],
    )
    summary = summary_of(directory)
    assert summary["turns"] == len(questions) == 58
    assert summary["flags"] == []
    assert summary["lexical_overlap"]["mean"] == pytest.approx(shortcuts.REFERENCE_OVERLAP["mean"], abs=0.02)


def test_the_cli_prints_the_shortcut_flags_and_the_overlap_statistics(tmp_path):
    from typer.testing import CliRunner

    from benchsmith.cli import app

    turns, corpus = write_audit_benchmark(tmp_path / "bench")
    register_model("scripted:judge-cli", ModelSeam(ScriptedBackend(replier=judge_reply, model="judge-cli")))
    embedder = register_embedder(HashingEmbedder())
    result = CliRunner(env={"COLUMNS": "200"}).invoke(
        app,
        [
            "audit",
            str(turns),
            "--corpus",
            str(corpus),
            "--judge",
            "scripted:judge-cli",
            "--embedder",
            embedder,
            "--run-id",
            "cli",
            "-w",
            str(tmp_path / "ws"),
        ],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "ws" / "runs" / "cli" / SHORTCUTS_FILE).read_text(encoding="utf-8"))
    overlap = summary["lexical_overlap"]
    assert f"{overlap['mean']:.2f} / {overlap['median']:.2f} / {overlap['p90']:.2f}" in result.output
    assert summary["flags"] and re.search(r"shortcut flags\W+" + re.escape(", ".join(summary["flags"])), result.output)
    assert "verdict: reliable" not in result.output
