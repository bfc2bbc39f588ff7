"""A turn's question about a passage, and the passage's answer to it.

:func:`ask` ranks every wording of every fact of the gold passage (agents/offline/facts/,
agents/offline/wording.py) and returns the best one not asked yet:

1. for a follow-up, a fact about what the previous question was about;
2. a frame the conversation has not used yet (benchsmith/language.py ``question_frame``), and
   not the previous turn's kind of fact: a benchmark whose conversations reuse a frame has one
   frame in a quarter of its questions (stdlib, development half: 27%; 15% with the purpose
   frames of agents/offline/wording.py);
3. the question type asked for, where the passage has it, else the type the conversation asked
   least;
4. a topic a user can name: a code name or a phrase with a distinctive word, not "the result"
   (``specific``: the mean IDF of its content words at least ``MIN_TOPIC_RARITY`` of the highest
   possible; a code name or a name in capitals always is); a statement of the page's own, not the
   tree's template sentence with another name in it (``templated``);
5. the kind of fact (``KIND_ORDER``: what a user asks first: how to, why it fails; then what an
   entry does; then what happens under a condition, definitions and yes/no: readers found 46% of
   condition questions broken, lifted from a sentence's clause, against 1% of purpose questions
   (development readings, rounds 6-8));
6. the most distinctive statement, then the earlier one; of one fact's frames, one chosen by
   the passage and the turn (so a benchmark spreads over every frame).

:func:`answer` finds the fact a question asks and returns the statements that answer it: the
offline responder's reply is the passage's own words for exactly what was asked.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from benchsmith.agents.offline.facts import Fact, passage_facts
from benchsmith.agents.offline.headings import CODE_LIKE, MANUAL_TITLE_WORDS, context_name
from benchsmith.agents.offline.wording import Wording, wordings
from benchsmith.agents.text import WordStatistics, inverse_document_frequency
from benchsmith.entries import short_name, spoken_name, statements
from benchsmith.language import question_frame
from benchsmith.words import COPIED_RUN, content_words, copy_words, longest_shared_run, stems

KIND_ORDER = {
    "procedure": 0,
    "remedy": 0,
    "advice": 0,
    "condition": 3,
    "error": 1,
    "comparison": 1,
    "absence": 1,
    "parameter": 2,
    "purpose": 2,
    "behaviour": 2,
    "agent": 2,
    "occasion": 2,
    "returns": 3,
    "capability": 3,
    "definition": 3,
    "default": 3,
    "conditional-return": 3,
    "section": 4,
}
# A topic's words must be this rare on average (share of the highest IDF possible): "the result" is
# on every page, "connect timeout" is not (the figure the key phrases of the standard library were
# measured with: "python code" 3.2 of 8.5, "legacy pyc paths" 5.7).
MIN_TOPIC_RARITY = 0.47
# A sentence the tree repeats with another name in it ("When you create a Slider object, you must specify a
# master and you can specify any of the optional parameters" on each of 14 widget pages: 43% of guizero's
# questions asked it, development round 18) is the tree's template: its words, less its names, in this many
# chunks. An API entry's description shared with its namesakes is theirs (agents/offline/namesakes.py).
TEMPLATE_CHUNKS = 4
TEMPLATE_MIN_WORDS = 5  # distinct content words, less the names: fewer recur by chance ("Sends a GET request.")
TEMPLATE_NAMES = re.compile(r"\b(?:[A-Za-z_]\w*[._(]\S*|[A-Z]\w*)")  # a code name, a capitalized word
ENTRY_DESCRIPTION_KINDS = frozenset({"purpose", "parameter", "returns", "default"})
CLARIFIED = re.compile(r"^I mean (?P<name>[^:]+): (?P<question>.+)$")
# "In git submodule, ...", and a signature's commas inside its parentheses: "In .build_url_field(self, field_name), ..."
IN_CONTEXT = re.compile(r"^In (?P<context>(?:[^,(]|\([^)]*\))+), (?P<rest>.+)$")
# A word in this share of a collection's chunks names the tree itself: tree names are in 50-70% (fastapi,
# mkdocs, celery, guizero, cmd2, requests), the libraries they name in at most 26% (django, python, pydantic).
TREE_NAME_SHARE = 0.4
SPREAD = 3  # facts of one kind are drawn among this many buckets before distinctiveness decides
SITUATED_KINDS = frozenset({"condition", "remedy", "absence"})
SLOT_WITH_TOPIC = {
    "procedure": "vp",
    "remedy": "clause",
    "condition": "clause",
    "advice": "vp",
    "capability": "vp",
    "conditional-return": "clause",
}


@dataclass(frozen=True)
class Asked:
    question: str
    subject: str  # what it is about (the polisher refers back to it)
    question_type: str
    frame: str
    fact: Fact


def specific(phrase: str, statistics: WordStatistics | None) -> bool:
    """Can a user name this on its own (see the module docstring, rule 4)?"""
    if CODE_LIKE.search(phrase) or any(word[:1].isupper() for word in phrase.split()[1:]):
        return True
    meaning = content_words(phrase)
    if not meaning:
        return False
    if statistics is None:
        return True
    rarest_possible = math.log(statistics.chunks + 1) + 1.0
    rarity = max(inverse_document_frequency(statistics, word) for word in meaning) / rarest_possible
    return rarity >= MIN_TOPIC_RARITY


def templated(statement: str, statistics: WordStatistics | None) -> bool:
    """Is the statement the tree's template sentence (see ``TEMPLATE_CHUNKS``)?"""
    if statistics is None:
        return False
    meaning = set(content_words(TEMPLATE_NAMES.sub(" ", statement)))
    return len(meaning) >= TEMPLATE_MIN_WORDS and statistics.chunks_with_all(meaning) >= TEMPLATE_CHUNKS


