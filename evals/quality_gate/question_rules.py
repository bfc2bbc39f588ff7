"""The rules that read the question: ``unaskable``, ``topic_not_noun_phrase``, ``copies_passage``, and
the question's half of ``dangling_referent``."""

from __future__ import annotations

import re
from itertools import pairwise

from benchsmith.entries import same_entry, statements
from benchsmith.evals.measures.question_form import question_form
from benchsmith.evals.quality_gate.evidence import TurnEvidence, code_names, spoken_entry
from benchsmith.language import Sentence, Token, is_expletive, is_noun_phrase, parse, words_of
from benchsmith.words import (
    COPIED_RUN,
    LIGHT_VERBS,
    UNANCHORED_NOUNS,
    content_words,
    copy_words,
    longest_shared_run,
    stems,
    words,
)

MAX_QUESTION_WORDS = 40
DOTTED_JOIN = re.compile(r"(?<=\w)\.(?=\w)")  # the dot inside a dotted name ("amqp.AMQP")
PRONOUNS = frozenset({"it", "its", "they", "them", "their", "this", "these", "those"})
# Nouns that belong to something: "the SOURCE argument" of which function?
BELONGING_NOUNS = frozenset(
    "argument parameter option flag field attribute variable setting key value property method column entry".split()
)
# Frames whose slot names a thing: the slot must be a noun phrase.
TOPIC_FRAMES = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"^(?:In [^,]+, )?what is the (?:role|purpose|point|meaning) of (?P<topic>.+?)\?$",
        r"^(?:In [^,]+, )?what (?:is|are) (?P<topic>.+?) (?:(?:used|meant|intended|designed) )?for\?$",
        r"^(?:In [^,]+, )?what (?:does|do) (?P<topic>.+?) (?:do|mean|hold|return|represent|signal|control)\?$",
        r"^(?:In [^,]+, )?how (?:does|do) (?P<topic>.+?) work\?$",
        r"^(?:In [^,]+, )?can you explain (?:what )?(?P<topic>.+?)(?: is| are)?\?$",
        r"^(?:In [^,]+, )?how do I use (?P<topic>.+?)\?$",
        r"^(?:In [^,]+, )?what will I find in (?P<topic>.+?)\?$",
        r"^(?:In [^,]+, )?when would I use (?P<topic>.+?)\?$",
        r"^(?:In [^,]+, )?what is meant by (?P<topic>.+?)\?$",
        # not "What is stored in X?" (what is the subject of a passive) nor "What is the best way to X?" (a how-to)
        r"^(?:In [^,]+, )?what (?:exactly )?(?:is|are) (?!\w+ed (?:in|by|on|to|from|with)\b)"
        r"(?!(?:the|a) (?:best|recommended|right|easiest|preferred|good) way to\b)(?P<topic>.+?)\?$",
        r"^(?:In [^,]+, )?what happens without (?P<topic>.+?)\?$",
    )
)


