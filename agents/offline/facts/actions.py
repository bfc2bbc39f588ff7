"""Readers of what a user does: a procedure (how do I VP) and advice (how should I VP); what a user can do
is read in capabilities.py."""

from __future__ import annotations

from benchsmith.agents.offline.facts.clauses import (
    ENABLING_VERBS,
    META_VERBS,
    is_imperative,
    light_on_judgement,
    names_something,
    said_to_you,
    subject_of,
)
from benchsmith.agents.offline.facts.phrases import (
    CONTROL_VERBS,
    MEANS_PREPOSITIONS,
    base_form,
    clause_span,
    contiguous,
    fits,
    noun_phrase,
    object_span,
    object_topic,
    phrases_after,
    render,
    sentence_inner,
    span,
    specific_noun,
    verb_phrase,
)
from benchsmith.agents.offline.facts.record import Found
from benchsmith.entries import Statement
from benchsmith.language import Sentence, Token
from benchsmith.words import LIGHT_VERBS

ADVICE_WORDS = frozenset(
    {
        "practice",
        "idea",
        "recommended",
        "advisable",
        "wise",
        "best",
        "important",
        "necessary",
        "essential",
        "preferable",
        "better",
    }
)

# Determiners that quantify a subject ("many commands") rather than name it.
QUANTIFIERS = frozenset("many some most all several few various any each every".split())


QUOTE_MARKS = frozenset({'"', "\u201c", "\u201d", "'", "\u2018", "\u2019"})


def _light_on_any(sentence: Sentence, verb: Token) -> bool:
    """A light verb on any one of a kind ("use an expression": in what?) or on a phrase in quotes, which the
    question drops with its head ("use \u201cnew style\u201d gettext calls" asked as "use new style"; jinja2,
    development round 12): no task a user names."""
    if verb.lemma not in LIGHT_VERBS:
        return False
    obj = sentence.child(verb.index, "dobj")
    if obj is None:
        return False
    low, high = sentence.subtree(obj.index)
    if any(token.text in QUOTE_MARKS for token in sentence.tokens[low:high]):
        return True
    article = sentence.child(obj.index, "det")
    return (
        article is not None
        and article.lemma in ("a", "an")
        and all(child.dep in ("det", "punct") for child in sentence.children(obj.index))
    )


# What the user must have, no step to take: "you need Administrator rights", "you need to have X in place".
NEEDING_VERBS = frozenset({"need", "require"})


def _prerequisite(sentence: Sentence, main: Token) -> bool:
    """The main clause says what the task needs, not how to do it: "To change System variables, you need
    non-restricted access to your machine" (python-docs, development, thirty-first session: read broken twice), "To
    convert recorded submodule pointers, you need to have the converted submodule repository in place" (git,
    development: read broken). "You need to subclass the ParamType class" is a step (click, read ok)."""
    if main.lemma not in NEEDING_VERBS:
        return False
    step = sentence.child(main.index, "xcomp")
    if step is None:
        return sentence.child(main.index, "dobj") is not None
    return step.lemma == "have"