def asked_before(history: Iterable[dict[str, Any]]) -> set[str]:
    """Every wording of the questions asked so far, with and without the page they name first."""
    asked = {
        text
        for turn in history
        for text in (turn.get("question"), turn.get("question_unpolished"), turn.get("rewrite"))
        if text
    }
    return asked | {without_context(text) for text in asked}


def without_context(question: str) -> str:
    """ "In git submodule, what happens if ...?" → "What happens if ...?"."""
    opened = IN_CONTEXT.match(question)
    return opened["rest"][:1].upper() + opened["rest"][1:] if opened else question


def ask(
    gold: dict[str, Any],
    history: list[dict[str, Any]],
    *,
    switch: str = "start",
    previous_subject: str | None = None,
    question_type: str | None = None,
    rejected: Iterable[str] = (),
    statistics: WordStatistics | None = None,
    acceptable: Callable[[str], bool] | None = None,
    only: Callable[[Fact], bool] | None = None,
    conversation: str = "",
    spare: bool = False,
) -> Asked | None:
    """The best question about ``gold`` (``{"text", "title"}``) not asked in ``history`` nor
    ``rejected``, one that is ``acceptable`` (a lexical overlap bound) first, about facts ``only``
    admits (all by default), in its ``spare`` frames too when asked (agents/offline/wording.py ``Frame``); None
    when the passage has nothing left to ask. The ``conversation`` (an
    id) joins the history in choosing among equals: conversations that open on one passage have no
    history to tell them apart, and asked it alike (mkdocs, development round 13)."""
    facts = passage_facts(gold["text"], gold.get("title", ""))
    if not facts:
        return None
    asked = asked_before(history)
    refused = set(rejected) | {without_context(question) for question in rejected}
    used_frames = {question_frame(question) for question in asked}
    previous_frame = (
        question_frame(history[-1].get("question_unpolished") or history[-1]["question"]) if history else None
    )
    asked_types = Counter(turn.get("question_type") for turn in history)
    texts = {s.position: s.text for s in statements(gold["text"], gold.get("title", ""))}
    # Every wording of every fact, in its spare frames too: a question asked in any of them was asked.
    worded_facts = [(fact, wordings(fact, spare=True)) for fact in facts]
    # What earlier questions about this passage were answered with is not asked again in other words.
    answered = {
        position
        for fact, every_wording in worded_facts
        if any(w.question in asked for w in every_wording)
        for position in fact.answer
    }
    # The conversation so far chooses among equally good facts and frames: two conversations that
    # reach one passage ask it different things.
    signature = "\x00".join(
        [*([conversation] if conversation else []), gold["text"], *(turn.get("question", "") for turn in history)]
    )

    def spread(*key: object) -> int:
        return int(hashlib.sha256(f"{signature}\x00{key}".encode()).hexdigest()[:8], 16)

    passage_words = copy_words(gold["text"])
    claimed = _claims(facts, statistics, conversation)
    candidates = []
    for fact, every_wording in worded_facts:
        if only is not None and not only(fact):
            continue
        if any(w.question in asked for w in every_wording) or set(fact.answer) & answered:
            continue  # this fact was asked already, in some frame, or its answer was given
        worded = [wording for wording in every_wording if spare or not wording.spare]
        topic_words = fact.slot(SLOT_WITH_TOPIC[fact.kind]) if fact.kind in SLOT_WITH_TOPIC else fact.topic
        if not specific(topic_words, statistics):
            continue
        if fact.kind not in ENTRY_DESCRIPTION_KINDS and templated(texts.get(fact.statement, ""), statistics):
            continue
        distinct = _distinctiveness(texts.get(fact.statement, ""), statistics)
        for order, wording in enumerate(worded):
            if (
                wording.question in refused
                or longest_shared_run(copy_words(wording.question), passage_words) >= COPIED_RUN
            ):
                continue  # refused, or it copies the passage
            if wording.frame == "what-does-verb" and _names_the_tree(fact.slot("owner"), statistics):
                continue  # "What does FastAPI call?" has as many answers as the tree has pages
            frame = question_frame(wording.question)
            candidates.append(
                (
                    (
                        acceptable is not None and not acceptable(wording.question),
                        not (
                            switch == "follow-up"
                            and previous_subject
                            and fact.topic.lower() == previous_subject.lower()
                        ),
                        frame in used_frames or frame == previous_frame,
                        bool(question_type) and wording.question_type != question_type,
                        # where the type asked for is missing, a question stays a question: as a fallback too,
                        # keyword queries were a sixth of a reference's turns where a tenth were planned, nearly
                        # all in one frame (werkzeug and requests, development: 17% and 19%)
                        bool(question_type) and question_type != "keyword" and wording.question_type == "keyword",
                        asked_types[wording.question_type],  # where the type asked for is missing
                        # then not a factoid: an API reference answers mostly "what is X for", and factoids were
                        # 56% of werkzeug's questions (development round 12)
                        bool(question_type) and question_type != "factoid" and wording.question_type == "factoid",
                        KIND_ORDER[fact.kind],
                        claimed.get(_fact_key(fact), 0),
                        spread(fact.statement, fact.kind) % SPREAD,
                        -round(distinct, 4),
                        fact.statement,
                        spread(fact.statement, fact.kind, order),
                    ),
                    fact,
                    wording,
                    frame,
                )
            )
    if not candidates:
        return None
    _, fact, wording, frame = min(candidates, key=lambda item: item[0])
    return Asked(wording.question, fact.topic, wording.question_type, frame, fact)


