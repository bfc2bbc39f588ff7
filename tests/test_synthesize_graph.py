import csv
import json
import math

import pytest

from benchsmith.agents.responder import GeneratedAnswer
from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.clusters import find_clustering
from benchsmith.stores.persistence.corpus_stats import load_corpus_stats
from benchsmith.stores.persistence.jsonl import load_jsonl
from benchsmith.stores.persistence.llm_cache import LLMCache
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.benchmark.dialogue_walk import DEFAULT_SOFT_SWITCH_MARGIN, SwitchPolicy
from benchsmith.tools.corpus.loaders import iter_beir_corpus
from tests.synthesis_fixtures import COLLECTION, build_collection, gold_text, scripted_seam, synthesize


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Workspace:
    root = tmp_path_factory.mktemp("synthesis")
    workspace = Workspace.resolve(root / "ws")
    build_collection(workspace, root / "corpus")
    return workspace


def dialogues(workspace: Workspace, run_id: str) -> list[dict]:
    return load_jsonl(RunDirectory(workspace, run_id).file("dialogues.jsonl"))


def clusters(workspace: Workspace) -> list[list[str]]:
    return find_clustering(workspace, COLLECTION, 4, 16, 0, None).clusters


def test_every_conversation_has_the_turns_asked_for(workspace):
    seam, _ = scripted_seam()
    values = synthesize(workspace, "shape", conversations=6, turns=4, model=seam).values
    written = dialogues(workspace, "shape")
    assert [d["conversation_id"] for d in written] == [f"c{i:04d}" for i in range(6)]
    assert len({d["cluster_id"] for d in written}) == 6  # one cluster per conversation
    for dialogue in written:
        assert [t["index"] for t in dialogue["turns"]] == [0, 1, 2, 3]
        assert dialogue["turns"][0]["switch"] == "start"
        assert dialogue["turns"][0]["gold_ids"] == [clusters(workspace)[dialogue["cluster_id"]][0]]
    assert values["conversations_written"] == 6 and values["turns_written"] == 24
    assert seam.stats.calls == 6 * (3 * 4 - 1)  # no polisher on the first turn


def test_switches_follow_the_configured_probabilities_and_move_as_they_say(workspace):
    policy = SwitchPolicy(switch_probability=0.5, hard_switch_rate=0.3)
    synthesize(workspace, "mix", conversations=12, turns=40, switch_rate=0.5, hard_switch_rate=0.3)
    paths = clusters(workspace)
    where = {chunk: (c, o) for c, chunk_ids in enumerate(paths) for o, chunk in enumerate(chunk_ids)}
    threshold = load_corpus_stats(workspace, COLLECTION).similarity_threshold(DEFAULT_SOFT_SWITCH_MARGIN)
    counts = {"follow-up": 0, "soft": 0, "hard": 0}
    draws = {"follow-up": 0, "soft": 0, "hard": 0}
    relabelled = 0
    for dialogue in dialogues(workspace, "mix"):
        for previous, turn in zip(dialogue["turns"], dialogue["turns"][1:]):
            counts[turn["switch"]] += 1
            draws[turn["switch_drawn"]] += 1
            if turn["switch_drawn"] == "follow-up" and turn["switch"] != "follow-up":
                # only a follow-up whose question had to move on (nothing left to ask, or copied) is relabelled
                assert turn["form_replans"] + turn["overlap_replans"] > 0, turn
            (c0, o0), (c1, o1) = where[previous["gold_ids"][0]], where[turn["gold_ids"][0]]
            path_next = (c0, o0 + 1) if o0 + 1 < len(paths[c0]) else ((c0 + 1) % len(paths), 0)
            if turn["switch"] == "follow-up":
                assert (c1, o1) == (c0, o0) and turn["similarity_to_previous"] == pytest.approx(1.0, abs=1e-3)
            elif turn["switch"] == "soft":  # the path's next chunk, or another of the neighbourhood
                assert (c1, o1) == path_next or c1 in (c0, (c0 + 1) % len(paths))
                assert turn["similarity_to_previous"] > threshold
            elif c1 == c0 or (c1, o1) == path_next:  # a soft switch that found nothing similar enough
                relabelled += 1
                assert (c1, o1) == path_next and turn["similarity_to_previous"] <= threshold
    total = sum(counts.values())
    probabilities = policy.probabilities()
    # The router's draws follow the configured probabilities; labels then follow the similarity rule.
    drawn = {"follow-up": draws["follow-up"], "switch": draws["soft"] + draws["hard"], "hard": draws["hard"]}
    expected = {
        "follow-up": probabilities["follow-up"],
        "switch": policy.switch_probability,
        "hard": probabilities["hard"],
    }
    for name, probability in expected.items():
        tolerance = 4 * math.sqrt(probability * (1 - probability) / total)
        assert abs(drawn[name] / total - probability) < tolerance, (name, counts, relabelled)
    assert counts["soft"] > 0