def procedures(statement: Statement, sentence: Sentence) -> Found:
    found: Found = []
    for token in sentence.tokens:
        if token.pos != "VERB" or token.tag != "VB":
            continue
        marker = sentence.child(token.index, "aux")
        purpose = (
            marker is not None
            and marker.lemma == "to"
            and token.dep in ("advcl", "xcomp", "npadvmod", "ROOT")
            and (marker.index == 0 or sentence.tokens[marker.index - 1].lemma == "order")
        )
        head = sentence.tokens[token.head]
        enabled = (
            token.dep in ("xcomp", "ccomp")
            and head.lemma in ENABLING_VERBS
            and any(
                child.text.lower() in ("you", "users", "one")
                for child in [*sentence.children(head.index), *sentence.children(token.index)]
            )
            and _names_tool(sentence, subject_of(sentence, head))
        ) or (token.dep in ("xcomp", "ccomp", "advcl") and head.lemma == "possible" and marker is not None)
        if not (purpose or enabled):
            continue  # "Git can help you perform a merge" and "MkDocs lets you X" say that, not how
        main = sentence.tokens[token.head] if token.dep == "advcl" else sentence.root
        unmarked = _main_clause_without_comma(sentence, token) if purpose and token.dep == "ROOT" else None
        if unmarked is not None:
            main = sentence.tokens[unmarked.head]
        elif token.dep == "ROOT":  # "To X, do Y" read with X as the root: the instruction is what follows
            main = next((t for t in sentence.tokens if t.index > token.index and t.pos == "VERB"), token)
        if main.lemma in META_VERBS and subject_of(sentence, main) is None:
            continue  # "To enable a translation, see the theme's documentation": a pointer, no answer
        if purpose and _does_so(sentence, main):
            # "To support multiple updates you'll need to do so explicitly": "do so" is the task again, no way to do
            # it (drf, development round 25)
            continue
        if purpose and main.tag == "VBZ" and subject_of(sentence, main) is None:
            # "To deploy an application means to perform the necessary steps ...": the infinitive is the subject of
            # "means" (the tagger reads a purpose clause), so the sentence defines the task and tells no way to do it
            # (FastAPI's sources, development round 25: "What's the best way to deploy an application?")
            continue
        if purpose and not _users_move(sentence, main):
            continue  # "To conserve space, names are pooled": why the tool works so, no task of the user's
        if purpose and _prerequisite(sentence, main):
            continue
        # the purpose is the user's task as a whole ("test a theme with translations"); a clause after
        # it is not part of it
        indices = (
            [
                i
                for i in clause_span(sentence, token)
                if i != (marker.index if marker else -1) and (unmarked is None or i < unmarked.index)
            ]
            if purpose
            else verb_phrase(sentence, token, complement=True)
        )
        if light_on_judgement(sentence, token) or _light_on_any(sentence, token):
            continue
        if fits(indices) and names_something(sentence, token) and (vp := render(sentence, indices)):
            found.append(("procedure", object_topic(sentence, token) or vp, (("vp", vp),)))
    root = sentence.root
    means = [
        child
        for child in sentence.children(root.index)
        if (
            child.dep == "prep"
            and child.lemma in MEANS_PREPOSITIONS
            and (child.lemma != "with" or names_code(sentence, sentence.child(child.index, "pobj"), products=True))
        )
        or (child.dep == "advcl" and any(grand.lemma == "by" for grand in sentence.children(child.index)))
        # "Get some data from the user using a TextBox" (guizero, development round 18)
        or (
            child.dep == "advcl"
            and child.lemma == "use"
            and child.tag == "VBG"
            and child.index > root.index
            # "Fix a bug when using SharedDataMiddleware", "even if you are using a subclass": a case, not a means
            and not any(grand.dep in ("mark", "advmod", "aux") for grand in sentence.children(child.index))
            # "You can also set the authentication scheme on a per-view basis, using ...": what is new is where
            and not any(also.dep == "advmod" and also.lemma == "also" for also in sentence.children(root.index))
        )
    ]
    # "with" is a means when it names a tool ("with the --force option"), not "replace X with a new one"
    obj = sentence.child(root.index, "dobj")
    if (
        root.pos == "VERB"
        and means
        and (
            is_imperative(sentence, root)
            # "you can X by Y"; not "By returning X, you are already returning a Response": what the user does
            # already, no step (FastAPI, development round 22)
            or (said_to_you(sentence, root) and _modal(sentence, root))
        )
        and obj is not None
        and not _light_on_any(sentence, root)
    ):  # "start by reading X" names no task
        # with where it applies: "skip tests on a missing import" is not how to skip tests (pytest, rounds 8 and 11),
        # and the object's own phrase: "run a script on initialization" (cmd2, round 28)
        indices = sorted({*verb_phrase(sentence, root, complement=True), *phrases_after(sentence, [obj.index])})
        if (
            fits(indices)
            and contiguous(sentence, indices)
            and names_something(sentence, root)
            and (vp := render(sentence, indices))
            and not found
        ):
            found.append(("procedure", object_topic(sentence, root) or vp, (("vp", vp),)))
    return found or _trailing_purpose(sentence) or _passive_means(sentence)


def _modal(sentence: Sentence, verb: Token) -> bool:
    return any(child.dep == "aux" and child.tag == "MD" for child in sentence.children(verb.index))


