"""Does a passage contain the answer to a question? The check behind an unanswerable turn.

An unanswerable turn asks what a held-out passage answers; the turn is a lie when a passage still
in the corpus answers it too. A near-duplicate check (MinHash, tools/corpus/held_out.py) catches a copy
of the held-out passage, not a passage that says the same thing in other words or on another
page. This check reads for the answer. A remaining passage **contains** it when one of its
sentences

1. names the code name the question asks about (``REQUESTS_CA_BUNDLE``, ``on_startup``,
   ``Session.mount``, ``InlineProcessor``: a code name as benchsmith.language reads one), or the
   member of a class it asks about without its class where the member's name is no English word
   ("This is handled by the inline_args attribute" for ``FactoryOptions.inline_args``), and says
   something of it (``MIN_SENTENCE_WORDS`` words or more), or
   documents that entry (a sentence under its signature line, benchsmith/entries.py), or documents a
   member of that name on another class in the words of the answer (``VERBATIM_SHARE`` of its stems:
   ``BaseTemplate.prepare`` for ``SimpleTemplate.prepare``, an inherited method); or
2. holds every topic stem of the question (its content words less its frame: what it is
   about and what it asks of it), at least ``MIN_TOPIC_STEMS`` of them; or
3. holds at least ``MIN_ANSWER_SHARE`` of the content stems of the **answer** (the held-out
   sentence that shares the most topic stems with the question) and what the question is about:
   the last part of each code name it names ("get" of ``requests.get``: "Sends a POST request"
   says the same of another entry), else half its topic stems; or at least ``VERBATIM_SHARE`` of the
   answer's stems whatever it names: the answer itself, copied to another page.

A question that names no code name asks about what the corpus may say in any words ("Can I find the
storage connection string?"); that no remaining passage answers it cannot be read from the words, so
it is taken as answered when every stem of what it is about (its noun phrases, by the parser:
"the Meta-Data extension" of "What does the Meta-Data extension add?", not the verb that asks)
recurs in at least ``GENERAL_TOPIC_PASSAGES`` remaining passages: the corpus discusses it elsewhere.
Reading the verb as a topic stem too let a page's held-out summary pass while six chunks of the same
page remained (a test-half reading, Markdown's, showed it). On the development readings, noun phrases alone
catch one more answered turn ("Is there a way to override the 404 error page?") and refuse one more truly
unanswerable one. Of the development readings' 20 unanswerable turns that name no code name, the three
readers called answered had their rarest topic stem in 7, 15 and 36 chunks of the collection, and 8 of the 17
read as truly unanswerable had it in 5 or more (a turn refused is re-planned or dropped to answerable, and
counted). The rule counts the passages it is given (synthesis and the audit give the retrievers' pool, up to
20), so it refuses at most as often as those collection counts say.

A class's member named alone may be another entry's ("to_python" of another tag class) or a passing
mention; on the development half it answers what the entry is in 6 of 27 pages a reader judged
(data/readings/evidence/member-mentions-development.jsonl; a module's function named alone, 0 of 13), and
no count of the pages naming it, nor the embedder's similarity, tells those six apart. An unanswerable turn
claims that nothing answers, so a mention that may answer refuses it (the turn is re-planned on another
held-out chunk or dropped to answerable, and counted): a test-half reading found factory-boy's
``FactoryOptions.inline_args`` turn answered by its introduction's mention. A member written with an owner
(``TagDict.to_python``) is that owner's, which the rules on entries read.

Calibrated on the development half's readings (data/readings/development): the readers' eight
"unanswerable turn the corpus answers" were seven code names documented elsewhere and one
restatement. The answer to a question on an entry is what the held-out passage documents under it
(``answer_sentence``); by shared stems alone a page's heading won ("SimpleTemplate API"), and a
base class's method documented in the same words passed as absent. A test-half reading showed it
(bottle, a tree first read in the twenty-second session); on the development readings the change
flags no turn more and stops flagging two that readers read as truly unanswerable.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from benchsmith.entries import class_member, same_entry, statements
from benchsmith.language import CODE_NAME, parse
from benchsmith.passages import sentences
from benchsmith.words import CODE_SHAPED, content_words, stems

MIN_ANSWER_SHARE = 0.6
MIN_TOPIC_STEMS = 2
VERBATIM_SHARE = 0.9  # of the answer's stems: the same sentence on another page
MIN_SENTENCE_WORDS = 5
GENERAL_TOPIC_PASSAGES = 5  # remaining passages holding each topic stem of a question naming no code name
QUALIFIED_NAME = re.compile(r"[._]|^-")  # dotted, with an underscore, or a flag
# Frame words of a question: a passage answers without them.
QUESTION_FRAME = frozenset(
    "what which when where why how does do did can could should would will is are was were happen happens next "
    "expect way best possible able purpose role use used work works mean means explain exactly return returns "
    "raise raises cause causes hold default value get back pass control thing need".split()
)


def _stems(text: str, leave_out: frozenset[str] = frozenset()) -> set[str]:
    return set(stems([word for word in content_words(text) if word not in leave_out]))


def answer_sentence(question: str, passages: Sequence[str]) -> str | None:
    """The first sentence ``passages`` document under the entry the question names (the description under
    "bottle.SimpleTemplate.prepare(...)" for "Why would I call SimpleTemplate.prepare?"), else the sentence that
    shares the most topic stems with the question. By shared stems alone the page's heading "SimpleTemplate API"
    won: it holds the class's name, and the description never names its entry."""
    names = _asked_names(question)
    for passage in passages:
        for statement in statements(passage):
            if statement.entry and any(same_entry(statement.entry, name.rstrip("()")) for name in names):
                return statement.text
    asked = _stems(question, QUESTION_FRAME)
    best, best_shared = None, 0
    for passage in passages:
        for sentence in sentences(passage) or [passage]:
            shared = len(asked & _stems(sentence))
            if shared > best_shared:
                best, best_shared = sentence, shared
    return best


