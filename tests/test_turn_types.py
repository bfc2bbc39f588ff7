"""Turn types in the dialogue graph (issue 22): unanswerable, partial, underspecified (with its
clarification) and multi-passage turns drawn at the configured rates, question types and
standalone labels, the same in dialogues.jsonl, stats.json and the exports; the judge's
rejection of a wrong label; a crash and resume that changes no byte."""

from __future__ import annotations

import csv
import json
from collections import Counter

import pytest
from langgraph.runtime import Runtime

from benchsmith.agents.offline.namesakes import shared_name
from benchsmith.agents.seam.backends import ModelSettings
from benchsmith.agents.seam.models import build_seam
from benchsmith.agents.turn_types import UNANSWERED
from benchsmith.evals.measures.question_form import question_form
from benchsmith.evals.measures.repeated_turns import asked_turns
from benchsmith.graphs.contexts.synthesize import SynthesisContext
from benchsmith.graphs.synthesis.turn_checks import LABEL_ATTEMPTS
from benchsmith.graphs.synthesis.turn_plans import ambiguous_partners, namesake_chunks
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.benchmark_files import Dialogue
from benchsmith.stores.persistence.clusters import find_clustering
from benchsmith.stores.persistence.jsonl import load_jsonl
from benchsmith.stores.persistence.llm_cache import LLMCache
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.vectors import VectorStore, open_client
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.benchmark.dialogue_walk import reserved_chunks
from benchsmith.tools.corpus.loaders import iter_beir_corpus
from benchsmith.tools.retrieval.embedding import ChromaEmbeddingFunction
from tests.embedders import HashingEmbedder
from tests.openai_server import FakeOpenAIServer, requested_schema_name
from tests.synthesis_fixtures import COLLECTION, synthesize
from tests.turn_type_fixtures import ALL_RATES, QUESTION_MIX, build_rich_collection, ingest, rich_workspace
from tests.turn_type_replies import answers_elsewhere, numbered_passages, typed_seam, typed_server_replier

FAST_RETRIES = ModelSettings(timeout_s=5.0, backoff_initial_s=0.01, backoff_max_s=0.05, max_attempts=3)
KIND_OF_RATE = {
    "unanswerable_rate": "unanswerable",
    "partial_rate": "partial",
    "underspecified_rate": "underspecified",
    "multi_gold_rate": "multi-passage",
}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Workspace:
    return rich_workspace(tmp_path_factory, "turn-types")


@pytest.fixture(scope="module")
def offline_run(workspace) -> RunDirectory:
    synthesize(workspace, "all-types", conversations=20, turns=10, question_types=QUESTION_MIX, **ALL_RATES)
    return RunDirectory(workspace, "all-types")


def all_turns(run_dir: RunDirectory, asked: bool = False) -> list[tuple[str, dict]]:
    """The benchmark's turns; with ``asked`` every turn the conversations asked, those cut at a repeat
    of another conversation's too (stats.json counts the benchmark's)."""
    return [
        (d["conversation_id"], turn)
        for d in load_jsonl(run_dir.file("dialogues.jsonl"))
        for turn in (asked_turns(d) if asked else d["turns"])
    ]


def test_every_rate_is_drawn_within_five_points_and_a_type_is_kept_only_where_it_is_real(offline_run):
    """Issue 22 drew each type at its rate; issue 30 keeps a typed turn only where its passages make it
    real (two entries of one name, one subject across passages, an answer nothing left holds): the rest
    become answerable turns, each counted as dropped."""
    turns = [turn for _, turn in all_turns(offline_run, asked=True)]
    assert (
        len(turns) + sum(len(d.get("dropped_turns", [])) for d in load_jsonl(offline_run.file("dialogues.jsonl")))
        == 200
    )
    drawn = [turn for turn in turns if turn["turn_type_drawn"] != "clarification"]  # a clarification is not drawn
    drawn_kinds = Counter(turn["turn_type_drawn"] for turn in drawn)
    kept = Counter(turn["turn_type"] for turn in drawn)
    dropped = Counter(turn["label_dropped"] for turn in drawn if turn.get("label_dropped"))
    for setting, rate in ALL_RATES.items():
        kind = KIND_OF_RATE[setting]
        assert abs(drawn_kinds[kind] / len(drawn) - rate) <= 0.05, (setting, drawn_kinds)
        assert 0 < kept[kind] <= drawn_kinds[kind] and kept[kind] + dropped[kind] == drawn_kinds[kind], kind
    stats = json.loads(offline_run.file("stats.json").read_text())["labels"]
    in_benchmark = Counter(t["label_dropped"] for _, t in all_turns(offline_run) if t.get("label_dropped"))
    assert stats["turn_types_dropped"] == dict(sorted(in_benchmark.items()))
    assert len(Counter(turn["question_type"] for turn in turns)) >= 4