def _main_clause_without_comma(sentence: Sentence, purpose: Token) -> Token | None:
    """The subject "you" of the instruction after a purpose written without its comma: "To restart the worker
    you should send the TERM signal" is parsed with "you should send ..." as a relative clause inside the
    purpose, so the purpose ends where "you" begins and the instruction is its verb (fastapi-src, celery,
    werkzeug, cmd2: 7 of 26 such sentences of the development half no reader read gain a procedure; round 22)."""
    _, high = sentence.subtree(purpose.index)
    subjects = []
    for token in sentence.tokens[purpose.index + 1 : high]:
        if token.text in (",", ";", ":"):
            return None  # the purpose has its comma: parsed as written
        verb = sentence.tokens[token.head]
        if (
            token.text.lower() == "you"
            and token.dep == "nsubj"
            and verb.dep in ("relcl", "ccomp")
            and verb.index > token.index
            # an instruction has its own object; "To fix a typo you found on the documentation" is a relative
            # clause about the typo, which is its object (a list item of FastAPI's, development round 22)
            and any(child.dep in ("dobj", "xcomp", "ccomp", "dative") for child in sentence.children(verb.index))
        ):
            subjects.append(token)
    # the last: "To check the code for the language you want to translate you can use the table" (the first "you"
    # is the language's relative clause)
    return subjects[-1] if subjects else None


def _trailing_purpose(sentence: Sentence) -> Found:
    """An instruction with its purpose after it: "Set allow_style to Never to strip all ANSI escape sequences",
    "You can press Control-p to move to the previous command" → how do I strip all ANSI escape sequences. The
    purpose is the user's task, the instruction before it the reply (cmd2, development round 17). "Use X to Y" of a
    code name is what X is for (``named_uses``), of a thing in words a task ("Use a Picture object to display an
    image": guizero, development round 18); "tell X to Y" is what X is told (``CONTROL_VERBS``)."""
    root = sentence.root
    modal = sentence.child(root.index, "aux")
    instruction = is_imperative(sentence, root) or (
        said_to_you(sentence, root) and modal is not None and modal.lemma in ("can", "should", "must")
    )
    obj = sentence.child(root.index, "dobj")
    if not instruction or obj is None or root.lemma in (*CONTROL_VERBS, *ENABLING_VERBS):
        return []
    if obj.pos == "PRON" or any(
        child.lemma in ("similar", "same", "other", "such") for child in sentence.children(obj.index)
    ):
        return []  # "You can use it to manage files", "use a similar mechanism to ...": the tool is named before
    if root.lemma == "use" and (obj.code or any(token.code for token in sentence.children(obj.index))):
        return []  # "Use json.loads to read a document": what the code name is for (named_uses)
    purpose = next(
        (
            child
            for child in sentence.children(root.index)
            if child.dep in ("advcl", "xcomp")
            and child.tag == "VB"
            and child.index > obj.index
            and (marker := sentence.child(child.index, "aux")) is not None
            and marker.lemma == "to"
        ),
        None,
    )
    if purpose is None or purpose.lemma in LIGHT_VERBS or purpose.lemma in ("be", "see", "work", "avoid"):
        return []  # "to be in line with ...", "to use when making the final request": no task named
    task = sentence.child(purpose.index, "dobj")
    if task is None or task.pos not in ("NOUN", "PROPN") or not specific_noun(sentence, task):
        return []  # the task is done on a thing the purpose names ("strip all ANSI escape sequences")
    marker = sentence.child(purpose.index, "aux")
    indices = [i for i in clause_span(sentence, purpose) if marker is None or i != marker.index]
    if not (
        fits(indices)
        and contiguous(sentence, indices)
        and names_something(sentence, purpose)
        and not light_on_judgement(sentence, purpose)
        and (vp := render(sentence, indices))
    ):
        return []
    return [("procedure", object_topic(sentence, purpose) or vp, (("vp", vp),))]


# Verbs whose "with" gives what they are made or called with, not a means: "cmd2.Cmd can be initialized with stdin
# and stdout" says what it takes, and "How do I set up cmd2.Cmd?" is no question it answers (cmd2, round 17).
ARGUMENT_TAKING_VERBS = frozenset("initialize instantiate create construct call invoke build".split())


