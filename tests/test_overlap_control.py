"""Overlap control in synthesis (a question that copies its gold passage is asked again with the
overlap fed back, then re-planned, then kept flagged) and switch labels that follow the
similarity rule both ways."""

from __future__ import annotations

import json
import random

import pytest

import benchsmith
from benchsmith.agents.questioner import GeneratedQuestion, Questioner
from benchsmith.cli.synthesize import overlap_rows
from benchsmith.evals.measures.benchmark_stats import benchmark_statistics
from benchsmith.evals.measures.lexical_overlap import lexical_overlap
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.benchmark_files import Dialogue
from benchsmith.stores.persistence.clusters import find_clustering
from benchsmith.stores.persistence.corpus_stats import load_corpus_stats
from benchsmith.stores.persistence.jsonl import load_jsonl
from benchsmith.stores.persistence.llm_cache import LLMCache
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.vectors import VectorStore, open_client
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.benchmark.dialogue_walk import DEFAULT_SOFT_SWITCH_MARGIN, Position, choose_switch, switch_label
from benchsmith.tools.defaults import DEFAULT_MAX_OVERLAP
from benchsmith.tools.retrieval.embedding import ChromaEmbeddingFunction
from tests.synthesis_fixtures import COLLECTION, build_collection, gold_text, scripted_reply, scripted_seam, synthesize

CORRECTION = "Your question shares"
PARAPHRASE = "My vector database answers slowly after an upgrade, how do I speed it up?"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Workspace:
    root = tmp_path_factory.mktemp("overlap")
    workspace = Workspace.resolve(root / "ws")
    build_collection(workspace, root / "corpus")
    return workspace


@pytest.fixture(scope="module")
def texts(workspace) -> dict[str, str]:
    store = VectorStore.open_existing(open_client(workspace), COLLECTION, lambda s: ChromaEmbeddingFunction(spec=s))
    ids = [chunk_id for page in store.iter_all(include=()) for chunk_id in page["ids"]]
    return {chunk_id: item["text"] for chunk_id, item in store.fetch(ids).items()}


def passage_of(messages: list[dict[str, str]]) -> str:
    """The gold passage of a questioner prompt (the first user message, also in a corrective call)."""
    return gold_text([messages[1]], "gold_passage")


def copy_of(passage: str) -> str:
    return f"Does {' '.join(passage.split()[:8]).rstrip('.')}?"


def copies_then_paraphrases(messages, schema):
    if schema is GeneratedQuestion:
        question = PARAPHRASE if CORRECTION in messages[-1]["content"] else copy_of(passage_of(messages))
        return GeneratedQuestion(question=question, rewrite=question)
    return scripted_reply(messages, schema)


def question_calls(backend) -> list[list[dict[str, str]]]:
    return [messages for messages, schema in backend.calls if schema is GeneratedQuestion]


def dialogues(workspace: Workspace, run_id: str) -> list[dict]:
    return load_jsonl(RunDirectory(workspace, run_id).file("dialogues.jsonl"))


def stats(workspace: Workspace, run_id: str) -> dict:
    return json.loads(RunDirectory(workspace, run_id).file("stats.json").read_text(encoding="utf-8"))


def test_a_copied_question_is_asked_again_with_its_overlap_and_the_paraphrase_is_kept(workspace, texts):
    seam, backend = scripted_seam()
    backend.replier = copies_then_paraphrases
    synthesize(workspace, "corrected", conversations=1, turns=1, model=seam)
    first, corrective = question_calls(backend)
    assert len(first) == 2 and [m["role"] for m in corrective] == ["system", "user", "assistant", "user"]
    copied = copy_of(passage_of(first))
    share = round(100 * lexical_overlap(copied, [passage_of(first)]))
    assert share > 100 * DEFAULT_MAX_OVERLAP
    assert corrective[2]["content"] == copied
    assert f"{CORRECTION} {share}% of its content words" in corrective[3]["content"]
    assert "own words" in corrective[3]["content"]
    (turn,) = dialogues(workspace, "corrected")[0]["turns"]
    assert turn["question_unpolished"] == PARAPHRASE
    assert turn["lexical_overlap"] == pytest.approx(lexical_overlap(PARAPHRASE, [texts[turn["gold_ids"][0]]]), abs=1e-4)
    assert turn["lexical_overlap"] <= DEFAULT_MAX_OVERLAP and turn["overlap_rejected"] is False
    assert stats(workspace, "corrected")["overlap_rejections"] == {
        "max_overlap": DEFAULT_MAX_OVERLAP,
        "corrective_turns": 1,
        "replans": 0,
        "kept_above_limit": 0,
    }


