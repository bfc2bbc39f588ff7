"""A section whose heading names a task ("Destroying widgets", "Updating the prompt", "Display an image"): how
do I do it, answered by the section's first statement that tells how, with the tool it names. A tutorial puts
most of its how under such headings, in sentences that do not name the task again ("Widgets can be destroyed
... by using the destroy method"), so no reader of a single statement asks it (guizero, cmd2, development
round 19). Where no statement tells how but the section shows it at once in a short example, the example and
the prose before it answer (round 20)."""

from __future__ import annotations

import re

from benchsmith.agents.offline.facts.actions import names_code
from benchsmith.agents.offline.facts.clauses import WANTING_VERBS, is_imperative, said_to_you, subject_of
from benchsmith.agents.offline.facts.examples import IMPORT_LINE, fenced, showable
from benchsmith.agents.offline.facts.phrases import MEANS_PREPOSITIONS, base_form
from benchsmith.agents.offline.facts.record import Fact
from benchsmith.agents.offline.facts.referents import CONDITION_MARKS, example_pointer, leans_on_context
from benchsmith.entries import Statement, section_heading
from benchsmith.language import Sentence, Token, parse, parse_all
from benchsmith.passages import Unit, plain_text, split_sentences
from benchsmith.words import ARTICLES, content_words, stems

# Tasks of reading the manual, not of using the tool: "Getting started", "Getting help", "Learning more".
READING_VERBS = frozenset("get start begin learn understand know see read go find work contribute".split())
# "Using Routers": what to do with a thing, which its section tells by what the thing does (drf, round 19)
LIGHT_TASK_VERBS = frozenset("use do make have".split())
# Nouns that name a tool when a name comes before them: "the destroy method", "the --force option".
TOOL_NOUNS = frozenset(
    "method function command option parameter argument property attribute decorator class hook flag widget "
    "callback".split()
)
MODAL_OF_ADVICE = frozenset("can should may must need".split())
MAX_HEADING_WORDS = 6
LEAD_STATEMENTS = 3  # how far into the section its how may stand
LEAD_PARAGRAPHS = 2  # how much prose may stand between a task's heading and the example that shows it


def task_sections(found: tuple[Statement, ...], parsed: list[Sentence], title: str, passage: list[Unit]) -> list[Fact]:
    """How do I do what the section's heading names, answered by the first of the section's first statements
    that tells how (an instruction, what you can or should do, or what can be done, with the means it takes)
    and names the task's verb and thing; else, where the section shows it at once in a short example that names
    them, by that example and the prose before it. Not a heading of two tasks, of reading the manual ("Getting
    started"), of "use", or of the reader's own ("Change your apps appearance")."""
    heading = section_heading(title)
    if not found or found[0].text.strip() != heading or found[0].entry or heading == title.strip():
        return []
    task = heading_task(heading, " ".join(statement.text for statement in found[1:]))
    if task is None:
        return []
    vp, thing = task
    verb, *_ = vp.split()
    # the verb and the thing of the task both: "Push a button" is no task "Use a PushButton to ..." tells
    task_words = {*stems([verb]), *stems([thing.split()[-1].lower()])}
    candidates = [
        statement
        for statement in found[1 : 1 + LEAD_STATEMENTS]
        if statement.whole and statement.entry is None and statement.role == "prose"
    ]
    for statement in candidates:
        sentence = parsed[statement.position]
        if leans_on_context(sentence):
            continue
        if _tells_how(sentence, verb) and task_words <= set(stems(content_words(statement.text))):
            return [Fact("procedure", thing, (("vp", vp),), statement.position, (statement.position,))]
    shown = _shown_by_example(passage, found, parsed, heading, verb, task_words) if _plainly_a_task(heading) else None
    if shown is None:
        return []
    lead, example = shown
    return [Fact("procedure", thing, (("vp", vp),), found[0].position, lead, example=example)]