def _passive_means(sentence: Sentence) -> Found:
    """What can be done and with which tool, said in the passive: "Output of any command can be displayed one
    page at a time using the ppaged() method" → how do I display output of any command one page at a time. A
    tutorial says most of its how in this voice; the means named is the reply's point (a code thing), the
    rest of the verb's phrase is the task (cmd2, development round 17)."""
    root = sentence.root
    modal = sentence.child(root.index, "aux")
    subject = sentence.child(root.index, "nsubjpass")
    if (
        root.tag != "VBN"
        or root.lemma in ARGUMENT_TAKING_VERBS
        or sentence.child(root.index, "auxpass") is None
        or modal is None
        or modal.lemma not in ("can", "may")
        or sentence.child(root.index, "neg") is not None
        or subject is None
        or subject.pos not in ("NOUN", "PROPN")
        or not specific_noun(sentence, subject)  # "The default can be changed using ...": which default?
        or any(child.dep == "det" and child.lemma in QUANTIFIERS for child in sentence.children(subject.index))
    ):
        return []
    # the means wherever the parser hung it ("changed at runtime | with the set command"); the words between the
    # verb and it say what is done, and where or when
    means = next(
        (
            token
            for token in sentence.tokens[root.index + 1 :]
            if (
                (
                    (token.dep == "prep" and token.lemma in MEANS_PREPOSITIONS and token.lemma != "by")
                    or (token.dep in ("advcl", "acl") and token.lemma == "use")
                )
                and names_code(sentence, sentence.child(token.index, "pobj", "dobj"))
            )
            or _by_doing(sentence, token)
        ),
        None,
    )
    if means is None:
        return []
    if means.lemma == "by" and _the_bare_kind(sentence, subject):
        # "The renderer behavior can be modified by setting ...": which renderer's, the question cannot say; a
        # means after "using" names the thing it is for (drf and flask readings, development round 19)
        return []
    if sentence.child(subject.index, "conj") is not None:
        return []  # "The registered prefix, viewset and basename tuples": the span of one of them is half the thing
    between = list(range(root.index + 1, means.index))
    # "Optionally fragments can be stripped ...": the adverb the parser hung on the subject is not the thing's
    subject_words = [
        index
        for index in object_span(sentence, subject)
        if not (sentence.tokens[index].tag.startswith("RB") and sentence.tokens[index].head == subject.index)
    ]
    thing = render(sentence, subject_words)
    rest = render(sentence, between) if between else ""
    if not thing or rest is None or not fits([root.index, *subject_words, *between]):
        return []
    vp = f"{base_form(root)} {sentence_inner(sentence, subject_words, thing)} {rest}".strip()
    return [("procedure", noun_phrase(sentence, subject) or thing, (("vp", vp),))]


def _the_bare_kind(sentence: Sentence, subject: Token) -> bool:
    """ "the group name", "The renderer behavior": a definite noun that no name and no phrase after it narrows."""
    low, high = sentence.subtree(subject.index)
    return (
        any(child.dep == "det" and child.lemma == "the" for child in sentence.children(subject.index))
        and not any(token.code or token.pos == "PROPN" for token in sentence.tokens[low:high])
        and sentence.child(subject.index, "prep") is None
    )


def _by_doing(sentence: Sentence, token: Token) -> bool:
    """A means said as what the user does, after "by" (a passive's agent otherwise): "by setting the
    trailing_slash argument to False", "by using the destroy method"; what is done names a code thing (drf,
    guizero, celery, development round 19)."""
    if token.dep != "prep" or token.lemma != "by":
        return False
    doing = sentence.child(token.index, "pcomp")
    return doing is not None and doing.tag == "VBG" and names_code(sentence, sentence.child(doing.index, "dobj"))


# Verbs of a main clause that hand the user a means ("To stream, Requests provides iter_content").
OFFERING_VERBS = frozenset("provide offer include support expose ship have come exist accept give".split())
USER_SUBJECTS = frozenset("you we i one users user".split())


PRO_FORMS = frozenset({"so", "it", "this", "that"})


def _does_so(sentence: Sentence, main: Token) -> bool:
    """The main clause's action is "do so" (or "do it"), itself or as the verb it needs ("need to do so"), with no
    means beside it ("you can do so by setting the flag" tells one)."""
    verbs = [main, *(child for child in sentence.children(main.index) if child.dep == "xcomp")]
    return any(
        verb.lemma == "do"
        and any(child.lemma in PRO_FORMS for child in sentence.children(verb.index))
        and not any(
            child.dep in ("prep", "advcl") and child.lemma in MEANS_PREPOSITIONS
            for child in sentence.children(verb.index)
        )
        for verb in verbs
    )