def test_each_turn_type_has_the_shape_its_label_says(workspace, offline_run):
    clusters = find_clustering(workspace, COLLECTION, 4, 16, 0, None).clusters
    reserved = set(reserved_chunks(clusters, 0).values())
    dialogues = load_jsonl(offline_run.file("dialogues.jsonl"))
    golds = {gold for d in dialogues for turn in d["turns"] for gold in turn["gold_ids"]}
    assert not golds & reserved  # a chunk a turn may hold out is nobody's gold
    for dialogue in dialogues:
        Dialogue.model_validate(dialogue)  # the data model's rules (gold per answerability) hold
        for previous, turn in zip([None, *dialogue["turns"]], dialogue["turns"]):
            kind = turn["turn_type"]
            if kind == "unanswerable":
                assert (
                    turn["gold_ids"] == [] and len(turn["held_out_ids"]) == 1 and set(turn["held_out_ids"]) <= reserved
                )
                assert turn["response"].startswith(UNANSWERED)
                assert turn["question_type"] != "comparison"  # its second thing may be answered elsewhere
            elif kind == "partial":
                assert len(turn["gold_ids"]) == 1 and len(turn["held_out_ids"]) == 1
                assert "does not cover the rest of your question" in turn["response"]
            elif kind == "underspecified":
                assert turn["gold_ids"] == [] and len(turn["candidate_ids"]) == 2
                assert turn["response"].startswith("That could mean more than one thing. Do you mean")
            elif kind == "multi-passage":
                assert 2 <= len(turn["gold_ids"]) <= 3 and len(set(turn["gold_ids"])) == len(turn["gold_ids"])
            elif kind == "clarification":
                assert previous["answerability"] == "underspecified"
                assert turn["gold_ids"][0] in previous["candidate_ids"] and not turn["standalone"]
                assert turn["question"].startswith("I mean ")  # the entry the clarifying reply named
            if previous is not None and previous["answerability"] == "underspecified":
                assert kind == "clarification"  # the turn after an underspecified one clarifies it
            assert turn["answerability"] == {
                "unanswerable": "unanswerable",
                "partial": "partial",
                "underspecified": "underspecified",
            }.get(kind, "answerable")
            assert turn["standalone"] == (kind != "clarification" and turn["question"] == turn["question_unpolished"])
            assert not question_form(turn["question_unpolished"], follow_up=turn["index"] > 0).problems(), turn


def test_labels_agree_in_dialogues_stats_and_exports(workspace, offline_run):
    turns = all_turns(offline_run)
    stats = json.loads(offline_run.file("stats.json").read_text())["labels"]
    assert stats["answerability"] == {
        label: sum(t["answerability"] == label for _, t in turns)
        for label in ("answerable", "partial", "unanswerable", "underspecified")
    }
    assert stats["question_types"] == dict(Counter(t["question_type"] for _, t in turns))
    assert stats["standalone"]["non_standalone"] == sum(not t["standalone"] for _, t in turns)
    assert stats["multi_gold_turns"] == sum(len(t["gold_ids"]) > 1 for _, t in turns) > 0
    beir = offline_run.file("beir")
    with open(beir / "qrels" / "test.tsv", newline="") as handle:
        qrels = {(row["query-id"], row["corpus-id"]) for row in csv.DictReader(handle, delimiter="\t")}
    assert qrels == {(f"{conversation}_t{t['index']}", gold) for conversation, t in turns for gold in t["gold_ids"]}
    queries = {query["_id"]: query["metadata"] for query in load_jsonl(beir / "queries.jsonl")}
    for conversation, turn in turns:
        exported = queries[f"{conversation}_t{turn['index']}"]
        assert (exported["answerability"], exported["question_type"], exported["standalone"]) == (
            turn["answerability"],
            turn["question_type"],
            turn["standalone"],
        )
    corpus = {document.id for document in iter_beir_corpus(beir / "corpus.jsonl")}
    held_out = {chunk for _, t in turns for chunk in t["held_out_ids"]}
    assert held_out and not held_out & corpus
    assert {gold for _, gold in qrels} <= corpus  # removing held-out chunks took no gold with them


