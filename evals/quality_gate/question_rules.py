"""The rules that read the question: ``unaskable``, ``topic_not_noun_phrase``, ``copies_passage``, and
the question's half of ``dangling_referent``."""

from __future__ import annotations

import re

from benchsmith.evals.quality_gate.evidence import TurnEvidence, code_names
from benchsmith.evals.question_form import question_form
from benchsmith.language import Sentence, is_noun_phrase, parse
from benchsmith.words import COPIED_RUN, content_words, longest_shared_run, stems, words

MAX_QUESTION_WORDS = 40
PRONOUNS = frozenset({"it", "its", "they", "them", "their", "this", "these", "those"})
# Nouns that belong to something: "the SOURCE argument" of which function?
BELONGING_NOUNS = frozenset("argument parameter option flag field attribute variable setting key value property method "
                            "column entry".split())
# Frames whose slot names a thing: the slot must be a noun phrase.
TOPIC_FRAMES = tuple(re.compile(pattern, re.IGNORECASE) for pattern in (
    r"^(?:In [^,]+, )?what is the (?:role|purpose|point|meaning) of (?P<topic>.+?)\?$",
    r"^(?:In [^,]+, )?what (?:is|are) (?P<topic>.+?) (?:used )?for\?$",
    r"^(?:In [^,]+, )?what (?:does|do) (?P<topic>.+?) (?:do|mean|hold|return|represent|signal|control)\?$",
    r"^(?:In [^,]+, )?how (?:does|do) (?P<topic>.+?) work\?$",
    r"^(?:In [^,]+, )?can you explain (?:what )?(?P<topic>.+?)(?: is| are)?\?$",
    r"^(?:In [^,]+, )?how do I use (?P<topic>.+?)\?$",
    r"^(?:In [^,]+, )?what will I find in (?P<topic>.+?)\?$",
    r"^(?:In [^,]+, )?when would I use (?P<topic>.+?)\?$",
    r"^(?:In [^,]+, )?what (?:exactly )?(?:is|are) (?P<topic>.+?)\?$",
    r"^(?:In [^,]+, )?what happens without (?P<topic>.+?)\?$",
))


def unaskable(turn: TurnEvidence) -> str | None:
    question = turn.asked
    problems = question_form(turn.question, follow_up=bool(turn.previous)).problems()
    if problems:
        return problems[0]
    tokens = words(question)
    if len(question.split()) > MAX_QUESTION_WORDS:
        return f"{len(question.split())} words"
    if any(first == second and first.isalpha() and first not in ("that", "had") for first, second in
           zip(tokens, tokens[1:])):
        return "a word twice in a row"
    if any(question.count(left) != question.count(right) for left, right in ("()", "[]", "{}", "<>")) \
            or question.count('"') % 2 or len(re.findall(r"(?<![\w])'|'(?![\w])", question)) % 2:
        return "a bracket or a quotation cut in half"
    if re.search(r"\bi\b", question):
        return "a lower-case 'i'"
    if re.search(r"\w: \w", question) and not re.match(r"^\s*\w+ (vs|or)\b", question):
        return "a label lifted into the question (a colon inside it)"
    if re.search(r"\b[A-Z]{2,}\b(?: [A-Z]{2,}\b)+", re.sub(r"[A-Za-z_]*_[A-Za-z_]+", "", question)):
        return "words in capitals: a heading pasted in"
    if agreement := _disagreement(parse(question)):
        return agreement
    if re.match(r"(?i)^if .+, what happens next\?$", question):
        return "a template: 'If ..., what happens next?' (readers call it unaskable)"
    if re.search(r"(?i)\bway to (?:never|not)\b", question):
        return "asks for a way not to do something"
    parts = [part for part in re.split(r"(?<=\?)\s+", question) if part.strip()]
    if len(parts) > 1:
        topics = [set(stems(content_words(part))) for part in parts]
        if any(not (topics[0] & other) for other in topics[1:]) and not any(
                re.match(r"(?i)^(and|also)\b.*\b(it|its|they|them|their)\b", part) for part in parts[1:]):
            return "several questions about unrelated things"
    return None


