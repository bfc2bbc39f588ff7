"""The audit graph on a benchmark with planted faults, judged by two scripted judges."""

from __future__ import annotations

import json
from collections import Counter
from functools import partial
from pathlib import Path

import pytest

from benchsmith.agents.seam.backends import ScriptedBackend
from benchsmith.agents.seam.models import ModelSeam
from benchsmith.graphs.audit.state import EXTRA_QRELS_FILE, INSTANCES_FILE, JUDGMENTS_FILE
from benchsmith.graphs.contexts.evaluate import EvaluationContext
from benchsmith.graphs.evaluate.graph import builder as evaluation_builder
from benchsmith.graphs.runtime.resources import register_embedder
from benchsmith.graphs.runtime.runner import run_job
from benchsmith.stores.formats.beir import read_beir_qrels
from benchsmith.stores.persistence.jsonl import load_jsonl
from benchsmith.stores.persistence.llm_cache import LLMCache
from benchsmith.stores.persistence.workspace import Workspace
from tests.audit_fixtures import PLANTED, SUBSTANCES, SWAPPED, judge_reply, write_audit_benchmark
from tests.audit_runs import audit, beir_view, results_of
from tests.embedders import HashingEmbedder

JUDGES = ["scripted:judge-a", "scripted:judge-b"]


@pytest.fixture
def fixture(tmp_path):
    turns, corpus = write_audit_benchmark(tmp_path / "bench")
    return Workspace.resolve(tmp_path / "ws"), turns, corpus


def test_swapped_gold_gets_low_alignment_and_heads_the_worst_list(fixture):
    workspace, turns, corpus = fixture
    results = results_of(audit(workspace, turns, corpus, "a1"))
    worst = results["worst"]
    assert {item["instance"] for item in worst[: len(SWAPPED)]} == SWAPPED
    assert all(item["alignment"] <= 2 for item in worst[: len(SWAPPED)])
    assert worst[len(SWAPPED) :]
    assert all(item["alignment"] > 2 for item in worst[len(SWAPPED) :])
    assert set(worst[0]["rationales"]) == set(JUDGES)
    assert results["verdict"]["label"] in ("usable with caveats", "unreliable")


def test_planted_same_answer_document_is_confirmed_missing_gold_and_lands_in_extra_qrels(fixture):
    workspace, turns, corpus = fixture
    outcome = audit(workspace, turns, corpus, "a2")
    results = results_of(outcome)
    confirmed = {(item["instance"], item["candidate_id"]) for item in results["missing_gold"] if item["confirmed"]}
    assert set(PLANTED.items()) <= confirmed
    # Swapped turns: the judges find the document that really answers, which the qrels lack.
    assert {instance for instance, _ in confirmed} == set(PLANTED) | SWAPPED
    extra = read_beir_qrels(workspace.run_dir("a2") / EXTRA_QRELS_FILE)
    assert {(query, doc) for query, docs in extra.items() for doc in docs} == confirmed
    assert outcome.values["confirmed_missing_gold"] == len(confirmed)


def test_gold_positions_are_balanced_and_recorded(fixture):
    workspace, turns, corpus = fixture
    audit(workspace, turns, corpus, "a3", negatives=3, position_check=True)
    instances = load_jsonl(workspace.run_dir("a3") / INSTANCES_FILE)
    assert len(instances) == len(SUBSTANCES) * 2
    slots = Counter(record["pool"].index(record["gold_id"]) for record in instances)
    assert set(slots) == {0, 1, 2, 3} and max(slots.values()) - min(slots.values()) <= 1
    for record in instances:
        assert len(record["pool"]) == 4 and len(set(record["pool"])) == 4
        assert record["rotated_pool"] != record["pool"] and sorted(record["rotated_pool"]) == sorted(record["pool"])
    # The scripted judges read the content, so the rotation never changes their document.
    bias = json.loads((workspace.run_dir("a3") / "audit.json").read_text(encoding="utf-8"))["discriminability"][
        "position_bias"
    ]
    assert bias["checked"] == len(instances) * len(JUDGES) and bias["same_document"] == 1.0