def test_responder_sees_only_the_gold_chunk(workspace):
    seam, backend = scripted_seam()
    synthesize(workspace, "responder", conversations=3, turns=3, model=seam)
    texts = {chunk_id: None for cluster in clusters(workspace) for chunk_id in cluster}
    from benchsmith.stores.persistence.vectors import VectorStore, open_client
    from benchsmith.tools.retrieval.embedding import ChromaEmbeddingFunction

    store = VectorStore.open_existing(open_client(workspace), COLLECTION, lambda s: ChromaEmbeddingFunction(spec=s))
    texts = {chunk_id: item["text"] for chunk_id, item in store.fetch(list(texts)).items()}
    prompts = [messages for messages, schema in backend.calls if schema is GeneratedAnswer]
    assert len(prompts) == 9
    for messages in prompts:
        prompt = messages[-1]["content"]
        shown = [chunk_id for chunk_id, text in texts.items() if text in prompt]
        assert shown == [chunk_id for chunk_id, text in texts.items() if text == gold_text(messages, "passage")]
        assert len(shown) == 1


def test_polisher_rejections_keep_the_original(workspace):
    seam, _ = scripted_seam()
    values = synthesize(workspace, "polish", conversations=8, turns=5, model=seam).values
    rejected = accepted = 0
    for dialogue in dialogues(workspace, "polish"):
        for turn in dialogue["turns"][1:]:
            if turn["polish_rejected"]:
                rejected += 1
                assert turn["polish_rejected"] == "meta text"
                assert turn["question"] == turn["question_unpolished"]
            else:
                accepted += 1
                assert turn["question"].startswith("What does it say")
    assert rejected > 0 and accepted > 0
    assert values["stats"]["polisher_rejections"] == rejected


def test_exports_parse_as_beir_and_trec(workspace):
    synthesize(workspace, "export", conversations=4, turns=3, history_window=1)
    run_dir = RunDirectory(workspace, "export")
    corpus = list(iter_beir_corpus(run_dir.file("beir/corpus.jsonl")))
    assert len(corpus) == sum(map(len, clusters(workspace)))
    queries = load_jsonl(run_dir.file("beir/queries.jsonl"))
    by_id = {q["_id"]: q for q in queries}
    written = dialogues(workspace, "export")
    assert sorted(by_id) == sorted(f"{d['conversation_id']}_t{t['index']}" for d in written for t in d["turns"])
    turns = written[0]["turns"]
    assert by_id["c0000_t0"]["text"] == f"User: {turns[0]['question']}"
    assert by_id["c0000_t2"]["text"] == (
        f"User: {turns[1]['question']}\nAgent: {turns[1]['response']}\nUser: {turns[2]['question']}"
    )  # a window of one earlier turn
    with run_dir.file("beir/qrels/test.tsv").open(encoding="utf-8") as handle:
        rows = list(csv.reader(handle, delimiter="\t"))
    assert rows[0] == ["query-id", "corpus-id", "score"]
    gold = {(f"{d['conversation_id']}_t{t['index']}", g) for d in written for t in d["turns"] for g in t["gold_ids"]}
    assert {(q, c) for q, c, s in rows[1:]} == gold and {s for *_, s in rows[1:]} == {"1"}
    corpus_ids = {document.id for document in corpus}
    trec = [line.split() for line in run_dir.file("qrels.trec").read_text().splitlines()]
    assert trec
    assert all(len(row) == 4 and row[1] == "0" and row[2] in corpus_ids and row[3] == "1" for row in trec)
    assert {(q, d) for q, _, d, _ in trec} == gold
    stats = json.loads(run_dir.file("stats.json").read_text())
    assert stats["conversations"] == 4 and stats["turns"] == 12


