"""The questions a user asks about a fact (agents/offline/facts/), in several frames each.

A frame is one way of asking ("How do I {vp}?", "What's the best way to {vp}?"); each has the
question type its wording gives (agents/question_types.py's names). A benchmark draws on many
frames, so none dominates (benchsmith/language.py ``question_frame`` measures the shares); a conversation does not
repeat one (agents/offline/asking.py). A spare frame ("Can you tell me about X?") is asked only to reword a
question whose frame a benchmark has too many of (graphs/synthesis/frames.py).

The verb a procedure names is put in a user's words where documentation has its own register
(``USER_VERBS``: "obtain" → "get", "terminate" → "stop"): a question that copies its passage
favours lexical retrieval, and users do not write like reference pages.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchsmith.agents.offline.facts import Fact
from benchsmith.agents.offline.facts.conditionals import OPTION_SLOT
from benchsmith.words import LIGHT_VERBS

# Documentation verbs and the everyday verb a user types for them (base forms). Only pairs that
# keep the meaning in any technical context: "register" or "encode" have no such twin.
USER_VERBS = {
    "obtain": "get",
    "retrieve": "get",
    "acquire": "get",
    "fetch": "get",
    "receive": "get",
    "terminate": "stop",
    "cease": "stop",
    "halt": "stop",
    "invoke": "call",
    "utilize": "use",
    "utilise": "use",
    "employ": "use",
    "modify": "change",
    "alter": "change",
    "construct": "build",
    "instantiate": "create",
    "initialize": "set up",
    "initialise": "set up",
    "configure": "set up",
    "specify": "set",
    "establish": "open",
    "eliminate": "remove",
    "discard": "throw away",
    "omit": "leave out",
    "exclude": "leave out",
    "display": "show",
    "persist": "keep",
    "preserve": "keep",
    "retain": "keep",
    "determine": "find out",
    "ascertain": "find out",
    "examine": "look at",
    "inspect": "look at",
    "commence": "start",
    "initiate": "start",
    "attempt": "try",
    "permit": "allow",
    "prevent": "stop",
    "facilitate": "make easier",
    "append": "add",
    "insert": "add",
    "supply": "give",
    "provide": "give",
    "transmit": "send",
    "emit": "send",
}


@dataclass(frozen=True)
class Frame:
    name: str  # the frame's id: questions in one frame read alike
    question_type: str  # factoid, explanation, comparison, how-to, yes/no
    template: str  # slots in braces: {vp}, {clause}, {mark}, {entry}, {error}, {thing}, {a}, {b}, ...
    # asked only to reword a question whose frame a benchmark has too many of (graphs/synthesis/frames.py)
    spare: bool = False


def _frames(*rows: tuple[str, str, str] | tuple[str, str, str, bool]) -> tuple[Frame, ...]:
    return tuple(Frame(*row) for row in rows)


FRAMES: dict[str, tuple[Frame, ...]] = {
    "procedure": _frames(
        ("how-do-i", "how-to", "How do I {vp}?"),
        ("how-can-i", "how-to", "How can I {vp}?"),
        ("best-way", "how-to", "What's the best way to {vp}?"),
        # a second how-to frame with words of its own: under the overlap bound "How do I X?" copies its passage's
        # words, and "What's the best way to X?" took 21-28% of the questions of cmd2's and guizero's tutorials
        # (development round 25)
        ("recommended-way", "how-to", "What is the recommended way to {vp}?"),
        ("is-there-a-way", "yes/no", "Is there a way to {vp}?"),
        ("keyword-task", "keyword", "{vp}"),
        # Under the overlap bound a task of a few words has two frames ("How do I X?" copies its passage), so a
        # tutorial's benchmark of eight turns, five of them tasks, asked three in one (typer's sources, test: up to
        # 44% of a benchmark's questions in one frame). More frames with words of their own, asked only to reword.
        ("good-way", "how-to", "What's a good way to {vp}?", True),
        ("easiest-way", "how-to", "What's the easiest way to {vp}?", True),
        ("steps-to", "how-to", "What steps do I need to take to {vp}?", True),
        # and a yes/no frame with a word of its own, so a benchmark of mostly tasks can ask fewer than half as how-tos
        # ("Is there a way to X?" is above the overlap bound for a task of three words)
        ("simple-way", "yes/no", "Is there a simple way to {vp}?", True),
    ),
    "condition": _frames(
        ("what-happens", "explanation", "What happens {mark} {clause}?"),
        ("what-to-expect", "explanation", "What should I expect {mark} {clause}?"),
    ),
    "condition-affected": _frames(
        ("what-happens-to", "explanation", "What happens to {affected} {mark} {clause}?"),
        ("mark-what-happens-to", "explanation", "{Mark} {clause}, what happens to {affected}?"),
    ),
    "remedy": _frames(
        ("what-should-i-do", "how-to", "What should I do {mark} {clause}?"),
        ("mark-what-do-i-do", "how-to", "{Mark} {clause}, what do I need to do?"),
    ),
    "remedy-option": _frames(
        ("what-can-i-do", "how-to", "What can I do {mark} {clause}?"),
        ("mark-what-can-i-do", "how-to", "{Mark} {clause}, what can I do?"),
    ),
    "error": _frames(
        ("when-raise", "factoid", "When does {raiser} raise {error}?"),
        ("why-raise", "explanation", "Why would {raiser} raise {error}?"),
        ("what-makes-raise", "explanation", "What makes {raiser} raise {error}?"),
    ),
    "error-alone": _frames(
        ("when-raised", "factoid", "When is {error} raised?"),
        ("what-causes", "explanation", "What causes {an_error}?"),
        ("why-get", "explanation", "Why would I get {an_error}?"),
    ),
    "definition": _frames(
        ("what-is", "factoid", "What {is} {thing}?"),
        ("explain-what-is", "explanation", "Can you explain what {thing} {is}?"),
        ("what-exactly", "factoid", "What exactly {is} {thing}?"),
        # "What is X?" is a fragment to the gate for a name of one or two words, so a definition had two frames and
        # a benchmark of 8 questions with three definitions asked two in one (typer, test: 25%). A broader question,
        # asked only when a benchmark needs another frame: of a name or a code name it passes, of "a vacuum" not.
        ("tell-me-about", "explanation", "Can you tell me about {thing}?", True),
    ),
    # Several factoid frames carry a word of their own ("purpose", "role", "meant"): the overlap
    # bound refuses "What does json.dump do?" (every content word is in its passage), so with one
    # such frame that frame took a fifth of a benchmark's questions (stdlib, development: 23%).
    "purpose": _frames(
        ("what-does-do", "factoid", "What does {entry} do?"),
        ("what-for", "factoid", "What is {entry} for?"),
        ("when-use", "explanation", "When would I use {entry}?"),
        ("purpose-of", "factoid", "What is the purpose of {entry}?"),
        ("role-of", "factoid", "What is the role of {entry}?"),
        ("meant-for", "factoid", "What is {entry} meant for?"),
        ("why-call", "explanation", "Why would I call {entry}?"),
        ("what-problem", "explanation", "What problem does {entry} solve?"),
        # Under the overlap bound (0.62) a question about an entry named by two stems ("json.dump") passes only with two
        # words of its own that the passage lacks; with "what problem" the one such frame, it took 60% of a benchmark's
        # questions (stdlib, development), so there are five, of both types.
        ("serve-purpose", "factoid", "What purpose does {entry} serve?"),
        ("use-case", "explanation", "What is a typical use case for {entry}?"),
        ("situation-reach", "explanation", "In what situation would I reach for {entry}?"),
        ("task-help", "factoid", "What task does {entry} help me with?"),
        ("take-care", "factoid", "What does {entry} take care of?"),
        # an explanation a description answers: without the occasion frames (an entry described by what it returns)
        # factoids were 47% of a reference's questions (drf, development round 14)
        # ("Can you explain what X does?" reads to the gate as a question about the clause "X does")
        ("explain-call", "explanation", "Can you explain {entry}?"),
        ("keyword-entry", "keyword", "{entry} what it does"),
        # a keyword query with words of its own: under the overlap bound the others copy their passage (stdlib's
        # keyword share fell from 18% to 5%)
        ("keyword-use-case", "keyword", "{entry} typical use case"),
        # a second one, where the first copies its passage ("typical", "use" or "case" in it): a planned keyword
        # query on a dotted name passed in 270 of werkzeug's 354 purpose facts, 344 with this one (development)
        ("keyword-intended-purpose", "keyword", "{entry} intended purpose"),
    ),
    "purpose-name": _frames(
        ("what-for", "factoid", "What is {entry} for?"),
        ("used-for", "factoid", "What is {entry} used for?"),
        ("purpose-of", "factoid", "What is the purpose of {entry}?"),
        ("role-of", "factoid", "What is the role of {entry}?"),
        ("meant-for", "factoid", "What is {entry} meant for?"),
        # an explanation frame too: on a reference of settings and options (git's) every purpose question
        # was a factoid, half of a benchmark's questions (development round 11)
        ("useful-when", "explanation", "When is {entry} useful?"),
        ("explain-entry", "explanation", "Can you explain what {entry} is?"),
    ),
    # an entry whose description opens with its intent ("Intended to speed up tools that ...")
    "purpose-why": _frames(
        ("why-use", "explanation", "Why would I use {entry}?"),
        ("useful-when", "explanation", "When is {entry} useful?"),
    ),
    "purpose-class": _frames(
        ("what-for", "factoid", "What is {entry} for?"),
        ("class-represent", "factoid", "What does the {entry} class represent?"),
        ("when-use", "explanation", "When would I use {entry}?"),
        ("what-problem", "explanation", "What problem does {entry} solve?"),
        ("serve-purpose", "factoid", "What purpose does {entry} serve?"),
        # the other factoid frames with two words of their own: under the overlap bound a dotted class name passes
        # in "What purpose does X serve?" alone (werkzeug, development: 218 of 224 purpose facts pass in it, "What
        # does the X class represent?" 1 of 46), so it took every factoid turn on a class
        ("task-help", "factoid", "What task does {entry} help me with?"),
        ("take-care", "factoid", "What does {entry} take care of?"),
        ("use-case", "explanation", "What is a typical use case for {entry}?"),
        ("keyword-use-case", "keyword", "{entry} typical use case"),
        ("keyword-intended-purpose", "keyword", "{entry} intended purpose"),
        # a second explanation frame: on a reference of classes "what problem" took 21% (jinja2, round 12)
        ("explain-entry", "explanation", "Can you explain what {entry} is?"),
        ("keyword-class", "keyword", "{entry} class purpose"),
    ),
    "purpose-value": _frames(
        ("what-hold", "factoid", "What does {entry} hold?"),
        ("what-stored", "factoid", "What is stored in {entry}?"),
        ("what-for", "factoid", "What is {entry} for?"),
        # an explanation frame: a reference of attributes and properties asked only factoids (werkzeug, round 12)
        ("explain-entry", "explanation", "Can you explain what {entry} is?"),
    ),
    "purpose-exception": _frames(
        ("when-raised", "factoid", "When is {entry} raised?"),
        ("what-signal", "factoid", "What does {an_entry} signal?"),
        ("why-get", "explanation", "Why would I get {an_entry}?"),
    ),
    "purpose-exception-kind": _frames(
        ("what-kind-error", "factoid", "What kind of {problem} is {entry}?"),
        ("class-represent", "factoid", "What does the {entry} class represent?"),
        ("keyword-class", "keyword", "{entry} class purpose"),
    ),
    "purpose-option": _frames(
        ("option-do", "factoid", "What does the {entry} option{of_owner} do?"),
        ("option-for", "factoid", "What is {entry} for{in_owner}?"),
        ("option-why", "explanation", "Why would I pass {entry}{to_owner}?"),
        ("option-when", "explanation", "When should I use {entry}{with_owner}?"),
        ("keyword-option", "keyword", "{owner_space}{entry} option"),
    ),
    # a command a section documents ("This command lists available shortcuts." under "shortcuts"): run, not called
    "purpose-command": _frames(
        ("what-does-do", "factoid", "What does {entry} do?"),
        ("what-for", "factoid", "What is {entry} for?"),
        ("when-use", "explanation", "When would I use {entry}?"),
        ("purpose-of", "factoid", "What is the purpose of {entry}?"),
        ("explain-call", "explanation", "Can you explain {entry}?"),
    ),
    "purpose-setting": _frames(
        ("setting-do", "factoid", "What does the {entry} setting do?"),
        ("what-for", "factoid", "What is {entry} for?"),
        ("setting-control", "factoid", "What does {entry} control?"),
    ),
    "returns": _frames(
        ("what-return", "factoid", "What does {entry} return?"),
        ("get-back", "factoid", "What do I get back from {entry}?"),
        ("comes-back", "factoid", "What comes back from {entry}?"),
        ("hand-back", "factoid", "What does {entry} hand back?"),
        ("return-value", "factoid", "What is the return value of {entry}?"),
        ("keyword-return", "keyword", "{entry} return value"),
    ),
    "conditional-return": _frames(
        ("what-return-if", "factoid", "What does {entry} return {mark} {clause}?"),
        ("mark-return", "factoid", "{Mark} {clause}, what does {entry} return?"),
    ),
    "section": _frames(
        ("explain", "explanation", "Can you explain {topic}?"),
        ("overview", "summary", "Can you give me an overview of {topic}?"),
    ),
    "section-where": _frames(
        ("where-find", "factoid", "Where can I find {topic}?"),
    ),
    "parameter": _frames(
        ("parameter-for", "factoid", "What is the {parameter} parameter of {entry} for?"),
        ("argument-control", "factoid", "What does the {parameter} argument of {entry} control?"),
        ("what-pass", "factoid", "What can I pass as {parameter} to {entry}?"),
        ("keyword-parameter", "keyword", "{entry} {parameter} argument"),
    ),
    "comparison": _frames(
        ("difference", "comparison", "What is the difference between {a} and {b}?"),
        ("differ", "comparison", "How does {a} differ from {b}?"),
        ("compare", "comparison", "How do {a} and {b} compare?"),
    ),
    "capability": _frames(
        ("can-i", "yes/no", "Can I {vp}?"),
        ("possible", "yes/no", "Is it possible to {vp}?"),
        # "Can I X?" has no word of its own: under the overlap bound a capability had one frame, and a benchmark of
        # 8 questions asked two in it with no other wording to spread them to (graphs/synthesis/frames.py)
        ("is-there-a-way", "yes/no", "Is there a way to {vp}?"),
    ),
    "capability-owner": _frames(
        ("can-x", "yes/no", "Can {owner} {vp}?"), ("able", "yes/no", "{Is} {owner} able to {vp}?")
    ),
    "absence": _frames(
        ("without", "explanation", "What happens without {thing}?"),
        ("without-what-goes-wrong", "explanation", "What goes wrong if I don't have {thing}?"),
    ),
    "behaviour": _frames(
        ("what-does-verb", "factoid", "What {does} {owner} {verb}{aim}?"),
        ("does-it", "yes/no", "{Does} {owner} {verb} {rest}?"),
    ),
    "agent": _frames(
        ("what-verbs", "factoid", "What {verbs} {thing}?"),
        ("how-is-verbed", "explanation", "How {is} {thing} {verbed}?"),
    ),
    "occasion": _frames(
        ("when-is-verbed", "factoid", "When {is} {thing} {verbed}?"),
        ("at-what-point", "explanation", "At what point {is} {thing} {verbed}?"),
    ),
    "advice": _frames(
        ("how-should-i", "how-to", "How should I {vp}?"),
        ("recommended-way", "how-to", "What is the recommended way to {vp}?"),
    ),
    "default": _frames(
        ("default-to", "factoid", "What does {owner} default to?"),
        ("default-value", "factoid", "What is the default value of {owner}?"),
    ),
}
ENTRY_FRAMES = {
    "option": "purpose-option",
    "class": "purpose-class",
    "exception": "purpose-exception",
    "property": "purpose-value",
    "attribute": "purpose-value",
    "data": "purpose-value",
    "setting": "purpose-setting",
    "command": "purpose-command",
    "subcommand": "purpose-command",
}
# Only what runs is called ("Why would I call ...?"); a module, a constant or a config variable is not.
CALLABLE_KINDS = frozenset(
    {"function", "method", "classmethod", "staticmethod", "decorator", "coroutine", "async", "abstractmethod"}
)


@dataclass(frozen=True)
class Wording:
    question: str
    frame: str
    question_type: str
    spare: bool = False  # in a spare frame (see ``Frame``)


def frames_of(fact: Fact) -> tuple[Frame, ...]:
    """The frames a fact can be asked in."""
    if fact.kind == "error":
        return FRAMES["error" if fact.has("raiser") else "error-alone"]
    if fact.kind == "purpose":
        kind = fact.slot("entry_kind")
        if kind == "class" and fact.slot("entry").endswith(("Error", "Exception", "Warning")):
            kind = "exception"  # nobody "uses" PytestUnhandledThreadExceptionWarning (pytest, development round 11)
        if fact.has("why") and fact.slot("why"):
            return FRAMES["purpose-why"]
        if kind == "exception" and fact.has("when") and not fact.slot("when"):
            return FRAMES["purpose-exception-kind"]  # it says what the exception is, not when it is raised
        frames = FRAMES[ENTRY_FRAMES.get(kind, "purpose" if kind in CALLABLE_KINDS else "purpose-name")]
        if fact.has("when") and not fact.slot("when"):
            # "The etag parsed and unquoted" says what a value is, not when it is useful ("When is IfRange.etag
            # useful?": werkzeug, development round 12), nor why one passes it ("When should I use --identity with
            # git send-email?" → "A configuration identity.": git, round 12)
            return tuple(frame for frame in frames if frame.name not in OCCASION_FRAMES)
        return frames
    if fact.kind == "condition" and fact.has("affected"):
        return FRAMES["condition-affected"]
    if fact.kind == "remedy" and fact.has(OPTION_SLOT):
        return FRAMES["remedy-option"]
    if fact.kind == "capability":
        return FRAMES["capability-owner" if fact.has("owner") else "capability"]
    if fact.kind == "section" and fact.has("where") and fact.slot("where"):
        return FRAMES["section-where"]
    if fact.kind == "section" and len(fact.answer) < 2:
        # one sentence is no overview: "Can you give me an overview of object types?" → "Type 5 is reserved for
        # future expansion" (git, development round 13)
        return tuple(frame for frame in FRAMES["section"] if frame.question_type != "summary")
    if fact.kind == "behaviour" and not fact.has("rest"):
        return FRAMES["behaviour"][:1]
    return FRAMES[fact.kind]


# Frames that ask when or why to use an entry: a description without a verb or a circumstance answers none.
OCCASION_FRAMES = frozenset({"useful-when", "option-when", "option-why", "when-use", "why-call", "what-problem"})


def wordings(fact: Fact, *, spare: bool = False) -> list[Wording]:
    """The fact asked in each of its frames (and its ``spare`` ones: see ``Frame``)."""
    slots = dict(fact.slots)
    if "vp" in slots:
        slots["vp"] = users_verb(slots["vp"])
    if "error" in slots:
        slots["an_error"] = with_article(slots["error"])
    if "entry" in slots:
        slots["an_entry"] = with_article(slots["entry"])
        slots["problem"] = "warning" if slots["entry"].endswith("Warning") else "error"
        owner = slots.get("owner") or ""
        slots.update(
            of_owner=f" of {owner}" if owner else "",
            with_owner=f" with {owner}" if owner else "",
            in_owner=f" in {owner}" if owner else "",
            to_owner=f" to {owner}" if owner else "",
            owner_space=f"{owner} " if owner else "",
        )
    if "thing" in slots:
        slots["is"] = "are" if slots.get("plural") else "is"
    if "is" in slots and fact.kind == "capability":
        slots["Is"] = slots["is"].capitalize()
    if "aim" in slots:
        slots["aim"] = f" {slots['aim']}" if slots["aim"] else ""
    if "does" in slots:
        slots["Does"] = slots["does"].capitalize()
    if "mark" in slots:
        slots["Mark"] = slots["mark"].capitalize()
    light = slots.get("vp", "").split(" ", 1)[0] in LIGHT_VERBS
    return [
        Wording(
            frame.template.format(**slots)
            if frame.question_type == "keyword"
            else _sentence_case(frame.template.format(**slots)),
            frame.name,
            frame.question_type,
            frame.spare,
        )
        for frame in frames_of(fact)
        if (spare or not frame.spare)
        and not (light and frame.name == "keyword-task")  # "give explicit styling" is no query anyone types
    ]


def users_verb(vp: str) -> str:
    """The phrase with its first word in a user's words, when the lexicon has it."""
    first, _, rest = vp.partition(" ")
    user = USER_VERBS.get(first.lower())
    return f"{user} {rest}".strip() if user else vp


def with_article(name: str) -> str:
    """ "a ValueError", "an HTTPError"."""
    return f"{'an' if name[:1].lower() in 'aeiou' or name[:2] in ('HT', 'SM', 'FT') else 'a'} {name}"


def _sentence_case(question: str) -> str:
    return question[:1].upper() + question[1:]