def test_impossible_rates_and_unknown_question_types_are_refused(workspace):
    with pytest.raises(InputError, match="add up to at most 1"):
        synthesize(workspace, "too-much", conversations=1, turns=2, unanswerable_rate=0.7, multi_gold_rate=0.5)
    with pytest.raises(InputError, match="unknown question type 'opinion'"):
        synthesize(workspace, "opinion", conversations=1, turns=2, question_types="factoid=1,opinion=1")


def test_an_unanswerable_turn_whose_held_out_chunk_has_a_near_duplicate_is_dropped(tmp_path):
    """Every document's sentences are repeated in another page (different enough that ingestion
    keeps both): the offline judge finds that page answering each unanswerable question, so every
    such turn is re-planned, then dropped and counted."""
    workspace = Workspace.resolve(tmp_path / "ws")
    corpus = tmp_path / "corpus"
    build_rich_collection(workspace, corpus, documents=40)
    for number, path in enumerate(sorted(corpus.glob("doc*.txt"))):
        filler = " ".join(f"aside{(number * 7 + k) % 300}" for k in range(60))
        (corpus / f"copy-{path.name}").write_text(
            f"{path.read_text()}\n\nNotes page {number} repeats an earlier page and also mentions {filler}.",
            encoding="utf-8",
        )
    assert ingest(workspace, corpus, run_id="ingest-copies")["collection_count"] == 80
    synthesize(workspace, "duplicated", conversations=6, turns=6, unanswerable_rate=0.5)
    turns = all_turns(RunDirectory(workspace, "duplicated"))
    dropped = [t for _, t in turns if t["label_dropped"] == "unanswerable"]
    assert dropped and not any(t["turn_type"] == "unanswerable" for _, t in turns)
    assert all(1 <= t["label_rejections"] <= LABEL_ATTEMPTS and t["answerability"] == "answerable" for t in dropped)
    assert any(t["label_rejections"] == LABEL_ATTEMPTS for t in dropped)  # re-planned until no plan was left
    stats = json.loads(RunDirectory(workspace, "duplicated").file("stats.json").read_text())["labels"]
    assert stats["turn_types_dropped"] == {"unanswerable": len(dropped)}


def test_model_path_judge_rejection_replans_or_drops_the_turn(workspace):
    """The scripted pool judge finds a remaining chunk answering half the held-out chunks: those
    unanswerable turns move to the next cluster's held-out chunk, and are dropped when none is left."""
    seam, backend = typed_seam()
    synthesize(workspace, "model-types", conversations=8, turns=6, model=seam, question_types=QUESTION_MIX, **ALL_RATES)
    turns = [t for _, t in all_turns(RunDirectory(workspace, "model-types"))]
    assert {t["turn_type"] for t in turns} >= {
        "unanswerable",
        "partial",
        "underspecified",
        "clarification",
        "multi-passage",
        "answerable",
    }
    judged = [
        numbered_passages(messages)[0] for messages, schema in backend.calls if schema.__name__ == "PassageJudgments"
    ]
    rejected = sum(answers_elsewhere(held_out) for held_out in judged)
    kept = [t for t in turns if t["turn_type"] == "unanswerable"]
    # Each rejection re-planned or dropped its turn; each acceptance kept one.
    assert 0 < rejected == sum(t["label_rejections"] for t in turns)
    assert 0 < len(judged) - rejected == len(kept)
    assert all(t["response"] == "The documentation does not answer this question." for t in kept)
    assert any(t["label_rejections"] for t in kept), "no rejected turn was re-planned and kept"
    dropped = [t for t in turns if t["label_dropped"] == "unanswerable"]  # may be none: each re-plan was kept
    assert all(t["turn_type"] == "answerable" and t["gold_ids"] for t in dropped)
    # The typed questions were asked for their type: the prompt names it.
    assert any(
        "Question type:" in messages[-1]["content"]
        for messages, schema in backend.calls
        if schema.__name__ in ("TypedQuestion", "GeneratedQuestion")
    )