def _users_move(sentence: Sentence, main: Token) -> bool:
    """The main clause after "To X, ..." is what the user does or can use: an instruction ("set verify to
    False"), the user as subject ("you need ..."), a modal ("can be set", "must be given"), or a means
    offered ("Requests provides ...", "there is ..."). Otherwise it says why the tool works as it does ("To
    aid in debugging frontends fast-import ignores ...", "To conserve space, file names are pooled"), and
    "how do I aid in debugging frontends?" asks for a task the reply never performs (git, development
    round 12)."""
    subject = subject_of(sentence, main)
    auxiliaries = [child for child in sentence.children(main.index) if child.dep in ("aux", "auxpass")]
    if main.tag == "VBN" and any(child.dep == "aux" and child.lemma == "have" for child in auxiliaries):
        # the perfect tells what has (or might have) been done, no step to take: "To further complicate matters,
        # you might have included ANSI escape sequences" (cmd2, development round 17)
        return False
    if (subject is None and not auxiliaries) or main.lemma in OFFERING_VERBS:
        return True  # an instruction, whatever the tagger made of its verb ("set" read as VBN after "To X,")
    if subject is not None and (subject.text.lower() in USER_SUBJECTS or subject.dep == "expl"):
        return True
    # a modal of what the user can or must do ("can be set", "must be given"), not of what the tool may do ("To save
    # space, object blocks may be omitted": git, round 13)
    return any(
        child.dep == "aux" and child.lemma in ("can", "could", "should", "must", "need", "have")
        for child in sentence.children(main.index)
    )


def names_code(sentence: Sentence, token: Token | None, *, products: bool = False) -> bool:
    """A phrase that names a code thing ("the --force option", "json.dumps") or, with ``products``,
    a product ("with Gunicorn"). The project a page documents enables everything it documents:
    "MkDocs lets you X" names no how."""
    if token is None:
        return False
    low, high = sentence.subtree(token.index)
    return any(
        t.code or (t.text.startswith("-") and len(t.text) > 2) or (products and t.pos == "PROPN")
        for t in sentence.tokens[low:high]
    )


def _names_tool(sentence: Sentence, subject: Token | None) -> bool:
    """An enabler that says how: a code thing ("the --force option") or a named kind of object
    ("Session objects"); not the product itself ("Git can help you ...", "MkDocs lets you ...")."""
    if subject is None:
        return False
    return names_code(sentence, subject) or (
        subject.pos == "NOUN"
        and any(
            child.dep == "compound" and (child.pos == "PROPN" or child.text[:1].isupper())
            for child in sentence.children(subject.index)
        )
    )


# Marks of a clause that says when the action holds ("when instantiating a new client").
TIME_MARKS = frozenset({"when", "while", "once", "after", "before", "whenever"})


def advice(statement: Statement, sentence: Sentence) -> Found:
    """ "It's a good practice to set connect timeouts to ..." → how should I set connect timeouts."""
    root = sentence.root
    if root.lemma != "be" or not sentence.child(root.index, "expl", "nsubj"):
        return []
    if sentence.child(root.index, "neg") is not None:
        return []  # "It is not strictly necessary to package a theme": no recommended way (mkdocs, round 13)
    judged = sentence.child(root.index, "attr", "acomp", "dobj")
    if judged is None or (
        judged.lemma not in ADVICE_WORDS
        and not any(child.lemma in ADVICE_WORDS for child in sentence.children(judged.index))
    ):
        return []
    action = next(
        (
            token
            for token in sentence.tokens
            if token.dep in ("xcomp", "ccomp", "acl", "relcl")
            and token.tag == "VB"
            and token.pos == "VERB"
            # the advised action is an infinitive ("a good idea to run ..."), not the verb of a clause before it:
            # "If you're not sure exactly what behavior a class will generate, it is a good idea to run ..." asked
            # "How should I exactly what behavior generate?" (drf, development round 14)
            and any(child.dep == "aux" and child.lemma == "to" for child in sentence.children(token.index))
        ),
        None,
    )
    if action is None:
        return []
    obj = sentence.child(action.index, "dobj")
    indices = [action.index, *([i for i in span(sentence, obj.index)] if obj else [])]
    particle = sentence.child(action.index, "prt")
    indices = sorted({*indices, *([particle.index] if particle else [])})
    # a particle parted from its verb by a phrase is that phrase's: "design from the inside to out" asked "How
    # should I design out?" (cmd2, development round 17)
    vp = render(sentence, indices) if fits(indices) and contiguous(sentence, indices) else None
    return [("advice", object_topic(sentence, action) or vp, (("vp", vp),))] if vp else []