def test_a_questioner_that_always_copies_re_plans_then_keeps_the_lowest_overlap_question_flagged(workspace, texts):
    golds: list[str] = []

    def always_copies(messages, schema):
        if schema is not GeneratedQuestion:
            return scripted_reply(messages, schema)
        passage = passage_of(messages)
        golds.append(passage)
        # On the second gold chunk tried, one word of the user's own: less overlap, still above the limit.
        own = " zebra" if list(dict.fromkeys(golds)).index(passage) == 1 else ""
        question = copy_of(passage)[:-1] + own + "?"
        return GeneratedQuestion(question=question, rewrite=question)

    seam, backend = scripted_seam()
    backend.replier = always_copies
    synthesize(workspace, "flagged", conversations=1, turns=1, model=seam, overlap_attempts=2, overlap_replans=2)
    tried = list(dict.fromkeys(golds))
    assert len(question_calls(backend)) == 9 and len(tried) == 3  # 3 gold chunks × (1 + 2 corrective turns)
    dialogue = dialogues(workspace, "flagged")[0]
    cluster = find_clustering(workspace, COLLECTION, 4, 16, 0, None).clusters[dialogue["cluster_id"]]
    assert [texts[chunk_id] for chunk_id in cluster[:3]] == tried  # the cluster's next chunks, as the walker takes them
    (turn,) = dialogue["turns"]
    assert turn["overlap_rejected"] is True and turn["overlap_replans"] == 2 and turn["overlap_corrections"] == 6
    assert turn["question_unpolished"].endswith("zebra?") and turn["gold_ids"] == [cluster[1]]
    assert DEFAULT_MAX_OVERLAP < turn["lexical_overlap"] < 1.0
    responder_prompt = next(messages for messages, schema in backend.calls if schema is not GeneratedQuestion)
    assert texts[cluster[1]] in responder_prompt[-1]["content"]  # the answer is made from the kept question's gold
    assert stats(workspace, "flagged")["overlap_rejections"] == {
        "max_overlap": DEFAULT_MAX_OVERLAP,
        "corrective_turns": 6,
        "replans": 2,
        "kept_above_limit": 1,
    }


def test_an_ill_formed_question_moves_the_turn_to_another_chunk(workspace, texts):
    """A questioner that can only ask about the page as a whole on the first chunk (a template the
    audit calls ill-formed) is not kept there: the turn is re-planned and the next chunk's real
    question kept, with no corrective turn (the overlap was not the problem)."""
    golds: list[str] = []

    def page_question_first(messages, schema):
        if schema is not GeneratedQuestion:
            return scripted_reply(messages, schema)
        golds.append(passage_of(messages))
        question = (
            "What does the harbour documentation cover?"
            if len(golds) == 1
            else "How would a sailor plan around the evening crossing?"
        )
        return GeneratedQuestion(question=question, rewrite=question)

    seam, backend = scripted_seam()
    backend.replier = page_question_first
    synthesize(workspace, "form-replanned", conversations=1, turns=1, model=seam)
    assert len(question_calls(backend)) == 2 and golds[0] != golds[1]
    (turn,) = dialogues(workspace, "form-replanned")[0]["turns"]
    assert turn["question_unpolished"] == "How would a sailor plan around the evening crossing?"
    assert texts[turn["gold_ids"][0]] == golds[1]
    assert (turn["form_replans"], turn["overlap_replans"], turn["overlap_corrections"]) == (1, 0, 0)