def test_scores_agreement_and_dimensions(fixture):
    workspace, turns, corpus = fixture
    results = results_of(audit(workspace, turns, corpus, "a4"))
    assert set(results["dimensions"]) == {"alignment", "faithfulness", "quality"}
    alignment = results["dimensions"]["alignment"]
    assert alignment["per_judge_mean"]["scripted:judge-a"] > alignment["per_judge_mean"]["scripted:judge-b"]
    assert alignment["ci_low"] <= alignment["mean"] <= alignment["ci_high"]
    assert sum(alignment["distribution"].values()) == len(SUBSTANCES) * 2
    assert results["agreement"]["alignment"]["spearman"] > 0.9
    assert results["agreement"]["choice"]["fleiss_kappa"] == pytest.approx(1.0)


def test_resumed_audit_judges_no_instance_twice_and_cached_verdicts_are_reused(fixture):
    workspace, turns, corpus = fixture
    calls = Counter()

    def counting(strict, fail_after, messages, schema):
        if fail_after is not None and calls["total"] >= fail_after:
            raise RuntimeError("injected judge crash")
        calls["total"] += 1  # a verdict paid for
        return judge_reply(messages, schema, strict=strict)

    def seams(fail_after):
        cache = LLMCache(workspace.llm_cache_path)
        return {
            spec: ModelSeam(
                ScriptedBackend(replier=partial(counting, spec.endswith("b"), fail_after), model=spec.split(":")[1]),
                cache=cache,
            )
            for spec in JUDGES
        }

    with pytest.raises(RuntimeError, match="injected judge crash"):
        audit(workspace, turns, corpus, "a5", models=seams(fail_after=40))
    judged_before = load_jsonl(workspace.run_dir("a5") / JUDGMENTS_FILE)
    assert 0 < len(judged_before) < len(SUBSTANCES) * 2
    assert calls["total"] == 40
    outcome = audit(workspace, turns, corpus, "a5", models=seams(fail_after=None))
    assert outcome.resumed
    judged = load_jsonl(workspace.run_dir("a5") / JUDGMENTS_FILE)
    assert len(judged) == len({record["instance"] for record in judged}) == len(SUBSTANCES) * 2
    calls_per_instance = 4 * len(JUDGES)  # alignment, choice, faithfulness, quality
    assert calls["total"] == len(SUBSTANCES) * 2 * calls_per_instance  # nothing paid twice
    # A new run over the same benchmark: every verdict comes from the cache.
    calls.clear()
    audit(workspace, turns, corpus, "a5-again", models=seams(fail_after=None))
    assert calls["total"] == 0


def test_extra_qrels_move_evaluation_scores_the_expected_way(fixture):
    workspace, turns, corpus = fixture
    audit(workspace, turns, corpus, "a6")
    extra = workspace.run_dir("a6") / EXTRA_QRELS_FILE

    def evaluate(run_id, extra_qrels):
        context = EvaluationContext(
            workspace=str(workspace.root),
            measures=("RR@10", "R@1", "nDCG@10"),
            embedder=register_embedder(HashingEmbedder()),
            extra_qrels=extra_qrels,
        )
        # A BEIR view of the fixture: the evaluation reads BEIR, the audit its turn JSONL form.
        return run_job(
            evaluation_builder,
            job="evaluate",
            workspace=workspace,
            run_id=run_id,
            inputs={
                "run_id": run_id,
                "benchmark": str(beir_view(turns, corpus)),
                "retrievers": ["bm25"],
                "histories": ["full"],
            },
            context=context,
            settings={},
            max_concurrency=1,
        )

    plain = evaluate("e-plain", None).values["aggregate"]["bm25@full"]
    augmented = evaluate("e-extra", str(extra)).values["aggregate"]["bm25@full"]
    assert augmented["RR@10"] > plain["RR@10"] and augmented["R@1"] > plain["R@1"]


def test_a_markup_question_is_flagged_as_noise_and_counted_in_the_verdict(fixture):
    workspace, turns, corpus = fixture
    baseline = results_of(audit(workspace, turns, corpus, "form-before"))
    assert baseline["ill_formed"] == []
    rows = [json.loads(line) for line in turns.read_text(encoding="utf-8").splitlines()]
    # Made of markup, yet every word the judges look for is in the gold: alignment stays high.
    rows[0]["question"] = "{ref}`zorbium density <zorbium-density>`"
    turns.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    outcome = audit(workspace, turns, corpus, "form-after")
    results = results_of(outcome)
    assert [item["instance"] for item in results["ill_formed"]] == [rows[0]["id"]]
    flagged = results["ill_formed"][0]
    assert flagged["reasons"][0].startswith("markup") and not flagged["low_alignment"]
    assert outcome.values["ill_formed_questions"] == 1

    def noise(results: dict) -> float:
        return float(results["verdict"]["explanation"].split("%")[0])

    instances = results["benchmark"]["instances"]
    assert noise(results) == pytest.approx(noise(baseline) + 100 / instances, abs=1)
    report = Path(outcome.values["report"]["markdown"]).read_text(encoding="utf-8")
    assert "Ill-formed questions" in report and "zorbium-density" in report