def _plainly_a_task(heading: str) -> bool:
    """A heading no reader takes for a noun phrase: a gerund ("Putting widgets in a TitleBox"), or an imperative
    whose object has its article ("Scale an image"). "Return Values" and "Help Messages" parse as imperatives
    too; a statement that tells how settles that, an example alone does not."""
    parsed = parse(heading.lower())
    verb = parsed.tokens[0]
    obj = parsed.child(verb.index, "dobj")
    if obj is None or _the_bare_thing(parsed, obj):
        return False
    return verb.tag == "VBG" or parsed.child(obj.index, "det") is not None


def _the_bare_thing(parsed: Sentence, obj: Token) -> bool:
    """ "Validating the answer", "Activating the environment": a definite thing that nothing in the heading
    narrows, which the page's subject, not the question, says (cleo, development round 20). Stricter than
    actions' bare definite subject, which counts names: the heading is parsed lower-cased, so its names are not
    told apart, and any word beside the noun narrows it ("Creating the Celery database tables")."""
    low, high = parsed.subtree(obj.index)
    return parsed.child(obj.index, "det") is not None and all(
        token.lemma == "the" or token.index == obj.index for token in parsed.tokens[low:high]
    )


def _named_as_a_noun(heading: str, paragraphs: list[str]) -> bool:
    """The section's text tags the heading's first word as a noun or an adjective before its next word: "Session
    related reporting hooks:" under "Reporting hooks" (hooks of reporting, not a task: pytest, round 20)."""
    first, following = (word.lower() for word in heading.split()[:2])
    return any(
        token.text.lower() == first
        and token.tag in ("NN", "JJ")
        and token.index + 1 < len(sentence.tokens)
        and sentence.tokens[token.index + 1].text.lower() == following
        for sentence in parse_all(paragraphs)
        for token in sentence.tokens
    )


def _shown_by_example(
    passage: list[Unit],
    found: tuple[Statement, ...],
    parsed: list[Sentence],
    heading: str,
    verb: str,
    task_words: set[str],
) -> tuple[tuple[int, ...], str] | None:
    """The section's example, when it follows the heading after at most two paragraphs of whole sentences, is
    short enough to show whole and names the task's thing or verb ("Putting widgets in a TitleBox", then a
    paragraph, then the program that makes one); with the positions of the sentences before it that stand on
    their own. A tutorial shows most of its tasks so and tells them in no sentence (guizero, cleo, cmd2,
    development round 20)."""
    if not passage or plain_text(passage[0].text).strip() != heading:
        return None
    opening = passage[1 : 2 + LEAD_PARAGRAPHS]
    at = next((i for i, unit in enumerate(opening) if unit.kind == "code" and unit.fenced), None)
    if at is None or not all(_a_paragraph(unit) for unit in opening[:at]):
        return None  # a heading, a list or a table before any example: the section tells, or holds more
    paragraphs = [plain_text(unit.text) for unit in opening[:at]]
    if _named_as_a_noun(heading, paragraphs):
        return None
    example = showable(opening[at])
    if example is None:
        return None
    # what the example does, its imports left out: "from fastapi import FastAPI, WebSocket" and "app = FastAPI()"
    # show no websocket made (FastAPI, development round 22)
    doing = "\n".join(line for line in example.lower().splitlines() if not IMPORT_LINE.match(line))
    if not any(stem in doing for stem in task_words):
        return None
    said = " ".join(paragraphs)
    lead = [statement for statement in found[1:] if statement.text in said]
    if [statement.position for statement in lead] != list(range(1, 1 + len(lead))):
        return None  # a line between them that is no sentence: another heading
    if _task_as_occasion([parsed[statement.position] for statement in lead], verb):
        return None
    introduction = split_sentences(paragraphs[-1])[-1:] if paragraphs else []
    if introduction and _sets_up_a_case(introduction[0]):
        return None
    # "Our ColorField class above ...": a sentence that leans on the page is left out of the reply, the example stays
    return (
        tuple(
            s.position
            for s in lead
            if s.whole and not leans_on_context(parsed[s.position]) and not example_pointer(parsed[s.position])
        ),
        fenced(example),
    )


