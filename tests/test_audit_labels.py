"""The audit's turn-label checks (issue 22): a labelled benchmark with a wrongly labelled
unanswerable turn (a corpus chunk answers it), a multi-passage turn with a gold that does not
contribute and a partial turn whose missing part a corpus chunk answers; all rejected, the right
labels confirmed, offline and through the loopback server; the per-label agreement in the job's
result and the CLI's summary; a multi-passage instance's gold is the one asked from first; an
unlabelled benchmark audits as before."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from benchsmith.agents.pool_judge import judgments_schema, stemmed_words
from benchsmith.agents.seam.backends import ModelSettings, ScriptedBackend
from benchsmith.agents.seam.models import ModelSeam, build_seam
from benchsmith.agents.turn_types import ContributionJudge
from benchsmith.cli.audit import print_audit_summary
from benchsmith.graphs.audit.state import INSTANCES_FILE, LABEL_CHECKS_FILE
from benchsmith.graphs.runtime.resources import register_embedder
from benchsmith.jobs.audit import audit as audit_job
from benchsmith.stores.formats.benchmark_files import Dialogue, benchmark_records, write_beir, write_dialogues
from benchsmith.stores.formats.turn_labels import TURN_LABELS_FILE, write_turn_labels
from benchsmith.stores.persistence.jsonl import load_jsonl
from benchsmith.stores.persistence.workspace import Workspace
from tests.audit_fixtures import judge_reply, server_judge, write_audit_benchmark
from tests.audit_runs import audit, results_of
from tests.embedders import HashingEmbedder
from tests.openai_server import FakeOpenAIServer, conversation_messages, requested_schema_name
from tests.turn_type_replies import numbered_passages, sections

FAST_RETRIES = ModelSettings(timeout_s=5.0, backoff_initial_s=0.01, backoff_max_s=0.05, max_attempts=3)
SERVED_JUDGES = ["openai:judge-a", "openai:judge-b"]

CORPUS = {
    "zorbium-density": "Zorbium density: 12 grams per litre.",
    "zorbium-hardness": "Zorbium hardness: 5 mohs.",
    "zorbium-melting": "Zorbium melting point: 900 kelvin.",
    "zorbium-conductivity": "Zorbium conductivity: 3 siemens.",
    "plinthane-density": "Plinthane density: 40 grams per litre.",
    "merolite-hardness": "Merolite hardness: 7 mohs.",
    "morvane-density": "Morvane density: 30 grams per litre.",
    "kestrine-queue": "The kestrine limit for the queue is configured in the queue settings file.",
    "kestrine-cache": "The kestrine limit for the cache is configured in the cache settings file.",
    "vexonium-colour": "Vexonium colour: deep violet under daylight.",
    "plinthane-hardness": "Plinthane hardness: 2 mohs.",
}
# (question, answerability, gold ids, candidate ids, response)
TURNS = [
    ("What is the density of zorbium?", "answerable", ["zorbium-density"], [], "Zorbium density is 12 grams."),
    (
        "What is the boiling point of quaxil in fahrenheit?",
        "unanswerable",
        [],
        [],
        "The documentation does not answer this question.",
    ),
    # Wrongly labelled: merolite-hardness answers it.
    (
        "What is the hardness of merolite in mohs?",
        "unanswerable",
        [],
        [],
        "The documentation does not answer this question.",
    ),
    (
        "What are the density and hardness of zorbium?",
        "answerable",
        ["zorbium-density", "zorbium-hardness"],
        [],
        "Zorbium density is 12 grams per litre and its hardness is 5 mohs.",
    ),
    # Wrongly labelled: plinthane-density gives nothing the answer uses.
    (
        "What are the melting point and conductivity of zorbium?",
        "answerable",
        ["zorbium-melting", "zorbium-conductivity", "plinthane-density"],
        [],
        "Zorbium melting point is 900 kelvin and its conductivity is 3 siemens.",
    ),
    (
        "How is the kestrine limit configured?",
        "underspecified",
        [],
        ["kestrine-queue", "kestrine-cache"],
        "Do you mean the queue or the cache?",
    ),
    (
        "I mean the queue. Where is the kestrine limit for the queue configured?",
        "answerable",
        ["kestrine-queue"],
        [],
        "In the queue settings file.",
    ),
    (
        "What is the density of morvane in grams and its freezing temperature?",
        "partial",
        ["morvane-density"],
        [],
        "Morvane density is 30 grams per litre; the documentation does not cover its freezing temperature.",
    ),
]
# A conversation of its own (the retrievers' pool is drawn for the turn with its history), wrongly
# labelled: plinthane-hardness answers the part the reference answer says is missing.
MISSING_PART_TURNS = [
    (
        "What is the density of plinthane and its hardness?",
        "partial",
        ["plinthane-density"],
        [],
        "Plinthane density is 40 grams per litre; the documentation does not cover the hardness of plinthane.",
    ),
]
WRONG_UNANSWERABLE, WRONG_MULTI, WRONG_PARTIAL = "labelled_t2", "labelled_t4", "missing-part_t0"


def write_labelled_run(directory: Path) -> Path:
    """A synthesis run's files, written by hand: run.json, dialogues.jsonl and the BEIR export
    with turn_labels.tsv."""
    dialogues = [
        Dialogue.model_validate(
            {
                "conversation_id": conversation_id,
                "turns": [
                    {
                        "index": index,
                        "question": question,
                        "question_unpolished": question,
                        "rewrite": question,
                        "response": response,
                        "gold_ids": golds,
                        "switch": "start" if index == 0 else "follow-up",
                        "answerability": answerability,
                        "question_type": "factoid",
                        "standalone": True,
                        "candidate_ids": candidates,
                        "turn_type": "multi-passage" if len(golds) > 1 else answerability,
                    }
                    for index, (question, answerability, golds, candidates, response) in enumerate(turns)
                ],
            }
        )
        for conversation_id, turns in (("labelled", TURNS), ("missing-part", MISSING_PART_TURNS))
    ]
    directory.mkdir(parents=True)
    (directory / "run.json").write_text(json.dumps({"config": {}}), encoding="utf-8")
    write_dialogues(directory / "dialogues.jsonl", dialogues)
    queries, qrels, labels = benchmark_records([dialogue.model_dump() for dialogue in dialogues])
    corpus = [{"_id": doc_id, "title": "", "text": text} for doc_id, text in CORPUS.items()]
    write_beir(directory / "beir", corpus, queries, qrels)
    write_turn_labels(directory / "beir" / TURN_LABELS_FILE, labels)
    return directory


def label_audit(workspace: Workspace, run: Path, run_id: str, models: dict[str, ModelSeam], **options) -> Any:
    # audit() passes the benchmark as `turns` and its corpus; a run directory brings its own corpus.
    return audit(workspace, run, run / "beir" / "corpus.jsonl", run_id, models=models, **options)


def baseline_judges() -> dict[str, ModelSeam]:
    """The offline judge, registered under its own name (registering "baseline" would outlive the test)."""
    return {"offline-judge": ModelSeam(None)}


def rejected_turns(results: dict) -> dict[str, dict]:
    return {item["turn"]: item for item in results["labels"]["rejected"]}


@pytest.fixture
def labelled(tmp_path) -> tuple[Workspace, Path]:
    return Workspace.resolve(tmp_path / "ws"), write_labelled_run(tmp_path / "labelled-run")


def test_offline_judge_rejects_the_wrong_labels_and_confirms_the_right_ones(labelled):
    workspace, run = labelled
    outcome = label_audit(workspace, run, "offline", baseline_judges(), min_votes=1)
    results = results_of(outcome)
    labels = results["labels"]
    assert {
        label: (counts["checked"], counts["confirmed"], counts["rejected"])
        for label, counts in labels["by_label"].items()
    } == {"unanswerable": (2, 1, 1), "multi-passage": (2, 1, 1), "underspecified": (1, 1, 0), "partial": (2, 1, 1)}
    assert labels["not_checked"] == {"answerable": 2} and labels["unlabelled"] == 0
    rejected = rejected_turns(results)
    assert rejected.keys() == {WRONG_UNANSWERABLE, WRONG_MULTI, WRONG_PARTIAL}
    assert rejected[WRONG_UNANSWERABLE]["chunks"] == ["merolite-hardness"]
    assert rejected[WRONG_MULTI]["chunks"] == ["plinthane-density"]
    assert rejected[WRONG_PARTIAL]["chunks"] == ["plinthane-hardness"]
    assert "the part the reference answer says is missing" in rejected[WRONG_PARTIAL]["reason"]
    assert labels["by_label"]["unanswerable"]["agreement"] == 0.5
    assert labels["below_threshold"] == ["unanswerable", "multi-passage", "partial"]
    # The underspecified turn was judged against the candidates its dialogue names, not the pool.
    checks = {
        check["turn"]: check
        for check in json.loads((workspace.run_dir("offline") / LABEL_CHECKS_FILE).read_text())["checks"]
    }
    assert checks["labelled_t5"]["against"] == "candidates"
    assert checks["labelled_t5"]["chunks_shown"] == ["kestrine-queue", "kestrine-cache"]
    # A partial turn: its gold for the alignment, the retrievers' pool for the missing part.
    assert checks["labelled_t7"]["chunks_shown"] == ["morvane-density"] and checks["labelled_t7"]["pool_shown"]
    assert outcome.values["label_agreement"]["multi-passage"] == 0.5
    # The verdict notes the labels below the threshold; the report has the section.
    assert "unanswerable 50% of 2" in results["verdict"]["explanation"]
    assert results["verdict"]["label"] != "reliable"
    markdown = Path(outcome.values["report"]["markdown"]).read_text(encoding="utf-8")
    section = markdown.split("## Turn labels", 1)[1].split("\n## ", 1)[0]
    escaped = {turn: turn.replace("_", "\\_") for turn in (WRONG_UNANSWERABLE, WRONG_MULTI)}  # Markdown's escape
    assert f"{escaped[WRONG_UNANSWERABLE]}: unanswerable rejected" in section and "merolite-hardness" in section
    assert f"{escaped[WRONG_MULTI]}: multi-passage rejected" in section and "plinthane-density" in section
    assert "| unanswerable | 2 | 1 | 1 | 0 | 50.0% (below) |" in section


def test_one_judge_alone_only_suspects_an_unanswerable_label(labelled):
    """The missing-gold vote rule: with the default two votes, one judge finding an answering
    chunk leaves the label confirmed and the turn suspected; the multi-passage turn, decided by
    the judges' majority, is still rejected."""
    workspace, run = labelled
    labels = results_of(label_audit(workspace, run, "one-judge", baseline_judges()))["labels"]
    assert labels["by_label"]["unanswerable"] == {
        "checked": 2,
        "confirmed": 2,
        "rejected": 0,
        "suspected": 1,
        "agreement": 1.0,
        "against_pool": 2,
    }
    # A chunk answering a partial turn's missing part claims missing gold too: the same rule.
    assert labels["by_label"]["partial"]["suspected"] == 1 and labels["by_label"]["partial"]["rejected"] == 0
    assert set(rejected_turns({"labels": labels})) == {WRONG_MULTI}