def test_re_planned_switches_still_follow_the_similarity_rule(workspace):
    def always_copies(messages, schema):
        if schema is not GeneratedQuestion:
            return scripted_reply(messages, schema)
        question = copy_of(passage_of(messages))
        return GeneratedQuestion(question=question, rewrite=question)

    seam, backend = scripted_seam()
    backend.replier = always_copies
    synthesize(
        workspace,
        "replanned",
        conversations=3,
        turns=4,
        model=seam,
        switch_rate=1.0,
        hard_switch_rate=0.5,
        overlap_attempts=0,
        overlap_replans=1,
    )
    threshold = load_corpus_stats(workspace, COLLECTION).similarity_threshold(DEFAULT_SOFT_SWITCH_MARGIN)
    for dialogue in dialogues(workspace, "replanned"):
        for previous, turn in zip(dialogue["turns"], dialogue["turns"][1:]):
            assert turn["overlap_rejected"] and turn["overlap_replans"] == 1
            if turn["switch"] == "soft":
                assert turn["similarity_to_previous"] >= threshold
            elif turn["switch"] == "hard":
                assert turn["similarity_to_previous"] < threshold
            else:
                assert turn["gold_ids"] == previous["gold_ids"]
    assert len(question_calls(backend)) == 3 * 4 * 2


def test_the_corrective_call_is_cached_so_a_rerun_pays_nothing_and_gives_the_same_turns(workspace):
    cache = LLMCache(workspace.llm_cache_path)
    first, first_backend = scripted_seam(cache=cache)
    first_backend.replier = copies_then_paraphrases
    synthesize(workspace, "cached-a", conversations=2, turns=3, model=first)
    again, again_backend = scripted_seam(cache=cache)
    again_backend.replier = copies_then_paraphrases
    synthesize(workspace, "cached-b", conversations=2, turns=3, model=again)
    assert sum(CORRECTION in messages[-1]["content"] for messages in question_calls(first_backend)) >= 2
    assert again_backend.calls == [] and again.stats.cache_hits == first.stats.calls
    assert dialogues(workspace, "cached-a") == dialogues(workspace, "cached-b")


def test_offline_synthesis_keeps_every_question_under_the_default_limit_or_flags_it(workspace, texts):
    synthesize(workspace, "offline", conversations=8, turns=5)
    written = [turn for dialogue in dialogues(workspace, "offline") for turn in dialogue["turns"]]
    # The API's typed turns (SynthesisResult.dialogues) keep every label of the file.
    typed = [Dialogue.model_validate(record) for record in dialogues(workspace, "offline")]
    assert [turn.model_dump() for dialogue in typed for turn in dialogue.turns] == written
    for turn in written:
        overlap = lexical_overlap(turn["question_unpolished"], [texts[turn["gold_ids"][0]]])
        assert turn["lexical_overlap"] == pytest.approx(overlap, abs=1e-4)
        assert turn["lexical_overlap"] <= DEFAULT_MAX_OVERLAP or turn["overlap_rejected"] is True
    summary = stats(workspace, "offline")
    assert summary["lexical_overlap"]["n"] == len(written)
    assert summary["overlap_rejections"]["kept_above_limit"] == sum(t["overlap_rejected"] for t in written)


def test_the_baseline_skips_rejected_questions_and_prefers_ones_under_the_limit():
    gold = {
        "id": "g",
        "title": "Harbour ferries",
        "text": (
            "To book a ferry crossing, call the harbour office before noon. "
            "If the forecast swell exceeds two metres, the harbour master cancels the crossing. "
            "You can take a bicycle on the ferry at no charge."
        ),
    }
    first = Questioner().baseline(gold=gold, history=[])
    skipped = Questioner().baseline(gold=gold, history=[], rejected=[{"question": first.question, "overlap": 1.0}])
    assert skipped.question != first.question
    preferred = Questioner().baseline(
        gold=gold,
        history=[],
        max_overlap=0.5,
        measure_overlap=lambda question: 0.0 if question == skipped.question else 1.0,
    )
    assert preferred.question == skipped.question
    unchanged = Questioner().baseline(gold=gold, history=[], max_overlap=0.5, measure_overlap=lambda question: 0.0)
    assert unchanged.question == first.question  # everything under the limit: the ranking decides