def _task_as_occasion(lead: list[Sentence], verb: str) -> bool:
    """The heading's task named, in the prose before the example, only as when something else is done: "You can also
    add headers when you return a Response directly" under "Return a Response directly" (a page on headers): the
    example adds headers, it does not show how to return a Response (FastAPI, development round 22). A wish is the
    task itself: "If you want to overwrite the current line, use overwrite()" (cleo)."""
    stem = stems([verb])
    named = [
        (sentence, token)
        for sentence in lead
        for token in sentence.tokens
        if token.pos == "VERB" and stems([token.text.lower()]) == stem
    ]
    # the user does it ("when you return a Response"), not the tool or the example ("When a command has been
    # removed, the command method has been deleted" tells what removing does: cmd2)
    return bool(named) and all(
        _in_condition(sentence, token) and not _wanted(sentence, token) and said_to_you(sentence, token)
        for sentence, token in named
    )


# Openings of a sentence that sets a case up rather than doing the task: a supposition, the default, the past.
CASE_OPENING = re.compile(
    r"(?i)^(?:let(?:'s|’s| us) (?:say|imagine|assume|suppose)|suppose|imagine|assume|by default|prior to)\b"
)
# An example that completes "such as" is an instance of a thing the sentence names, not the task done.
INSTANCE_ENDING = re.compile(r"(?i)\bsuch as:$")


def _sets_up_a_case(introduction: str) -> bool:
    """The sentence right before the example sets up a case the example shows, not the heading's task done: what
    happens by default ("By default, the help command displays:" under "Categorizing commands": cmd2), how it was
    done before ("Prior to version 3.1 the supported mechanism for marking values used the syntax:": pytest), an
    instance ("If you have a parametrized session such as:" under "Selecting parametrized sessions", then the session,
    not how to select it: nox), a supposition ("Let's say that ..., we want to show a message:"). The three first read
    broken on the development readings, and no introduction so worded answered a turn read ok there. Not a condition
    alone as parsed: "If you need to mark a path operation as deprecated, ..., pass the parameter deprecated:" is
    parsed with the condition as its root (FastAPI's sources, read ok)."""
    said = introduction.strip()
    return bool(CASE_OPENING.match(said) or INSTANCE_ENDING.search(said))


def _wanted(sentence: Sentence, token: Token) -> bool:
    """What a verb of wanting takes: "want to overwrite the current line"."""
    head = sentence.tokens[token.head]
    return token.dep == "xcomp" and head.lemma in WANTING_VERBS


def _a_paragraph(unit: Unit) -> bool:
    return unit.kind == "prose" and plain_text(unit.text).rstrip().endswith((".", ":"))


# A heading's subtitle after a dash: "Subclassing QueueHandler - a ZeroMQ example" names a task and an example of
# it, no one task ("What is the recommended way to subclass QueueHandler - a ZeroMQ example?" read broken:
# python-docs, development, thirty-first session)
SUBTITLE = re.compile(r"\s[-–—]\s")


def heading_task(heading: str, body: str) -> tuple[str, str] | None:
    """The task a heading names, as a verb phrase a user says, and its object ("Destroying widgets" → "destroy
    widgets", "widgets"); None for a heading that is no task of one verb and its object. A word written in
    capitals in the heading keeps them only where the body writes it so inside a sentence (a name, not Title
    Case)."""
    words = heading.split()
    if not 2 <= len(words) <= MAX_HEADING_WORDS or any(mark in heading for mark in ":?()") or SUBTITLE.search(heading):
        return None
    parsed = parse(heading.lower())  # lower-cased: the tagger reads Title Case as names
    verb = parsed.tokens[0]
    if (
        verb.tag not in ("VBG", "VB")
        or verb.code
        or verb.lemma in READING_VERBS | LIGHT_TASK_VERBS
        or verb.dep != "ROOT"
    ):
        return None
    if parsed.child(verb.index, "dobj") is None or any(
        (token.dep == "conj" and token.pos == "VERB") or token.tag == "PRP$" or token.pos in ("PRON", "NUM")
        for token in parsed.tokens
    ):
        return None
    rest = [_as_written(word, body) for word in words[1:]]
    return " ".join([base_form(verb), *rest]), " ".join(rest)