def test_same_seed_same_benchmark(workspace):
    synthesize(workspace, "seed-a", conversations=5, turns=4, concurrency=1)
    synthesize(workspace, "seed-b", conversations=5, turns=4, concurrency=5)
    first = RunDirectory(workspace, "seed-a").file("dialogues.jsonl").read_text()
    assert first == RunDirectory(workspace, "seed-b").file("dialogues.jsonl").read_text()


def test_too_many_conversations_for_the_clusters_is_refused(workspace):
    with pytest.raises(InputError, match="ask for at most"):
        synthesize(workspace, "too-many", conversations=1000, turns=2)


def test_a_crash_mid_run_resumes_without_duplicates_or_repeated_turns(workspace):
    conversations, turns = 8, 4
    calls_needed = conversations * (3 * turns - 1)
    # The response cache in the workspace, as the CLI's seams have it: a conversation cut off
    # mid-way is replayed from it, so only the calls in flight at the crash are paid twice.
    cache = LLMCache(workspace.llm_cache_path)
    seam, backend = scripted_seam(cache=cache)
    backend.replies = [*[backend.replier] * 40, RuntimeError("model crashed on call 41")]
    with pytest.raises(RuntimeError, match="call 41"):
        synthesize(workspace, "crash", conversations=conversations, turns=turns, model=seam, concurrency=2)
    assert RunDirectory(workspace, "crash").load().status == "crashed"
    resumed_seam, resumed_backend = scripted_seam(cache=cache)
    outcome = synthesize(
        workspace, "crash", conversations=conversations, turns=turns, model=resumed_seam, concurrency=2
    )
    written = dialogues(workspace, "crash")
    assert outcome.resumed and len(written) == conversations
    assert len({d["conversation_id"] for d in written}) == conversations
    assert all([t["index"] for t in d["turns"]] == list(range(turns)) for d in written)
    # Finished turns were not asked again: at most the calls in flight at the crash are repeated.
    assert len(backend.calls) - 1 + len(resumed_backend.calls) <= calls_needed + 2


def test_baseline_questions_never_repeat_within_a_conversation(workspace):
    synthesize(workspace, "no-repeats", conversations=6, turns=8, switch_rate=0.2)
    for dialogue in dialogues(workspace, "no-repeats"):
        unpolished = [turn["question_unpolished"] for turn in dialogue["turns"]]
        assert len(set(unpolished)) == len(unpolished)


def test_concurrency_bounds_the_conversations_in_flight(workspace):
    import threading
    import time

    from tests.synthesis_fixtures import scripted_reply

    lock, in_flight, most = threading.Lock(), [0], [0]

    def slow_reply(messages, schema):
        with lock:
            in_flight[0] += 1
            most[0] = max(most[0], in_flight[0])
        time.sleep(0.05)
        with lock:
            in_flight[0] -= 1
        return scripted_reply(messages, schema)

    seam, _ = scripted_seam()
    seam.backend.replier = slow_reply
    synthesize(workspace, "bounded", conversations=9, turns=2, model=seam, concurrency=3)
    assert most[0] == 3