def test_the_agreement_threshold_is_a_setting(labelled):
    workspace, run = labelled
    results = results_of(label_audit(workspace, run, "lenient", baseline_judges(), min_votes=1, label_agreement=0.4))
    assert results["labels"]["below_threshold"] == []
    assert "turn labels" not in results["verdict"]["explanation"]


def test_without_candidate_ids_an_underspecified_turn_is_judged_against_the_pool(labelled):
    """A benchmark that names no candidates (a BEIR export alone, MTRAG-UN): the question must
    fit two chunks of the retrievers' pool, and the report says it was judged there."""
    workspace, run = labelled
    (run / "dialogues.jsonl").unlink()
    outcome = label_audit(workspace, run, "no-candidates", baseline_judges(), min_votes=1)
    checks = {
        check["turn"]: check
        for check in json.loads((workspace.run_dir("no-candidates") / LABEL_CHECKS_FILE).read_text())["checks"]
    }
    assert checks["labelled_t5"]["against"] == "pool"
    assert {"kestrine-queue", "kestrine-cache"} <= set(checks["labelled_t5"]["chunks_shown"])
    assert results_of(outcome)["labels"]["by_label"]["underspecified"] == {
        "checked": 1,
        "confirmed": 1,
        "rejected": 0,
        "suspected": 0,
        "agreement": 1.0,
        "against_pool": 1,
    }


