"""The offline typed questioner's wording (issue 22): an underspecified question names a term
both candidates really carry and the clarifying reply names the candidates by their pages; no
typed question has a pronoun subject, a repeated word, a dangling verb or a fragment for a
subject; a comparison sets two distinct names side by side."""

from __future__ import annotations

import re

import pytest

from benchsmith.agents.ambiguous_terms import ambiguous_term, sense_names
from benchsmith.agents.question_types import typed_wording
from benchsmith.agents.readable_questions import unreadable_reasons
from benchsmith.agents.text import PassageStatistics
from benchsmith.agents.turn_types import ReferenceResponder, TypedQuestioner, question_parts
from benchsmith.evals.question_form import question_form

CORPUS = [
    {"id": "lzma:0", "title": "lzma › decompress", "text":
        "lzma.decompress(data, format=FORMAT_AUTO, memlimit=None, filters=None)\n"
        "Decompress a block of data.\n\n"
        "For incremental decompression, use an LZMADecompressor object instead."},
    {"id": "bz2:0", "title": "bz2 › decompress", "text":
        "bz2.decompress(data)\n"
        "Decompress a block of data.\n\n"
        "For incremental decompression, use a BZ2Decompressor object instead."},
    {"id": "gzip:0", "title": "gzip › open", "text":
        "gzip.open(filename, mode='rb', compresslevel=9, encoding=None, errors=None, newline=None)\n"
        "Open a gzip-compressed file in binary or text mode.\n\n"
        "The filename argument can be an actual filename, or an existing file object to read from or write to."},
    {"id": "lzma:1", "title": "lzma › open", "text":
        "lzma.open(filename, mode='rb', *, format=None, check=-1, preset=None, filters=None)\n"
        "Open an LZMA-compressed file in binary or text mode.\n\n"
        "The format, check, preset and filters arguments specify the compression settings."},
    {"id": "typing:0", "title": "typing › TypeAlias", "text":
        "Special marker indicating an explicit type alias.\n\n"
        "Use TypeAlias to indicate that an assignment should be recognized as a proper type alias definition "
        "by type checkers. The checker treats the target as an alias and never as a variable."},
    {"id": "difflib:0", "title": "difflib › Differ", "text":
        "Differ is a class for comparing sequences of lines of text.\n\n"
        "The cutoff is the don't score threshold below which near matches are ignored. "
        "Differ uses SequenceMatcher both to compare sequences of lines and to compare sequences of characters."},
    {"id": "wave:0", "title": "wave › Wave_read", "text":
        "wave.Wave_read.getnchannels(self)\n"
        "Returns the number of audio channels (1 for mono, 2 for stereo).\n\n"
        "wave.Wave_read.getsampwidth(self)\n"
        "Returns the sample width in bytes."},
    {"id": "zipfile:0", "title": "zipfile › ZipFile.extract", "text":
        "zipfile.ZipFile.extract(self, member, path=None, pwd=None)\n"
        "Extract a member from the archive to the current working directory.\n\n"
        "The member's full path is used, and the file is written with its permission bits."},
]
BY_ID = {passage["id"]: passage for passage in CORPUS}
STATISTICS = PassageStatistics([passage["text"] for passage in CORPUS])
# "Can you explain how optionparser optparse works?": words mashed into a frame, no thing named.
AMBIGUOUS_FRAMES = [re.compile(r"^How does the (?P<term>[\w.]+) (function|method|class|constant|option) work\?$"),
                    re.compile(r"^How do I use the (?P<term>[\w.]+) (function|method|class|constant|option)\?$"),
                    re.compile(r"^Can you explain how the (?P<term>[a-z]+) works\?$")]


def passages(*ids: str) -> list[dict]:
    return [BY_ID[identifier] for identifier in ids]


def ambiguous_frame_term(question: str) -> str | None:
    return next((found["term"] for frame in AMBIGUOUS_FRAMES if (found := frame.match(question))), None)


@pytest.mark.parametrize("ids, term, senses", [
    (("bz2:0", "lzma:0"), "decompress", ["bz2", "lzma"]),
    (("gzip:0", "lzma:1"), "open", ["gzip", "lzma"]),
])
def test_an_underspecified_turn_names_a_term_both_candidates_carry_and_asks_back_by_page(ids, term, senses):
    candidates = passages(*ids)
    asked = TypedQuestioner().baseline(kind="underspecified", passages=candidates, history=[], corpus_stats=STATISTICS)
    found = ambiguous_frame_term(asked.question)
    assert found == term, asked.question
    for candidate in candidates:  # really shared: in each candidate's text or title
        assert found in candidate["text"] or found in candidate["title"]
    assert not question_form(asked.question).problems()
    reply = ReferenceResponder().baseline(kind="underspecified", passages=candidates, question=asked.question,
                                          parts=asked.parts, corpus_stats=STATISTICS).answer
    assert reply.endswith(f"Do you mean {term} in {senses[0]} or in {senses[1]}?")