def unaskable(turn: TurnEvidence) -> str | None:
    question = turn.asked
    problems = question_form(turn.question, follow_up=bool(turn.previous)).problems()
    if problems and not (problems[0].startswith("fragment") and spoken_entry(question, turn.gold)):
        return problems[0]  # a question naming its entry as "the urlize filter" is no fragment
    # a dotted name is one word: "amqp.AMQP" and "manager.Manager" repeat nothing (development readings: the
    # rule's only 3 flags were such names, all read ok)
    tokens = words(DOTTED_JOIN.sub("_", question))
    if len(question.split()) > MAX_QUESTION_WORDS:
        return f"{len(question.split())} words"
    if any(first == second and first.isalpha() and first not in ("that", "had") for first, second in pairwise(tokens)):
        return "a word twice in a row"
    if (
        any(question.count(left) != question.count(right) for left, right in ("()", "[]", "{}", "<>"))
        or question.count('"') % 2
        or len(re.findall(r"(?<![\w])'|'(?![\w])", question)) % 2
    ):
        return "a bracket or a quotation cut in half"
    if re.search(r"\bi\b", question):
        return "a lower-case 'i'"
    # a curly apostrophe is an apostrophe: "a task queue’s input" names no 's' (development readings, celery)
    if placeholder := re.search(r"(?<![\w\-./'’`@{])[b-hj-z](?![\w\-./'’`(}])", question):
        return f"a one-letter name ({placeholder[0]!r}) from a code example the question does not show"
    if (context := re.match(r"In ([^,]+), ", question)) and (
        re.search(r"#\d|\(\d|\d+\.\d+", context[1]) or len(context[1].split()) > 6
    ):
        return f"a heading as the question's context ({context[1]!r}: a release note or a chapter)"
    if (default_of := DEFAULT_OF.search(question)) and _callable_entry(default_of["name"], turn):
        return f"asks the default value of {default_of['name']}, which is called, not set"
    if found := re.search(r"(?i)\b(a|an|the) (it|they|them)\b", question):
        return f"an article before a pronoun ({found[0]!r})"
    if fused := _fused_word(turn):
        return f"two words run together ({fused!r})"
    if re.search(r"\w: \w", question) and not re.match(r"^\s*\w+ (vs|or)\b", question):
        return "a label lifted into the question (a colon inside it)"
    if re.search(r"\b[A-Z]{2,}\b(?: [A-Z]{2,}\b)+", re.sub(r"[A-Za-z_]*_[A-Za-z_]+", "", question)):
        return "words in capitals: a heading pasted in"
    if agreement := _disagreement(parse(question)):
        return agreement
    if ending := _light_verb_ending(parse(question)):
        return f"asks what something {ending}s, not for what"
    if re.match(r"(?i)^if .+, what happens next\?$", question):
        return "a template: 'If ..., what happens next?' (readers call it unaskable)"
    if re.search(r"(?i)\bway to (?:never|not)\b", question):
        return "asks for a way not to do something"
    if cut := _complement_cut_off(parse(question)):
        return f"ends on {cut!r}, of what it does not say (a clause cut off)"
    parts = [part for part in re.split(r"(?<=\?)\s+", question) if part.strip()]
    if len(parts) > 1:
        topics = [set(stems(content_words(part))) for part in parts]
        if any(not (topics[0] & other) for other in topics[1:]) and not any(
            re.match(r"(?i)^(and|also)\b.*\b(it|its|they|them|their)\b", part) for part in parts[1:]
        ):
            return "several questions about unrelated things"
    return None


DEFAULT_OF = re.compile(
    r"(?i)\bdefault(?: value)? of (?P<name>[\w.]+(?:\(\))?)|what does (?P<subject>[\w.]+\(\)) "
    r"default to"
)


def _callable_entry(name: str, turn: TurnEvidence) -> bool:
    """Is ``name`` a function or a method the gold documents (``name()``, or its entry's kind)?"""
    if name.endswith("()"):
        return True
    return any(
        statement.entry and same_entry(statement.entry, name) and statement.entry_kind in CALLABLE_KINDS
        for title, text in turn.gold
        for statement in statements(text, title)
    )


CALLABLE_KINDS = frozenset({"function", "method", "classmethod", "staticmethod"})


def _fused_word(turn: TurnEvidence) -> str | None:
    """A long word of the question found in no text of the turn that is two of their words joined
    ("core.autocrlfwithout"): a rendering slip, not a term."""
    # a word of a title ("gittutorial") is a name, not two words run together
    seen = set(
        words(
            " ".join(
                [
                    *(f"{title} {text}" for title, text in (*turn.gold, *turn.held_out, *turn.candidates)),
                    turn.history_text,
                ]
            )
        )
    )
    for word in words(turn.asked):
        if (
            len(word) >= 8
            and word.isalpha()
            and word not in seen
            and any(word[:cut] in seen and word[cut:] in seen for cut in range(3, len(word) - 2))
        ):
            return word
    return None


def _light_verb_ending(sentence: Sentence) -> str | None:
    """ "What does MkDocs use?": a question that ends on a light verb asks for its object and says
    nothing of what for; the verb's lemma, or None."""
    tokens = [token for token in sentence.tokens if token.pos != "PUNCT"]
    if len(tokens) < 3 or tokens[0].text.lower() not in ("what", "which"):
        return None
    last = tokens[-1]  # the tagger may take it for a noun ("What does MkDocs use?"): "does" says it is the verb
    asked_with_do = any(token.lemma == "do" and token.pos == "AUX" for token in tokens[1:-1])
    return last.lemma if last.lemma in LIGHT_VERBS and (last.pos == "VERB" or asked_with_do) else None


# Nouns that need a complement to mean anything: "provide a mechanism" (for what?), "take advantage" (of what?).
RELATIONAL_NOUNS = frozenset(
    "mechanism way advantage access success ability means possibility support benefit "
    "information details chance opportunity choice".split()
)