def contains_answer(
    question: str, held_out: Sequence[str], remaining: Sequence[str], min_share: float = MIN_ANSWER_SHARE
) -> str | None:
    """The first sentence of ``remaining`` that answers the question (see the module docstring), or None."""
    names = _asked_names(question)
    asked = _stems(question, QUESTION_FRAME)
    answer = answer_sentence(question, held_out)
    answer_stems = _stems(answer) if answer else set()
    members = {name.rstrip("()").rsplit(".", 1)[-1] for name in names if "." in name}
    alone = sorted(_class_members_alone(names))  # "the inline_args attribute"
    for passage in remaining:
        documented = [(statement.entry, statement) for statement in statements(passage) if statement.entry]
        for entry, statement in documented:
            if any(same_entry(entry, name.rstrip("()")) for name in names):
                return statement.text  # the same entry, documented on another page
        for entry, statement in documented:
            # the member of another class in the answer's own words: an inherited or aliased method
            # (BaseTemplate.prepare for SimpleTemplate.prepare, MultiDict.get for HeaderDict.get); sibling
            # members that say the same of other data ("Loads the ledger of page 7") share less
            if (
                entry.rsplit(".", 1)[-1] in members
                and answer_stems
                and len(answer_stems & _stems(statement.text)) >= VERBATIM_SHARE * len(answer_stems)
            ):
                return statement.text
        for sentence in sentences(passage) or [passage]:
            if (
                any(re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", sentence) for name in [*names, *alone])
                and len(sentence.split()) >= MIN_SENTENCE_WORDS
            ):
                return sentence
            found = _stems(sentence)
            if len(asked) >= MIN_TOPIC_STEMS and asked <= found:
                return sentence
            about = (
                all(name.rsplit(".", 1)[-1].lower() in sentence.lower() for name in names)
                if names
                else len(asked & found) >= len(asked) / 2
            )
            shared = len(answer_stems & found)
            if answer_stems and asked & found and about and shared >= min_share * len(answer_stems):
                return sentence
            if len(answer_stems) >= MIN_TOPIC_STEMS * 2 and shared >= VERBATIM_SHARE * len(answer_stems):
                return sentence  # the answer itself, copied to another page without its entry's name
    return None if names else _discussed_elsewhere(_noun_phrase_stems(question) or asked, remaining)


def _class_members_alone(names: Sequence[str]) -> set[str]:
    """The members of a class the names name, as a page writes them without their class: ``inline_args`` of
    ``FactoryOptions.inline_args``, where the member's name is no English word. A module's function or class
    (``ipaddress.IPv4Network``) is written alone wherever it is used, and such uses answered none of the 13
    development pairs read."""
    members = {name.rstrip("()").rsplit(".", 1)[-1] for name in names if class_member(name.rstrip("()"))}
    return {member for member in members if CODE_SHAPED.search(member)}


def _asked_names(question: str) -> list[str]:
    """The code names the question asks about, the most specific only: in "What makes OrderedDict.pop raise
    KeyError?" the entry is OrderedDict.pop, and a sentence naming KeyError is about another."""
    names = [name for name in CODE_NAME.findall(question) if len(name) > 3]
    return [name for name in names if QUALIFIED_NAME.search(name)] or names


def _noun_phrase_stems(question: str) -> set[str]:
    """The topic stems of the question's noun phrases (its frame words left out): what it is about.
    The tagger reads some question verbs as nouns ("add" in "What does the extension add?"), but
    leaves them out of the noun phrases."""
    parsed = parse(question)
    return set().union(*(_stems(parsed.span_text(start, end), QUESTION_FRAME) for start, end in parsed.noun_chunks))


def _discussed_elsewhere(asked: set[str], remaining: Sequence[str]) -> str | None:
    """For a question naming no code name: the remaining sentence sharing the most of its topic
    stems when each of them recurs in ``GENERAL_TOPIC_PASSAGES`` remaining passages, else None."""
    if not asked:
        return None
    holding = [_stems(passage) for passage in remaining]
    if any(sum(stem in found for found in holding) < GENERAL_TOPIC_PASSAGES for stem in asked):
        return None
    said = [sentence for passage in remaining for sentence in sentences(passage) or [passage]]
    return max(said, key=lambda sentence: len(asked & _stems(sentence)))
