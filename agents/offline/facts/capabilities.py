"""Readers of what a user or a named thing can do: a capability (can I VP, does X support Y), asked only when
the statement's words say it whole (no idiom, list, purpose or case left out of it)."""

from __future__ import annotations

from benchsmith.agents.offline.facts.actions import QUANTIFIERS, TIME_MARKS
from benchsmith.agents.offline.facts.clauses import (
    META_VERBS,
    WANTING_VERBS,
    entry_name,
    names_something,
    refers_to_entry,
    subject_of,
)
from benchsmith.agents.offline.facts.phrases import (
    bare,
    contiguous,
    fits,
    noun_phrase,
    object_topic,
    phrases_after,
    render,
    verb_phrase,
)
from benchsmith.agents.offline.facts.record import Found
from benchsmith.entries import Statement
from benchsmith.language import Sentence, Token
from benchsmith.passages import URL_ONLY

# Nouns of the manual itself: "You can consult the funcarg comparison section in the docs" reads the manual.
MANUAL_NOUNS = frozenset("section docs documentation chapter page guide tutorial manual reference".split())
# "You can then call ...", "You can now edit ...": a step after one the sentence does not name. "You can just create
# typer.Typer() apps", "you can simply catch the post_save signal": how easy a step is, once the reader is where the
# page has brought them; asked as "Is it possible to ...?" it doubts what no user doubts (development readings: the
# four capability turns read from "can simply", three sentences of drf and MkDocs, all broken).
STEP_ADVERBS = frozenset({"then", "now", "just", "simply"})


def capabilities(statement: Statement, sentence: Sentence) -> Found:
    root = sentence.root
    if root.pos != "VERB" or root.tag != "VB":
        return []
    modal = sentence.child(root.index, "aux")
    if modal is None or modal.lemma not in ("can", "could"):
        return []
    subject = subject_of(sentence, root)
    if subject is None or root.lemma in WANTING_VERBS:
        return []  # "You could want a process manager": "Is it possible to want X?" (FastAPI, development round 22)
    if _framed_by_a_case(sentence):
        return []
    if root.lemma in META_VERBS and any(token.lemma in MANUAL_NOUNS for token in sentence.tokens):
        return []  # "You can consult funcarg comparison section in the docs": reading the manual (pytest, round 14)
    if any(child.dep == "advmod" and child.lemma in STEP_ADVERBS for child in sentence.children(root.index)):
        return []  # a step after one the sentence does not name, or how easy it is (STEP_ADVERBS)
    indices = verb_phrase(sentence, root, complement=True)
    obj = sentence.child(root.index, "dobj")
    if obj is not None and any(
        child.dep in ("relcl", "acl") and child.index not in indices for child in sentence.children(obj.index)
    ):
        return []  # "implement a hook [that defines markers]": the clause left out says which one
    # the object's own phrase stays with it; after "also" the verb's is what is new too ("You can also include your
    # Markdown files in nested directories")
    also = any(
        child.dep == "advmod" and child.lemma in ("also", "even", "too") for child in sentence.children(root.index)
    )
    heads = [*([root.index] if also else []), *([obj.index] if obj is not None else [])]
    indices = sorted({*indices, *phrases_after(sentence, heads)})
    if any(URL_ONLY.match(sentence.tokens[i].text) for i in indices):
        return []  # "star Typer in GitHub (...): https://github.com/tiangolo/typer": a link parsed as a second object
    if not fits(indices) or not contiguous(sentence, indices) or not (vp := render(sentence, indices)):
        return []
    if _left_out_manner(sentence, root, indices):
        return []
    if obj is not None and _idiom_cut(sentence, obj, indices):
        return []  # "take advantage [of piecing together workflows]": "Is a scripter able to take advantage?"
    if obj is not None and any(
        child.dep == "advcl"
        and child.index > obj.index
        and child.index not in indices
        and sentence.child(child.index, "aux")
        for child in sentence.children(root.index)
    ):
        # "set the max number of times [to ask with the set_max_attempts() method]": the infinitive after the object
        # finishes it ("Is it possible to set the max number of times?": cleo, development round 18)
        return []
    if obj is not None and any(
        child.dep == "conj" and child.index not in indices for child in sentence.children(obj.index)
    ):
        return []  # "specify min[, max or both]": one item of the list the sentence gives, lifted out of it
    if obj is not None and _named_earlier_in_sentence(sentence, obj, root):
        return []  # "If you have registered it with the codecs module, you can use the codec name": which codec?
    if subject.text.lower() in ("you", "users", "one", "we"):
        return (
            [("capability", object_topic(sentence, root) or vp, (("vp", vp),))]
            if names_something(sentence, root)
            else []
        )
    if not names_something(sentence, root) or any(
        child.dep in ("det", "amod") and child.lemma in QUANTIFIERS for child in sentence.children(subject.index)
    ):
        return []  # "Many commands can output pathnames": no thing a user names (git, development round 5)
    if any(
        child.dep in ("prep", "acl", "relcl", "advmod") and child.index > subject.index
        for child in sentence.children(subject.index)
    ):
        return []  # "A topic [already in next] can get fixes": the owner without what narrows it (git, round 13)
    owner = (
        entry_name(statement)
        if refers_to_entry(subject) and statement.entry
        else noun_phrase(sentence, subject, article=True)
    )
    if owner and subject.index == 0 and subject.tag in ("NNS", "NNPS") and owner.istitle() and not subject.code:
        owner = owner.lower()  # "Plugins can provide ...": capitalized as the sentence's first word, no name
    plural = subject.tag in ("NNS", "NNPS") and not subject.code
    return (
        [("capability", bare(owner), (("vp", vp), ("owner", owner), ("is", "are" if plural else "is")))]
        if owner
        else []
    )