def _complement_cut_off(sentence: Sentence) -> str | None:
    """ "Do Transport Adapters provide a mechanism?", "Is it possible to take advantage?": a question
    that ends on a noun needing a complement, with none (no "of"/"for" phrase, no compound, no
    possessor, no clause): the lifted sentence's complement was cut off. The noun, or None."""
    tokens = [token for token in sentence.tokens if token.pos != "PUNCT"]
    if len(tokens) < 3:
        return None
    last = tokens[-1]
    if last.pos != "NOUN" or last.lemma not in RELATIONAL_NOUNS or last.code:
        return None
    if any(
        child.dep in ("compound", "prep", "poss", "nmod", "acl", "relcl") for child in sentence.children(last.index)
    ):
        return None
    chunk = sentence.chunk_at(last.index)
    return words_of(sentence.tokens[chunk[0] if chunk else last.index : last.index + 1])


def _disagreement(sentence: Sentence) -> str | None:
    """ "Is Section headers able to ...", "Does the commands ...": an opening auxiliary that does not
    agree with its subject."""
    if not sentence.tokens:
        return None
    first = sentence.tokens[0]
    if first.lemma not in ("be", "do", "have") or first.pos != "AUX":
        return None
    subject = next((t for t in sentence.tokens if t.dep in ("nsubj", "nsubjpass") and t.index > 0), None)
    if subject is None or subject.code or subject.pos not in ("NOUN",):
        return None
    singular_verb = first.text.lower() in ("is", "does", "has", "was")
    plural_subject = subject.tag == "NNS"
    if singular_verb == plural_subject:
        return f"{first.text!r} does not agree with {subject.text!r}"
    return None


def topic_not_noun_phrase(turn: TurnEvidence) -> str | None:
    # each question of a turn that asks two ("What is X? And can I compact it?") on its own
    for part in re.split(r"(?<=\?)\s+(?:And |Also,? )?", turn.asked):
        for pattern in TOPIC_FRAMES:
            found = pattern.match(part[:1].upper() + part[1:])
            if not found:
                continue
            topic = found["topic"].strip()
            if topic.lower() in PRONOUNS or (
                re.fullmatch(r"(the |a |an )?[\w.()\[\]-]+", topic) and re.search(r"[._()]|[a-z][A-Z]", topic)
            ):
                break  # a pronoun (a follow-up) or a code name
            if not is_noun_phrase(parse(topic)):
                return f"asks about {topic!r}, which is no noun phrase"
            break
    return None


def copies_passage(turn: TurnEvidence) -> str | None:
    asked = copy_words(turn.asked)
    for _, text in [*turn.gold, *turn.held_out]:
        run = longest_shared_run(asked, copy_words(text))
        if run >= COPIED_RUN:
            return f"repeats {run} consecutive words of its passage"
    return None