def _as_written(word: str, body: str) -> str:
    """A heading's word as a sentence writes it: lower-case unless it is a name (capitals inside it, or the body
    capitalizes it after a sentence's first word and never writes it lower-case)."""
    if word.lower() in ARTICLES:
        return word.lower()  # "Create A Command": Title Case, not a name
    if not word[:1].isupper() or word.isupper() or word[1:] != word[1:].lower():
        return word
    inside = {token.strip(".,;:!?()\"'") for sentence in body.split(". ") for token in sentence.split()[1:]}
    return word if word in inside and word.lower() not in inside else word.lower()


def _tells_how(sentence: Sentence, verb: str) -> bool:
    """An instruction, what you can or should do, or what can be done, with the means it takes named ("Enable the
    debugger by wrapping the application with the DebuggedApplication middleware", "can be set globally, using
    the DEFAULT_RENDERER_CLASSES setting"), the task's verb outside a condition ("If you underspecify X, make sure
    to ..." says what to do after, not how). "You can also customize how X is routed" names no means: it says
    that, not how (drf, development round 19 readings: 4 such replies of 16 read as not answering)."""
    root = sentence.root
    if not _names_means(sentence) or not any(
        stems([token.text.lower()]) == stems([verb]) and not _in_condition(sentence, token) for token in sentence.tokens
    ):
        return False
    if is_imperative(sentence, root):
        return True
    modal = sentence.child(root.index, "aux")
    subject = subject_of(sentence, root)
    if modal is None or modal.lemma not in MODAL_OF_ADVICE or sentence.child(root.index, "neg") is not None:
        return False
    if said_to_you(sentence, root):
        return True
    return sentence.child(root.index, "auxpass") is not None and subject is not None and subject.pos != "PRON"


def _names_means(sentence: Sentence) -> bool:
    """A tool the sentence does the task with: after "by", "using", "with", "via" or "through", or what "use"
    takes ("use the --disable-warnings option to ..."): a code thing, or a named tool ("the destroy method")."""
    for token in sentence.tokens:
        if token.dep == "prep" and token.lemma in MEANS_PREPOSITIONS:
            what = sentence.child(token.index, "pcomp", "pobj")
        elif token.lemma == "use" and token.pos == "VERB":
            what = sentence.child(token.index, "dobj")
        else:
            continue
        if what is not None and (names_code(sentence, what) or _named_kind_of_tool(sentence, what)):
            return True
    return False


def _in_condition(sentence: Sentence, token: Token) -> bool:
    """Inside a clause of condition or time ("If you underspecify ...", "when instantiating")."""
    seen = set()
    while token.index not in seen and token.dep != "ROOT":
        seen.add(token.index)
        if token.dep == "advcl" and any(
            # "when" is tagged a mark or an adverb: "when you return a Response" either way
            child.dep in ("mark", "advmod") and child.lemma in CONDITION_MARKS
            for child in sentence.children(token.index)
        ):
            return True
        token = sentence.tokens[token.head]
    return False


def _named_kind_of_tool(sentence: Sentence, head: Token) -> bool:
    """A tool named by a name before its kind ("the destroy method", "the Text widget") in ``head``'s phrase."""
    low, high = sentence.subtree(head.index)
    return any(token.lemma in TOOL_NOUNS and _named_before(sentence, token) for token in sentence.tokens[low:high])


def _named_before(sentence: Sentence, noun: Token) -> bool:
    return any(
        child.dep == "compound" and child.index < noun.index and child.pos in ("NOUN", "PROPN")
        for child in sentence.children(noun.index)
    )