def _left_out_manner(sentence: Sentence, verb: Token, indices: list[int]) -> bool:
    """A capability whose statement says as what or when it holds, beyond the question's verb phrase: "You can
    include expiry_date as a field option on a ModelSerializer class", "You can include the authentication scheme
    when instantiating a new client". "Is it possible to include expiry_date?" lifts a clause and asks what no user
    doubts: the role or the moment is the whole point (drf, development round 13). A means ("with the stream
    argument", "by viewing the original") is what a yes answers with, and stays."""
    kept = set(indices)
    obj = sentence.child(verb.index, "dobj")
    attached = [*sentence.children(obj.index)] if obj is not None else []  # "expiry_date [as a field option]"
    for child in [*sentence.children(verb.index), *attached]:
        if child.index in kept:
            continue
        if child.dep == "prep" and child.lemma == "as":
            return True
        if child.dep == "advcl" and any(
            mark.dep in ("mark", "advmod") and mark.lemma in TIME_MARKS for mark in sentence.children(child.index)
        ):
            return True
    return False


ADDITION_OPENINGS = ("As well as ", "Besides ", "In addition to ", "Apart from ", "Along with ")
CASE_NOUNS = frozenset("case cases example examples situation situations scenario scenarios instance".split())


def _framed_by_a_case(sentence: Sentence) -> bool:
    """A statement opened by the case it holds in ("For a more complex example you can provide a hint", "In the
    rare case that you'd like the raw socket response, you can access r.raw"): "can I provide a hint?" drops
    the case that makes it true (jinja2 and requests, development round 12)."""
    if sentence.text.startswith(ADDITION_OPENINGS):
        return True  # "As well as the command line client, developers can also ...": news only beside what came before
    opening = sentence.tokens[0] if sentence.tokens else None
    if opening is None or opening.pos != "ADP":
        return False
    case = sentence.child(opening.index, "pobj")
    return case is not None and case.lemma in CASE_NOUNS


def _idiom_cut(sentence: Sentence, obj: Token, indices: list[int]) -> bool:
    """A bare singular object whose phrase the question leaves out: "take advantage [of X]", "keep track [of X]",
    "make use [of X]". The noun alone is half an idiom; what it is of is the task (cmd2, development round 17)."""
    if (
        obj.tag != "NN"
        or obj.code
        or any(child.dep in ("det", "poss", "compound", "amod") for child in sentence.children(obj.index))
    ):
        return False
    # the parser hangs the phrase on the noun or on the verb ("take advantage | of ...")
    following = [*sentence.children(obj.index), *sentence.children(obj.head)]
    return any(
        child.dep == "prep" and child.index == obj.index + 1 and child.index not in indices for child in following
    )


def _named_earlier_in_sentence(sentence: Sentence, obj: Token, verb: Token) -> bool:
    """A definite object with no name in it whose noun the sentence used before its verb: "the codec name"
    after "registered it with the codecs module" is the reader's own codec, which the question leaves
    out (requests, development round 11)."""
    low, high = sentence.subtree(obj.index)
    if any(t.code or t.pos == "PROPN" for t in sentence.tokens[low:high]):
        return False
    if not any(child.dep == "det" and child.lemma == "the" for child in sentence.children(obj.index)):
        return False
    nouns = {obj.lemma} | {c.lemma for c in sentence.children(obj.index) if c.dep == "compound"}
    return any(t.lemma in nouns for t in sentence.tokens[: min(verb.index, low)])
