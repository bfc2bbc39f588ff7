"""The question supply (graphs/synthesis/supply.py): what the offline questioner finds in a collection's chunks,
counted as the synthesis checks count it, and the dry run that says it before a run is made."""

from __future__ import annotations

import pytest

import benchsmith
from benchsmith.agents.questioner import Questioner
from benchsmith.graphs.synthesis.supply import QuestionSupply, chunk_supply, chunks_of_kinds, question_supply
from benchsmith.jobs.synthesize import supply_note
from benchsmith.stores.persistence.corpus_stats import load_corpus_stats
from benchsmith.stores.persistence.vectors import VectorStore, open_client
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.retrieval.embedding import ChromaEmbeddingFunction
from tests.synthesis_fixtures import COLLECTION, build_collection

ASKABLE = {
    "id": "ssl",
    "title": "Requests › SSL Verification",
    "text": "SSL Verification\n\nRequests verifies SSL certificates for HTTPS requests. To disable verification, "
    "set verify to False. If verify is False, Requests accepts any certificate presented by the server.",
}
ONE_FACT = {
    "id": "verify",
    "title": "Requests › Verification",
    "text": "Verification\n\nTo disable certificate verification, set verify to False.",
}
NOTHING_TO_ASK = {"id": "thanks", "title": "Project › Thanks", "text": "Thanks\n\nThanks to everyone who helped."}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Workspace:
    root = tmp_path_factory.mktemp("supply")
    workspace = Workspace.resolve(root / "ws")
    build_collection(workspace, root / "corpus", documents=30)
    return workspace


@pytest.fixture(scope="module")
def store(workspace) -> VectorStore:
    return VectorStore.open_existing(open_client(workspace), COLLECTION, lambda s: ChromaEmbeddingFunction(spec=s))


def test_a_chunk_counts_the_questions_the_checks_pass_and_none_for_the_page_question():
    questioner = Questioner()
    assert chunk_supply(ASKABLE, questioner, None, per_chunk=4) >= 1
    assert chunk_supply(ASKABLE, questioner, None, per_chunk=1) == 1
    # One fact asked in several frames is one question: a benchmark cuts the second as a repeat.
    assert chunk_supply(ONE_FACT, questioner, None, per_chunk=4) == 1
    # Only the page-as-a-whole question is left, which the form check rejects: no supply.
    assert chunk_supply(NOTHING_TO_ASK, questioner, None, per_chunk=4) == 0


def test_every_chunk_is_asked_without_a_sample(store, workspace):
    supply = question_supply(store, load_corpus_stats(workspace, COLLECTION), chunks_of_kinds(store, None), sample=None)
    assert supply.chunks == supply.asked == store.count() > 0
    assert 0 < supply.with_question <= supply.asked  # the fixture's pages are written to be asked about
    assert supply.questions >= supply.with_question
    assert supply.estimated_questions == supply.questions  # nothing to scale: the whole collection was asked


def test_a_sample_is_drawn_by_the_seed_and_scaled_to_the_collection(store, workspace):
    statistics = load_corpus_stats(workspace, COLLECTION)
    first, again = (
        question_supply(store, statistics, chunks_of_kinds(store, None), sample=10, seed=3) for _ in range(2)
    )
    assert first == again
    assert first.asked == 10 and first.chunks == store.count()
    assert first.estimated_questions == round(first.questions * first.chunks / 10)
    assert 0.0 <= first.share <= 1.0


def test_only_the_page_kinds_asked_for_are_counted(store, workspace):
    supply = question_supply(store, load_corpus_stats(workspace, COLLECTION), chunks_of_kinds(store, ("changelog",)))
    assert supply == QuestionSupply(chunks=0, asked=0, with_question=0, questions=0)
    assert supply.share == 0.0 and supply.estimated_questions == 0


def test_the_offline_dry_run_says_the_supply_beside_the_turns_asked(workspace):
    runs_before = set(workspace.runs_dir.iterdir())

    def notes(conversations: int, turns: int) -> str:
        estimate = benchsmith.estimate_synthesis(
            COLLECTION, conversations=conversations, turns=turns, workspace=str(workspace.root)
        )
        return " ".join(estimate.notes)

    few = notes(1, 2)
    assert "2 turns asked, fewer than 25: too small a benchmark to rank retrievers" in few
    assert "the offline questioner finds a question the checks pass in" in few
    assert "for the 2 turns asked" in few and "ask for fewer" not in few
    many = notes(100, 20)
    assert "for the 2,000 turns asked" in many and "ask for fewer" in many and "fewer than 25" not in many
    with_a_model = benchsmith.estimate_synthesis(
        COLLECTION, conversations=1, turns=2, llm="openai:gpt-4o-mini", workspace=str(workspace.root)
    )
    assert not any("offline questioner" in note for note in with_a_model.notes)  # a model asks its own questions
    assert set(workspace.runs_dir.iterdir()) == runs_before  # a dry run makes no run


def test_a_supply_too_small_for_a_benchmark_that_ranks_retrievers_says_so_rather_than_ask_for_fewer():
    scarce = QuestionSupply(chunks=500, asked=200, with_question=7, questions=7)  # about 18 in the collection
    assert scarce.estimated_questions < 25
    note = supply_note(scarce, 120)
    assert "fewer than 25: too few to rank retrievers" in note and "ask for fewer" not in note
    plenty = QuestionSupply(chunks=500, asked=200, with_question=80, questions=100)
    assert "ask for fewer" in supply_note(plenty, 1000) and "too few to rank" not in supply_note(plenty, 1000)
    assert supply_note(plenty, 100).endswith("for the 100 turns asked")
