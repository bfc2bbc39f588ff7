"""The offline typed questioner (agents/turn_types.py over agents/offline/): an underspecified
question only where two different entries share a name, a clarification that names the meant one,
and multi-part questions about one subject."""

from __future__ import annotations

from benchsmith.agents.responder import Responder
from benchsmith.agents.turn_types import ReferenceResponder, TypedQuestioner, question_parts
from benchsmith.evals.measures.question_form import question_form

LZMA = {
    "id": "lzma:0",
    "title": "lzma › decompress",
    "text": "lzma.decompress(data, format=FORMAT_AUTO)\n\nDecompress a block of LZMA data.\n\n"
    "lzma.compress(data)\n\nCompress data with the LZMA algorithm.",
}
BZ2 = {
    "id": "bz2:0",
    "title": "bz2 › decompress",
    "text": "bz2.decompress(data)\n\nDecompress a block of bz2 data.\n\nbz2.compress(data)\n\nCompress data with bzip2.",
}
GUIDE = {
    "id": "guide:0",
    "title": "Compression guide",
    "text": "Use decompress to restore compressed data in memory. Files are read with open.",
}


def ask(kind, passages, history=()):
    return TypedQuestioner().baseline(kind=kind, passages=passages, history=list(history))


def test_an_underspecified_question_names_what_two_entries_share_and_the_reply_asks_which():
    asked = ask("underspecified", [LZMA, BZ2])
    assert asked.question == "What does decompress() do?"
    reply = ReferenceResponder().baseline(kind="underspecified", passages=[LZMA, BZ2], question=asked.question).answer
    assert reply.endswith("?") and "lzma.decompress" in reply and "bz2.decompress" in reply


def test_one_concept_on_two_pages_is_no_ambiguity():
    assert question_form(ask("underspecified", [LZMA, GUIDE]).question).problems()  # the judge rejects it


def test_a_conversation_that_already_named_one_meaning_gets_no_ambiguous_question():
    history = [{"question": "How do I compress data with lzma?", "response": "Use lzma.compress."}]
    assert question_form(ask("underspecified", [LZMA, BZ2], history).question).problems()


def test_a_clarification_names_the_meant_entry_and_is_answered_from_it_alone():
    history = [{"question": "What does decompress() do?", "response": "Do you mean lzma.decompress or bz2.decompress?"}]
    asked = ask("clarification", [LZMA, BZ2], history)
    assert asked.question.startswith("I mean lzma.decompress: ")
    assert Responder().baseline(gold=LZMA, question=asked.question).answer == "Decompress a block of LZMA data."


def test_a_clarification_is_a_question_never_a_keyword_query_with_it_for_the_name():
    # "I mean Command.get_help: it typical use case" does not parse (click, test half, round 27)
    for n in range(16):
        history = [
            {"question": f"How do I read file number {n}?", "response": "Open it."},
            {"question": "What does decompress() do?", "response": "Do you mean lzma.decompress or bz2.decompress?"},
        ]
        asked = ask("clarification", [LZMA, BZ2], history)
        assert asked.question.startswith("I mean lzma.decompress: ") and asked.question.endswith("?"), asked.question


def test_a_multi_passage_question_asks_one_subject_of_each_passage():
    first = {
        "id": "s:0",
        "title": "Developer Interface › Sessions",
        "text": "requests.Session.mount(prefix, adapter)\n\nRegisters a connection adapter to a prefix.",
    }
    second = {
        "id": "s:1",
        "title": "Developer Interface › Sessions",
        "text": "requests.Session.mount(prefix, adapter)\n\nParameters\n\nprefix – The URL prefix the adapter serves.",
    }
    asked = ask("multi-passage", [first, second])
    assert len(asked.parts) == 2 and "Session.mount" in asked.parts[0]
    assert question_parts(asked.question)[0] == asked.parts[0]
    # passages about different things make no such question
    assert question_form(ask("multi-passage", [first, GUIDE]).question).problems()


def test_question_parts_split_one_turn_back_into_its_questions():
    assert question_parts("What does X do? And what does it return?") == ["What does X do?", "What does it return?"]
    assert question_parts("What does X do?") == []