def _names_the_tree(owner: str, statistics: WordStatistics | None) -> bool:
    """Is ``owner`` the name of what the whole tree documents ("FastAPI", "MkDocs", "cmd2": in half or more
    of their trees' chunks; a library they name, "Pydantic" or "Django", in at most a quarter)? Asked what
    it does to something, it has an answer on every page (FastAPI's sources, development round 21)."""
    if statistics is None or not statistics.chunks or len(owner.split()) != 1:
        return False
    return statistics.document_frequency(owner.lower()) / statistics.chunks >= TREE_NAME_SHARE


def _fact_key(fact: Fact) -> tuple[int, str, tuple[int, ...]]:
    return fact.statement, fact.kind, fact.answer


def _claims(
    facts: Iterable[Fact], statistics: WordStatistics | None, conversation: str
) -> dict[tuple[int, str, tuple[int, ...]], int]:
    """{fact: its place in the conversation's turn} among the passage's askable facts of one rank of
    ``KIND_ORDER``: conversation number n takes the n-th first, then the next ones in turn. Ranked alike,
    conversations that reach one passage asked it the same question, and a repeat ends a conversation
    (evals/measures/repeated_turns.py): on an API reference whose passages list several entries, conversations
    walking the same path asked the same entry of each (requests, development round 15). A function of the
    passage and the conversation's number, never of other conversations: they may run at once."""
    number = _conversation_number(conversation)
    ranks: dict[int, list[tuple[int, str, tuple[int, ...]]]] = {}
    for fact in facts:
        topic_words = fact.slot(SLOT_WITH_TOPIC[fact.kind]) if fact.kind in SLOT_WITH_TOPIC else fact.topic
        key = _fact_key(fact)
        if specific(topic_words, statistics) and key not in ranks.setdefault(KIND_ORDER[fact.kind], []):
            ranks[KIND_ORDER[fact.kind]].append(key)
    return {
        key: (place - number) % len(ranked) for ranked in ranks.values() for place, key in enumerate(sorted(ranked))
    }