def test_kill_and_resume_keep_labels_and_held_out_sets_byte_identical(workspace):
    options = {"conversations": 8, "turns": 5, "question_types": QUESTION_MIX, "concurrency": 2, **ALL_RATES}
    seam, _ = typed_seam()
    synthesize(workspace, "uninterrupted", model=seam, **options)
    cache = LLMCache(workspace.llm_cache_path)
    crashing, backend = typed_seam(cache=cache)
    backend.replies = [*[backend.replier] * 60, RuntimeError("model crashed on call 61")]
    with pytest.raises(RuntimeError, match="call 61"):
        synthesize(workspace, "resumed", model=crashing, **options)
    assert RunDirectory(workspace, "resumed").load().status == "crashed"
    resumed_seam, _ = typed_seam(cache=cache)
    assert synthesize(workspace, "resumed", model=resumed_seam, **options).resumed
    whole, resumed = RunDirectory(workspace, "uninterrupted"), RunDirectory(workspace, "resumed")
    for name in (
        "dialogues.jsonl",
        "stats.json",
        "qrels.trec",
        "beir/corpus.jsonl",
        "beir/queries.jsonl",
        "beir/qrels/test.tsv",
        "beir/turn_labels.tsv",
    ):
        assert resumed.file(name).read_bytes() == whole.file(name).read_bytes(), name
    turns = [t for _, t in all_turns(resumed)]
    assert any(t["held_out_ids"] for t in turns) and any(t["answerability"] == "underspecified" for t in turns)


def test_every_turn_type_over_the_loopback_server_matches_the_in_process_model(workspace, monkeypatch):
    """The new agent calls' structured outputs (typed question, reference reply, contribution and
    pool judges) go through the real openai client to the loopback server, and give the same
    benchmark as the same replies in process."""
    options = {"conversations": 6, "turns": 5, "question_types": QUESTION_MIX, **ALL_RATES}
    in_process, _ = typed_seam()
    synthesize(workspace, "typed-in-process", model=in_process, **options)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-turn-types")
    with FakeOpenAIServer(replier=typed_server_replier) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        synthesize(workspace, "typed-server", model=build_seam("openai:sim", FAST_RETRIES), **options)
        asked = Counter(requested_schema_name(request) for request in server.requests)
    assert asked.keys() >= {"TypedQuestion", "ReferenceReply", "Contributions", "PassageJudgments"}
    served = RunDirectory(workspace, "typed-server").file("dialogues.jsonl").read_text()
    assert served == RunDirectory(workspace, "typed-in-process").file("dialogues.jsonl").read_text()
    kinds = {turn["turn_type"] for line in served.splitlines() for turn in json.loads(line)["turns"]}
    assert kinds >= {"unanswerable", "partial", "underspecified", "clarification", "multi-passage"}


def test_same_seed_same_turn_types_whatever_the_concurrency(workspace):
    options = {"conversations": 6, "turns": 6, "question_types": QUESTION_MIX, **ALL_RATES}
    synthesize(workspace, "types-one-at-a-time", concurrency=1, **options)
    synthesize(workspace, "types-six-at-once", concurrency=6, **options)
    first = RunDirectory(workspace, "types-one-at-a-time").file("dialogues.jsonl").read_text()
    assert first == RunDirectory(workspace, "types-six-at-once").file("dialogues.jsonl").read_text()
    kinds = {turn["turn_type"] for line in first.splitlines() for turn in json.loads(line)["turns"]}
    assert len(kinds - {"answerable"}) >= 2, kinds  # typed turns took their paths in both runs


def test_the_dry_run_counts_each_turn_types_calls_at_its_rate(workspace):
    """Typed turns ask their own questioner and responder, and unanswerable and multi-passage turns a
    label judge more: the estimate grows with those rates, by the judges' calls, before any spending."""
    import benchsmith

    def estimate(**rates):
        return benchsmith.estimate_synthesis(
            COLLECTION, conversations=10, turns=5, llm="openai:gpt-4o-mini", workspace=workspace.root, **rates
        )

    plain, typed = estimate(), estimate(**ALL_RATES)
    judged_share = ALL_RATES["unanswerable_rate"] + ALL_RATES["multi_gold_rate"]
    assert typed.calls == pytest.approx(plain.calls + round(judged_share * 10 * 5), abs=1)
    assert typed.input_tokens > plain.input_tokens  # the pool judge reads eleven passages