def test_the_jobs_result_and_the_cli_summary_give_the_per_label_agreement(labelled, capsys):
    workspace, run = labelled
    result = audit_job(
        run, run_id="api", workspace=str(workspace.root), min_votes=1, embedder=register_embedder(HashingEmbedder())
    )
    expected = {label: counts["agreement"] for label, counts in result.results()["labels"]["by_label"].items()}
    assert result.label_agreement == expected and expected["partial"] == 0.5
    print_audit_summary(result)
    shown = capsys.readouterr().out
    assert re.search(r"turn label agreement: multi-passage\W+50\.0%", shown)
    assert re.search(r"turn label agreement: underspecified\W+100\.0%", shown)


def test_a_multi_passage_instance_is_audited_on_the_gold_asked_from_first(labelled):
    """Its question was asked from zorbium-melting first (dialogues.jsonl's gold_ids order), not
    from plinthane-density, the first by id."""
    workspace, run = labelled
    label_audit(workspace, run, "asked-first", baseline_judges(), min_votes=1)
    instances = {record["instance"]: record for record in load_jsonl(workspace.run_dir("asked-first") / INSTANCES_FILE)}
    assert instances[WRONG_MULTI]["gold_id"] == "zorbium-melting"
    checks = {
        check["turn"]: check
        for check in json.loads((workspace.run_dir("asked-first") / LABEL_CHECKS_FILE).read_text())["checks"]
    }
    assert checks[WRONG_MULTI]["chunks_shown"] == ["zorbium-melting", "zorbium-conductivity", "plinthane-density"]