def test_the_corrective_turn_is_the_only_change_to_the_prompt():
    inputs = {
        "gold": {"text": "Pilots board at the buoy.", "title": "t"},
        "related": [],
        "history": [],
        "switch": "start",
    }
    plain = Questioner().messages(**inputs)
    assert Questioner().messages(**inputs, max_overlap=0.78) == plain  # the first call's cache key is unchanged
    corrected = Questioner().messages(
        **inputs,
        max_overlap=0.78,
        rejected=[
            {"question": "Where do pilots board?", "overlap": 1.0},
            {"question": "Where do pilots get on?", "overlap": 0.9},
        ],
    )
    assert corrected[:2] == plain and corrected[2] == {"role": "assistant", "content": "Where do pilots get on?"}
    assert corrected[3]["role"] == "user" and corrected[3]["content"].startswith(f"{CORRECTION} 90% of its content")
    assert "at most 78%" in corrected[3]["content"] and "Where do pilots board? (100%)" in corrected[3]["content"]


def test_overlap_statistics_on_a_worked_example():
    def turn(index, switch, overlap, corrections=0, replans=0, rejected=False, drawn=None):
        return {
            "index": index,
            "question": "q",
            "response": "a",
            "gold_ids": [f"g{index}"],
            "switch": switch,
            "switch_drawn": drawn or switch,
            "lexical_overlap": overlap,
            "overlap_corrections": corrections,
            "overlap_replans": replans,
            "overlap_rejected": rejected,
        }

    dialogues = [
        {"turns": [turn(0, "start", 0.2), turn(1, "hard", 0.9, 2, 2, True, drawn="soft")]},
        {"turns": [turn(0, "start", 0.5, 1), turn(1, "follow-up", 0.4, drawn="hard")]},
    ]
    summary = benchmark_statistics(dialogues, max_overlap=0.78)
    # Sorted 0.2, 0.4, 0.5, 0.9: median (0.4 + 0.5) / 2; p90 at rank 0.9 × 3 = 2.7: 0.5 + 0.7 × (0.9 − 0.5).
    assert summary["lexical_overlap"] == {"n": 4, "mean": 0.5, "median": 0.45, "p90": 0.78}
    assert summary["overlap_rejections"] == {
        "max_overlap": 0.78,
        "corrective_turns": 3,
        "replans": 2,
        "kept_above_limit": 1,
    }
    assert summary["switch_rule"]["relabelled"] == {"hard→follow-up": 1, "soft→hard": 1}
    assert ">=" in summary["switch_rule"]["soft"] and "another document" in summary["switch_rule"]["hard"]
    rows = dict(overlap_rows(summary))
    assert rows["question–gold lexical overlap: mean / median / p90"] == "0.50 / 0.45 / 0.78"
    assert rows["overlap above 0.78: corrective turns / re-plans / kept flagged"] == "3 / 2 / 1"


def test_an_impossible_overlap_limit_is_refused_before_any_work(tmp_path):
    with pytest.raises(InputError, match="max_overlap must be within"):
        benchsmith.synthesize("docs", max_overlap=1.5, workspace=tmp_path)
    with pytest.raises(InputError, match="overlap_attempts must be"):
        benchsmith.synthesize("docs", overlap_attempts=-1, workspace=tmp_path)


# The walk's labelling rule, on planted similarities and documents.
CLUSTERS = [[f"c{cluster}-{offset}" for offset in range(3)] for cluster in range(8)]