def test_the_statistics_table_shows_the_label_counts_of_stats_json(offline_run):
    from benchsmith.cli.synthesize import label_rows

    labels = json.loads(offline_run.file("stats.json").read_text(encoding="utf-8"))["labels"]
    rows = dict(label_rows(labels))
    for kind, count in labels["turn_types"].items():
        assert f"{kind} {count}" in rows["turn types"]
    assert rows["held-out chunks"] == str(labels["held_out_chunks"])
    assert label_rows({"turn_types": {"answerable": 12}}) == []  # a run without typed turns: no rows


def test_an_underspecified_turn_needs_two_entries_of_one_name():
    """_kind_plan pairs the meant chunk only with one documenting another entry of a name the meant
    one documents: two meanings a user would act on differently; not one concept on two pages, the
    class of two methods, nor one entry under two of its names (the readers' fake ambiguities)."""

    def meanings(*passages: tuple[str, str]) -> bool:
        return shared_name([{"title": title, "text": text} for title, text in passages]) is not None

    assert meanings(
        ("lzma › decompress", "lzma.decompress(data)\n\nDecompress a block of LZMA data."),
        ("bz2 › decompress", "bz2.decompress(data)\n\nDecompress a block of bz2 data."),
    )
    assert not meanings(
        ("lzma › decompress", "lzma.decompress(data)\n\nDecompress a block of LZMA data."),
        ("Compression guide", "Use decompress to read compressed data back in memory."),
    )
    assert not meanings(
        ("poplib › POP3.noop", "poplib.POP3.noop()\n\nDo nothing."),
        ("poplib › POP3.utf8", "poplib.POP3.utf8()\n\nTry to switch to UTF-8 mode."),
    )
    assert not meanings(
        ("asyncio.transports › WriteTransport.write", "Write some data bytes to the transport."),
        ("asyncio.transports", "asyncio.transports.WriteTransport.write(data)\n\nWrite data."),
    )


def test_an_underspecified_turns_other_meaning_is_found_anywhere_in_the_corpus(tmp_path):
    """What a question leaves open is rarely within one cluster: lzma's decompress and bz2's lie
    apart on the semantic path (on the stdlib demo 12 of 15 underspecified turns found no partner
    in their cluster and were dropped). BM25 over the names of the entries the meant chunk documents
    finds bz2's, and the partner rule accepts it; a chunk that only shares words does not pass."""
    workspace = Workspace.resolve(tmp_path / "ws")
    chunks = {
        "lzma:0-60": ("lzma › decompress", "lzma.decompress(data)\n\nDecompress a block of LZMA data in memory."),
        "bz2:0-70": ("bz2 › decompress", "bz2.decompress(data)\n\nDecompress a block of bz2 data: it returns bytes."),
        "gzip:0-40": ("gzip › compress", "Compress the data and decompress nothing: it returns bytes."),
        **{f"filler{i}:0-30": (f"filler{i}", f"Filler page {i} documents the weather of day {i}.") for i in range(12)},
    }
    embedder = HashingEmbedder(dimension=16)
    store = VectorStore(open_client(workspace), "names", ChromaEmbeddingFunction(embedder), embedder.name)
    texts = [text for _, text in chunks.values()]
    store.upsert(
        list(chunks),
        embedder.encode(texts).tolist(),
        texts,
        [{"title": title, "doc_id": chunk_id.split(":")[0]} for chunk_id, (title, _) in chunks.items()],
    )
    runtime = Runtime(context=SynthesisContext(workspace=str(workspace.root)))

    namesakes = namesake_chunks(runtime, "names", "lzma:0-60", leave_out={"lzma:0-60"})
    assert "bz2:0-70" in namesakes and "lzma:0-60" not in namesakes
    assert ambiguous_partners(runtime, "names", "lzma:0-60", namesakes) == ["bz2:0-70"]
    assert namesake_chunks(runtime, "names", "lzma:0-60", leave_out={"lzma:0-60", "bz2:0-70"}) == [
        chunk for chunk in namesakes if chunk != "bz2:0-70"
    ]