def _question(messages: list[dict[str, str]]) -> str:
    return dict(sections(messages))["question"]


def _asked_of_the_pool(messages: list[dict[str, str]]) -> set[str]:
    """The stems a passage must hold to answer: the question's; for a partial turn's missing part,
    those of the question that the reference answer's "does not cover ..." repeats."""
    asked = set(stemmed_words(_question(messages)))
    answer = dict(sections(messages)).get("reference_answer")
    if answer is None:
        return asked
    return asked & set(stemmed_words(re.search(r"does not cover (.*?)\.", answer)[1]))


def label_model_reply(request: dict[str, Any]) -> dict[str, Any]:
    """A model judge's replies: a passage answers when it holds every content word of the
    question (by stem); contributions as the offline judge finds them; the audit's other
    judges as tests/audit_fixtures.py scripts them."""
    name = requested_schema_name(request)
    messages = conversation_messages(request)
    if name == "PassageJudgments":
        passages = numbered_passages(messages)
        wanted = _asked_of_the_pool(messages)
        relevant = [wanted <= set(stemmed_words(passage)) for passage in passages]
        return (
            judgments_schema(len(passages))
            .model_validate(
                {
                    "judgments": [
                        {
                            "passage": number,
                            "rationale": "holds every word asked" if answers else "lacks a word asked",
                            "relevant": answers,
                            "facts": [passage] if answers else [],
                        }
                        for number, (passage, answers) in enumerate(zip(passages, relevant), start=1)
                    ]
                }
            )
            .model_dump()
        )
    if name == "Contributions":
        content = messages[-1]["content"]
        answer = re.search(r"<answer>\n(.*?)\n</answer>", content, re.S)[1]
        passages = [{"text": text} for text in numbered_passages(messages)]
        return ContributionJudge().baseline(answer=answer, passages=passages).model_dump()
    return server_judge(request)


def test_model_judges_over_the_loopback_server_reject_the_wrong_unanswerable_label(labelled, monkeypatch):
    """Two model judges, served by the loopback server: both find the chunk that answers the
    wrongly labelled unanswerable turn, and the one that answers the wrongly labelled partial
    turn's missing part, so the vote rule rejects them at its default of two."""
    workspace, run = labelled
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-audit-labels")
    with FakeOpenAIServer(replier=label_model_reply) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        models = {spec: build_seam(spec, FAST_RETRIES) for spec in SERVED_JUDGES}
        results = results_of(label_audit(workspace, run, "served", models))
        asked = {requested_schema_name(request) for request in server.requests}
    assert {"PassageJudgments", "Contributions"} <= asked
    rejected = rejected_turns(results)
    assert rejected.keys() == {WRONG_UNANSWERABLE, WRONG_MULTI, WRONG_PARTIAL}
    assert rejected[WRONG_UNANSWERABLE]["votes"] == 2 and rejected[WRONG_UNANSWERABLE]["chunks"] == [
        "merolite-hardness"
    ]
    assert set(rejected[WRONG_UNANSWERABLE]["rationales"]) == set(SERVED_JUDGES)
    assert rejected[WRONG_PARTIAL]["votes"] == 2 and rejected[WRONG_PARTIAL]["chunks"] == ["plinthane-hardness"]
    by_label = results["labels"]["by_label"]
    assert (
        by_label["unanswerable"]["confirmed"],
        by_label["underspecified"]["confirmed"],
        by_label["partial"]["confirmed"],
    ) == (1, 1, 1)


def test_an_unlabelled_benchmark_audits_as_before(tmp_path):
    """No turn carries a label: no label judge is asked, the report has no Turn labels section
    and the verdict says nothing of labels."""
    turns, corpus = write_audit_benchmark(tmp_path / "bench")
    workspace = Workspace.resolve(tmp_path / "ws")
    calls: list[str] = []

    def replier(messages: list[dict[str, str]], schema: type[BaseModel]) -> BaseModel:
        calls.append(schema.__name__)
        return judge_reply(messages, schema)

    models = {"scripted:judge-a": ModelSeam(ScriptedBackend(replier=replier, model="judge-a"))}
    outcome = audit(workspace, turns, corpus, "unlabelled", models=models)
    results = results_of(outcome)
    assert results["labels"] is None and outcome.values["label_agreement"] == {}
    assert set(calls) == {"ScoreVerdict", "DocumentChoice"}
    assert "## Turn labels" not in Path(outcome.values["report"]["markdown"]).read_text(encoding="utf-8")
    assert json.loads((workspace.run_dir("unlabelled") / LABEL_CHECKS_FILE).read_text())["unlabelled"] == 24
    assert "turn labels" not in results["verdict"]["explanation"]