def _conversation_number(conversation: str) -> int:
    """The number of a run's conversation ("c0007" → 7); another id (a thread of its own) by its hash."""
    digits = re.search(r"\d+$", conversation)
    if digits:
        return int(digits[0])
    return int(hashlib.sha256(conversation.encode()).hexdigest()[:8], 16) if conversation else 0


def _distinctiveness(text: str, statistics: WordStatistics | None) -> float:
    meaning = set(content_words(text))
    if not meaning or statistics is None:
        return 0.0
    return sum(inverse_document_frequency(statistics, word) for word in meaning) / len(meaning)


def answer(gold: dict[str, Any], question: str) -> str | None:
    """The statements of ``gold`` that answer a question :func:`ask` made of it (None for any
    other question)."""
    found = fact_of(gold, question)
    return None if found is None else fact_answer(gold, found)


def fact_of(gold: dict[str, Any], question: str) -> Fact | None:
    """The fact of ``gold`` a question :func:`ask` made of it asks (None for any other question)."""
    facts = passage_facts(gold["text"], gold.get("title", ""))
    question = without_context(question)  # "In git submodule, what happens if ...?"
    if meant := CLARIFIED.match(question):  # "I mean Blueprint.route: what does it do?"
        asked = meant["question"][:1].upper() + meant["question"][1:]
        question = re.sub(r"\bit\b", meant["name"], asked, count=1)
    return next((fact for fact in facts if any(w.question == question for w in wordings(fact, spare=True))), None)


def fact_answer(gold: dict[str, Any], fact: Fact) -> str:
    """What answers ``fact``, a fact of ``gold``: its statements, then its example."""
    texts = {s.position: s.text for s in statements(gold["text"], gold.get("title", ""))}
    said = " ".join(texts[position] for position in fact.answer if position in texts)
    return "\n\n".join(part for part in (said, fact.example) if part)


def wording_of(fact: Fact, question: str) -> Wording | None:
    return next((w for w in wordings(fact, spare=True) if w.question == question), None)