def _disagreement(sentence: Sentence) -> str | None:
    """"Is Section headers able to ...", "Does the commands ...": an opening auxiliary that does not
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
    question = turn.asked
    for pattern in TOPIC_FRAMES:
        found = pattern.match(question)
        if not found:
            continue
        topic = found["topic"].strip()
        if topic.lower() in PRONOUNS or re.fullmatch(r"(the |a |an )?[\w.()\[\]-]+", topic) and \
                re.search(r"[._()]|[a-z][A-Z]", topic):
            return None  # a pronoun (a follow-up) or a code name
        if not is_noun_phrase(parse(topic)):
            return f"asks about {topic!r}, which is no noun phrase"
        return None
    return None


def copies_passage(turn: TurnEvidence) -> str | None:
    asked = words(turn.asked)
    for _, text in [*turn.gold, *turn.held_out]:
        run = longest_shared_run(asked, words(text))
        if run >= COPIED_RUN:
            return f"repeats {run} consecutive words of its passage"
    return None


def dangling_question(turn: TurnEvidence) -> str | None:
    """A first question that says "it"; "the default", "the error", "the parent" (a definite common
    noun nothing before the question names, with nothing in it that says which); "the SOURCE
    argument" of no function named anywhere in the conversation."""
    question = turn.asked
    question_words = words(question)
    if not turn.previous and turn.turn_type != "clarification" and PRONOUNS & set(
            question_words[1:] if question_words[:1] == ["this"] else question_words):
        pronoun = next(word for word in question_words if word in PRONOUNS)
        return f"a first question says {pronoun!r}"
    before = set(stems(content_words(turn.history_text)))
    sentence = parse(question)
    for token in sentence.tokens:
        if token.pos not in ("NOUN", "PROPN") or token.code or sentence.chunk_at(token.index) is None:
            continue
        if sentence.chunk_at(token.index)[1] != token.index + 1:
            continue  # not the head of its noun phrase ("the template meta-data key")
        children = sentence.children(token.index)
        definite = any(child.dep == "det" and child.lemma in ("the", "this", "that", "these") for child in children)
        # what says which one: a name beside it, a possessor, an "of" phrase ("the bare minimum" says nothing)
        described = [child for child in children if child.dep in ("compound", "nmod", "poss", "nummod")
                     or child.dep == "prep" and child.lemma in ("of", "for", "to", "in", "from")]
        phrase = [child.lemma for child in children if child.dep == "compound"] + [token.lemma]
        named_before = set(stems(phrase)) <= before
        if definite and not described and not named_before and token.lemma in UNANCHORED_NOUNS:
            return f"'the {token.text}' leans on something nothing before it names"
        owned = any(child.dep == "prep" and child.lemma in ("of", "for", "to", "in") for child in children)
        own_names = {child.text for child in children}
        elsewhere = [name for name in code_names(question) if name not in own_names]
        if token.lemma in BELONGING_NOUNS and token.tag == "NN" and not owned and not named_before and not elsewhere \
                and not code_names(turn.previous[-1][0] if turn.previous else ""):
            owner = next((child.text for child in children if child.dep in ("compound", "amod")), token.text)
            return f"'{owner} {token.text}' of something nothing names"
    return None


# Common nouns that say nothing of which one is meant: "the default", "the error", "the path", "the file".
# A documentation's own subject ("the repository" in Git's, "the browser" in a web framework's) is not among
# them: readers take it as understood.
UNANCHORED_NOUNS = frozenset(
    "default parent error path file minimum maximum id value variable argument parameter option workflow result "
    "output input string list name key field object item data method function command line pattern entry step "
    "case change problem issue setting example section page chunk directory folder version format type mode flag "
    "message number text content thing part source target event handler callback instance return".split())