def test_candidates_without_a_shared_term_give_a_question_the_label_judge_rejects():
    """The turn is then re-planned on other candidates (graphs/synthesize.py's label judge)."""
    candidates = passages("typing:0", "wave:0")
    assert ambiguous_term(candidates, STATISTICS) is None
    asked = TypedQuestioner().baseline(kind="underspecified", passages=candidates, history=[], corpus_stats=STATISTICS)
    assert question_form(asked.question, follow_up=True).problems()


def test_the_clarifying_reply_names_only_the_candidates_senses():
    candidates = passages("gzip:0", "lzma:1")
    senses = sense_names(candidates)
    reply = ReferenceResponder().baseline(kind="underspecified", passages=candidates, question="q",
                                          corpus_stats=STATISTICS).answer
    named = re.search(r"Do you mean (?P<term>\S+) in (?P<first>\S+) or in (?P<second>\S+)\?$", reply)
    assert named and [named["first"], named["second"]] == senses
    for sense, candidate in zip(senses, candidates):
        assert sense in candidate["title"]
    # Two chunks of one page are told apart by their headings.
    assert sense_names(passages("lzma:0", "lzma:1")) == ["lzma.decompress", "lzma.open"]


def test_a_clarification_names_the_meant_page_then_asks_a_readable_question():
    meant, other = passages("bz2:0", "lzma:0")
    asked = TypedQuestioner().baseline(kind="clarification", passages=[meant, other], history=[],
                                       corpus_stats=STATISTICS)
    prefix = "I mean the one in bz2: "
    assert asked.question.startswith(prefix), asked.question
    rest = asked.question[len(prefix):]
    assert rest[:1].islower() and rest.endswith("?") and not unreadable_reasons(rest)


@pytest.mark.parametrize("question", [
    "How does it try to compile?",
    "And how does TypeAlias use TypeAlias to indicate?",
    "How does OptionParser.disable_interspersed_args use?",
    "How does any run of non-alphanumeric/?",
    "How does NodeVisitor soe a TryFinally node visit function would be visit_TryFinally?",
    "How does the constructed main() function either reference func?",
    "How does differ compare with the don't score?",
    "What is the role of the aren't regular files?",
    "How does open open an LZMA-compressed file in binary?",
    "And when should I reach for the constructed main() function either?",
])
def test_broken_questions_are_recognised(question):
    assert unreadable_reasons(question)


@pytest.mark.parametrize("question", [
    "In lzma, what must the caller specify?",
    "Why would I need lzma.decompress?",
    "Is there a way to change how OrderedDict.fromkeys behaves?",
    "How does POP3.rset unmark all messages marked for deletion?",
    "How does the decompress function work?",
    "Can you either use a file name or a file object?",
    "How do I use the decompress function?",
])
def test_good_questions_pass(question):
    assert not unreadable_reasons(question)


@pytest.mark.parametrize("kind, ids", [
    ("multi-passage", ("typing:0", "difflib:0")),
    ("multi-passage", ("lzma:0", "bz2:0", "zipfile:0")),
    ("partial", ("typing:0", "wave:0")),
    ("unanswerable", ("typing:0",)),
    ("unanswerable", ("difflib:0",)),
])
@pytest.mark.parametrize("question_type", [None, "comparison", "explanation", "how-to"])
def test_typed_questions_have_no_pronoun_subject_repeated_word_or_fragment(kind, ids, question_type):
    asked = TypedQuestioner().baseline(kind=kind, passages=passages(*ids), history=[], question_type=question_type,
                                       corpus_stats=STATISTICS)
    for part in question_parts(asked.question) or [asked.question]:
        assert not unreadable_reasons(part), (asked.question, unreadable_reasons(part))
    assert asked.subject is None or kind == "unanswerable"  # the polisher never turns a part's subject into "it"


def test_a_comparison_sets_two_distinct_names_side_by_side():
    assert typed_wording("q", "HTTPServer.server_bind", "comparison", "server_bind") is None
    assert typed_wording("q", "the don't score", "comparison", "Differ") is None
    assert typed_wording("q", "json.dumps", "comparison", "json.loads") == "How does json.dumps compare with json.loads?"
    assert typed_wording("q", "the email.quoprimime module", "comparison", "the method") is None


def test_a_clarification_asks_about_the_ambiguous_term_not_a_neighbouring_entry():
    """Seen on the stdlib demo: "How does the noop method work?", clarified with "I mean the one in
    poplib: how does POP3.rset unmark all messages marked for deletion?", a question about the
    entry before noop's in the same chunk."""
    meant = {"title": "poplib › POP3.rset", "text": (
        "poplib.POP3.rset(self)\nUnmark all messages marked for deletion.\n\n"
        "poplib.POP3.noop(self)\nDoes nothing.\n\nOne supposes the response indicates the server is alive.")}
    other = {"title": "imaplib › IMAP4.noop", "text": (
        "imaplib.IMAP4.noop(self)\nSend NOOP command.\n\n(typ, [data]) = <instance>.noop()")}
    statistics = PassageStatistics([meant["text"], other["text"], *(passage["text"] for passage in CORPUS)])
    asked = TypedQuestioner().baseline(kind="clarification", passages=[meant, other], history=[],
                                       corpus_stats=statistics)
    assert asked.question.startswith("I mean the one in poplib: ") and "noop" in asked.question, asked.question
    assert "rset" not in asked.question