# Two chunks of one page's documentation: a question about one is off-topic for the other.
DUMPS_CHUNK = (
    "json.dumps(obj, *, skipkeys=False, ensure_ascii=True, indent=None) Serialize obj to a JSON "
    "formatted str. If ensure_ascii is true (the default), the output is guaranteed to have all "
    "incoming non-ASCII characters escaped. If ensure_ascii is false, these characters will be output "
    "as-is. If indent is a non-negative integer, JSON array elements are pretty-printed with that indent."
)
STARTTLS_CHUNK = (
    "smtplib.SMTP.starttls(keyfile=None, certfile=None, context=None) Put the SMTP connection in TLS "
    "(Transport Layer Security) mode. All SMTP commands that follow will be encrypted. You should "
    "then call ehlo() again. If keyfile and certfile are provided, they are used to create an "
    "ssl.SSLContext."
)
# The offline questioner's wording in every frame, and frames a model writes, about a function and its arguments.
MODEL_FRAMES = [
    "Explain the {detail} flag of {focus}.",
    "Give a summary of {detail} in {focus}.",
    "Is it true that {focus} accepts {detail}?",
    "Compare {detail} with {second} in {focus}.",
    "{focus} {detail} example",
]


def typed_questions(focus: str, other: str, detail: str, second: str) -> list[str]:
    from benchsmith.agents.offline.facts import Fact
    from benchsmith.agents.offline.wording import wordings

    entry = (("entry", focus), ("entry_kind", "function"), ("owner", ""))
    facts = [
        Fact("purpose", focus, entry, 0, (0,)),
        Fact("returns", focus, entry, 0, (0,)),
        Fact("parameter", detail, (*entry, ("parameter", detail)), 0, (0,)),
        Fact("comparison", focus, (("a", focus), ("b", other)), 0, (0,)),
    ]
    return [wording.question for fact in facts for wording in wordings(fact)] + [
        frame.format(focus=focus, detail=detail, second=second) for frame in MODEL_FRAMES
    ]


def alignment(question: str, document: str, history: list[tuple[str, str]] = ()) -> int:
    from benchsmith.agents.judges import AlignmentJudge

    return AlignmentJudge().baseline(history=list(history), question=question, document=document).score


def test_a_question_whose_topic_words_are_all_in_the_gold_scores_high_whatever_its_frame():
    # "Can you explain how json.dumps works?": "explain" and "works" are in no passage and say nothing against it.
    for question in typed_questions("json.dumps", "json.loads", "ensure_ascii", "indent"):
        assert alignment(question, DUMPS_CHUNK) >= 4, question
    # A terse follow-up takes its topic from the latest earlier question that names one.
    history = [
        ("What does json.dumps do with non-ASCII characters?", "It escapes them."),
        ("Can you explain how it works?", "By ensure_ascii."),
    ]
    assert alignment("Could you give me a short summary of it?", DUMPS_CHUNK, history) >= 4
    # A terse question that names its own topic borrows nothing from a conversation that has moved on.
    moved_on = [("How do I put an SMTP connection in TLS mode?", "Call starttls.")]
    assert alignment("What is json.dumps actually good for?", DUMPS_CHUNK, moved_on) >= 4


def test_a_question_about_another_chunk_still_scores_low_in_every_frame():
    for question in typed_questions("smtplib.SMTP.starttls", "smtplib.SMTP.ehlo", "keyfile", "certfile"):
        assert alignment(question, DUMPS_CHUNK) <= 2, question
        assert alignment(question, STARTTLS_CHUNK) >= 4, question  # the same question, judged against its own chunk
    history = [
        ("How do I put an SMTP connection in TLS mode?", "Call starttls."),
        ("Can you explain how it works?", ""),
    ]
    assert alignment("Could you give me a short summary of it?", DUMPS_CHUNK, history) <= 2
    # A question of frame words alone, with no earlier question to refer to, has nothing the gold answers.
    assert alignment("Could you give me a short summary of it?", DUMPS_CHUNK) <= 2