def test_the_rule_labels_both_ways():
    assert switch_label(0.6, 0.5, same_document=True) == "soft"
    assert switch_label(0.5, 0.5, same_document=False) == "soft"  # at the threshold: soft
    assert switch_label(0.4, 0.5, same_document=False) == "hard"
    assert switch_label(0.4, 0.5, same_document=True) is None  # a dissimilar chunk of the same page is neither


def test_a_drawn_hard_switch_is_re_drawn_past_similar_chunks_and_chunks_of_the_same_page():
    here = Position(0, 0)
    similar = {Position(c, o): 0.9 for c in range(8) for o in range(3)}
    same_page = {Position(c, o) for c in range(8) for o in range(3) if c % 2 == 0}  # even clusters: the page of here

    def choose(similarity, seed=1, **options):
        return choose_switch(
            CLUSTERS,
            here,
            "hard",
            similarity=similarity.get,
            same_document=same_page.__contains__,
            threshold=0.5,
            rng=random.Random(seed),
            **options,
        )

    distant = {**similar, **{Position(c, o): 0.1 for c in range(8) for o in range(3) if c >= 2}}
    for seed in range(20):  # the first draws often land on the page's clusters: they are drawn again
        position, label = choose(distant, seed, draws=40)
        assert label == "hard" and position.cluster % 2 == 1 and position.cluster >= 2
    # Nothing distant fits the rule: labelled by it (soft: a similar chunk of the neighbourhood).
    position, label = choose(similar)
    assert label == "soft" and position.cluster in (0, 1)
    # Neither kind fits (every chunk is on the same page and dissimilar): the turn stays, a follow-up.
    dissimilar = {position: 0.1 for position in similar}
    same_page.update(similar)
    assert choose(dissimilar) == (here, "follow-up")
    assert choose(dissimilar, excluded={"c0-0"}) is None  # re-planning a follow-up: nothing left


def test_a_soft_switch_with_nothing_similar_is_hard_only_on_another_page():
    here = Position(0, 0)
    dissimilar = {Position(c, o): 0.1 for c in range(8) for o in range(3)}

    def choose(same_page):
        return choose_switch(
            CLUSTERS,
            here,
            "soft",
            similarity=dissimilar.get,
            same_document=same_page.__contains__,
            threshold=0.5,
            rng=random.Random(0),
        )

    assert choose(set()) == (Position(0, 1), "hard")  # the path's next chunk, on another page: hard
    position, label = choose({Position(0, 1)})  # the path's next chunk shares the page: a distant one instead
    assert label == "hard" and position != Position(0, 1) and position.cluster >= 2


def test_the_cli_takes_the_overlap_options_and_prints_the_overlap_statistics(workspace):
    from typer.testing import CliRunner

    from benchsmith.cli import app

    runner = CliRunner(env={"COLUMNS": "200"})
    arguments = [
        "synthesize",
        "--collection",
        COLLECTION,
        "--conversations",
        "3",
        "--turns",
        "3",
        "--cluster-size",
        "4",
        "--max-overlap",
        "0.5",
        "--overlap-attempts",
        "1",
        "--overlap-replans",
        "1",
        "--run-id",
        "cli-overlap",
        "-w",
        str(workspace.root),
    ]
    result = runner.invoke(app, arguments)
    assert result.exit_code == 0, result.output
    summary = stats(workspace, "cli-overlap")
    assert summary["overlap_rejections"]["max_overlap"] == 0.5
    overlap = summary["lexical_overlap"]
    assert f"{overlap['mean']:.2f} / {overlap['median']:.2f} / {overlap['p90']:.2f}" in result.output
    rejections = summary["overlap_rejections"]
    assert (
        f"overlap above 0.50: corrective turns / re-plans / kept flagged │ "
        f"{rejections['corrective_turns']} / {rejections['replans']} / {rejections['kept_above_limit']}"
    ) in " ".join(result.output.split())
    refused = runner.invoke(
        app, ["synthesize", "--collection", COLLECTION, "--max-overlap", "2", "-w", str(workspace.root)]
    )
    assert refused.exit_code == 2 and "--max-overlap" in refused.output