def self_contained(
    question: str, title: str, *, situated: bool = False, entry: str | None = None, entry_kind: str | None = None
) -> str:
    """The question as someone who never saw the conversation or the page reads it: it names what it
    is about already (a code name, a name in capitals, a word of the page's title or heading);
    otherwise what the page is about comes first ("In git submodule, what happens if I provide no
    pathspec?"): a first question about "a pattern" or "an empty string" leans on a page the user has
    not named. A ``situated`` question (what happens under a condition: ``SITUATED_KINDS``) names its
    page even when it names a code thing: "What happens if core.commitGraph is true?" is answered
    differently by each command that reads the setting (git fsck's here; git, development round 8).

    A question about what an API ``entry``'s statement says names that entry, not the section the entry is
    listed in: "In wordwrap, what happens if a word contains hyphens?", not "In List of Builtin Filters,
    ..." (jinja2, development round 12); a section of entries is no thing a user asks about."""
    if (
        entry
        and entry_known(entry)
        and re.search(rf"(?<![\w.]){re.escape(short_name(entry).split('.')[-1])}\b", question)
    ):
        return question  # it names the entry already: "What does the wordwrap filter do?"
    context = spoken_name(entry, entry_kind) if entry and entry_known(entry) else context_name(title)
    anchored = _anchored(question, title) and not (situated and context.lower() not in question.lower())
    if not context or question.startswith("In ") or anchored or not question.rstrip().endswith("?"):
        return question  # (a keyword query is typed as it is: nobody types "In Models, --timeout option")
    opening = (
        question if question[1:2].isupper() or question.split(" ", 1)[0] == "I" else question[:1].lower() + question[1:]
    )
    return f"In {context}, {opening}"


def named_by_heading(question: str) -> bool:
    """A question that names what it is about only through the title of a section of words: "In Data
    Structures, can you explain what the buffer size is?", "In Partial updates recap, what is the recommended way
    to convert the copied model?", "In Request Files, is there a way to get it?". The title is no name a user
    has, and the thing that needs it is a word of the passage. On the development readings, such questions about
    what a thing is were broken 21 times of 23 (round 15); of all of them since round 14 (procedures, conditions
    and capabilities too), 9 of 25 distinct questions were, against 128 of 1,158 of the rest (rounds 14 to 26).
    The passage's next question is asked instead. A code name or a name in capitals in the question names its
    thing ("In Response Content, what happens when I access r.text?"), and a code name or a command as the title
    places it ("In git config, ...", "In FileStorage.save, ..."); those keep their context."""
    opened = IN_CONTEXT.match(question)
    if opened is None:
        return False
    context = opened["context"]
    titled = len(context.split()) > 1 and context[:1].isupper() and not CODE_LIKE.search(context)
    return titled and not _anchored(opened["rest"], "")


# Kinds whose answer is a means: the thing to use, call or set.
MEANS_KINDS = frozenset({"procedure", "remedy", "advice"})


def context_gives_away(question: str, kind: str, reply: str) -> bool:
    """A how-to question placed in the very thing its answer names: "In force_authenticate, how can I
    unauthenticate subsequent requests?", answered "To unauthenticate subsequent requests, call force_authenticate
    ...", "In APIException, how do I give a custom exception?" ("subclass APIException"): the place tells the
    answer, so the question is asked without it (drf, development round 25: 9 of its 682 first questions).
    Conditions keep their place: "In git submodule, what happens if ...?" is answered by what git submodule does,
    not by its name."""
    opened = IN_CONTEXT.match(question)
    if opened is None or kind not in MEANS_KINDS:
        return False
    return re.search(rf"(?<!\w){re.escape(opened['context'])}(?!\w)", reply) is not None


def entry_known(entry: str) -> bool:
    """An entry that names the thing on its own: not a command's option (its page's command names it)."""
    return not entry.startswith("-")


def _anchored(question: str, title: str) -> bool:
    if CODE_NAME_IN_QUESTION.search(question) or any(
        word[:1].isupper() for word in question.split()[1:] if word.lower() != "i" and not word.startswith("I'")
    ):
        return True
    shared = set(stems(content_words(question))) & set(stems(content_words(title.replace("›", " "))))
    return bool(shared - set(stems(ANCHORLESS_WORDS)))  # "my docs" is anyone's docs: it anchors nothing


ANCHORLESS_WORDS = [
    *MANUAL_TITLE_WORDS,
    "docs",
    "doc",
    "documentation",
    "page",
    "pages",
    "file",
    "files",
    "project",
    "site",
    "your",
    "using",
    "use",
]


CODE_NAME_IN_QUESTION = re.compile(r"[\w)]\.[A-Za-z_]|\w_\w|\(\)|\b[A-Z][A-Z0-9_]{2,}\b")