def dangling_question(turn: TurnEvidence) -> str | None:
    """A first question that says "it"; "the default", "the error", "the parent" (a definite common
    noun nothing before the question names, with nothing in it that says which); "the SOURCE
    argument" of no function named anywhere in the conversation."""
    question = turn.asked
    sentence = parse(question)
    if not turn.previous and turn.turn_type != "clarification":
        # "this" opening a question is a determiner ("This flag ..." is caught below); "Is it possible to
        # X?" refers to nothing
        pronoun = next(
            (
                token.text.lower()
                for token in sentence.tokens
                if token.text.lower() in PRONOUNS
                and not (token.index == 0 and token.text.lower() == "this")
                and not is_expletive(sentence, token)
            ),
            None,
        )
        if pronoun:
            return f"a first question says {pronoun!r}"
    if unnamed := _condition_names_nothing(turn):
        return unnamed
    if not turn.previous and (owner_missing := OWNERLESS_METHOD.search(question)):
        return f"'{owner_missing[0]}' of no class or module the question names"
    before = set(stems(content_words(turn.history_text)))
    contrasted = re.search(r"(?i)\b(as well as|besides|other than|in addition to|apart from)\b", turn.reply)
    for token in sentence.tokens if not turn.previous and not contrasted else ():
        # a first "other providers", "another path": other than what? (later, the conversation says)
        if token.text.lower() in ("other", "another") and token.dep in ("amod", "det") and token.head != token.index:
            thing = sentence.tokens[token.head]
            if thing.pos in ("NOUN", "PROPN"):
                return f"'{token.text} {thing.text}' is other than something nothing before it names"
    for token in sentence.tokens:
        if token.pos not in ("NOUN", "PROPN") or token.code or (chunk := sentence.chunk_at(token.index)) is None:
            continue
        if chunk[1] != token.index + 1:
            continue  # not the head of its noun phrase ("the template meta-data key")
        children = sentence.children(token.index)
        definite = any(child.dep == "det" and child.lemma in ("the", "this", "that", "these") for child in children)
        # what says which one: a name beside it, a possessor, an "of" phrase ("the bare minimum" says nothing)
        described = [
            child
            for child in children
            if child.dep in ("compound", "nmod", "poss", "nummod")
            or (child.dep == "prep" and child.lemma in ("of", "for", "to", "in", "from"))
        ]
        phrase = [child.lemma for child in children if child.dep == "compound"] + [token.lemma]
        named_before = set(stems(phrase)) <= before
        # "the defaults argument of X": the parser may take the argument's name for the head (werkzeug, round 14)
        names_a_belonging = token.index + 1 < len(sentence.tokens) and (
            sentence.tokens[token.index + 1].lemma in BELONGING_NOUNS
        )
        if (
            definite
            and not described
            and not named_before
            and not names_a_belonging
            and token.lemma in UNANCHORED_NOUNS
        ):
            return f"'the {token.text}' leans on something nothing before it names"
        owned = any(child.dep == "prep" and child.lemma in ("of", "for", "to", "in") for child in children)
        own_names = {child.text for child in children}
        elsewhere = [name for name in code_names(question) if name not in own_names]
        if (
            token.lemma in BELONGING_NOUNS
            and token.tag == "NN"
            and not owned
            and not named_before
            and not elsewhere
            and not code_names(turn.previous[-1][0] if turn.previous else "")
            and not _owner_named(sentence, token.index, children)
        ):
            owner = next((child.text for child in children if child.dep in ("compound", "amod")), token.text)
            return f"'{owner} {token.text}' of something nothing names"
    return None


def _owner_named(sentence: Sentence, index: int, children: list[Token]) -> bool:
    """What a belonging noun belongs to is named after all: "on_env return value" (a return value is
    the named function's), "In git bisect, ... the DISPLAY environment variable" (the scope), "git
    fetch-pack --refetch option" (a name besides the thing's own). Development readings: of 10 turns
    the rule flagged, readers called 8 ok, all of them these; the 2 broken ("Is it possible to set a
    chunk_size parameter?", "... use primary key?") name nothing but the thing itself."""
    if any(child.dep == "compound" and child.lemma == "return" for child in children):
        return True
    if SCOPED_QUESTION.match(sentence.text):
        return True
    names = [token for token in sentence.tokens if token.index != index and (token.code or token.pos == "PROPN")]
    return len(names) > 1


SCOPED_QUESTION = re.compile(r"^In [^,]+, ")
# "What happens if I provide no ids?": a condition question, no "In X," before it.
CONDITION_QUESTION = re.compile(
    r"(?i)^what (?:happens|should I expect|do I need to do|should I do|can I do)\b.*?\b(?:if|when)\b(?P<condition>.+)\?$"
)
# "the setpos() method": a method by its bare name (no "Class." before it).
OWNERLESS_METHOD = re.compile(r"(?<![\w.])[a-z_]\w*\(\)(?: and [a-z_]\w*\(\))? methods?\b")


def _condition_names_nothing(turn: TurnEvidence) -> str | None:
    """ "What happens if I provide no ids?", "What should I expect if I give a pattern?": a condition
    question with no context ("In git clone, ..."), no code name, no proper name, whose condition shares
    no word with the earlier turns, asks what happens to something it never names (ids of what? a
    pattern for which command?). Only a condition the user brings about ("if I ..."): one about a third
    thing ("if chardet is installed", "when a directory is requested") names what it is about. Development
    readings: of the 34 turns flagged without that, 23 broken; with it, 13 of 17 (rounds 11-13: 3 broken
    and 6 ok flagged without, 2 and 1 with)."""
    question = turn.asked
    found = CONDITION_QUESTION.match(question)
    if not found or code_names(question) or re.search(r"(?<!^)(?<![\w'])(?!I\b)[A-Z]\w*", question):
        return None
    if not re.match(r"\s*I\b", found["condition"]):
        return None
    condition = set(stems(content_words(found["condition"])))
    if not condition or condition & set(stems(content_words(turn.history_text))):
        return None
    return f"asks what happens if{found['condition']}, of nothing it names"
