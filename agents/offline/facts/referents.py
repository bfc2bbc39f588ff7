"""Does a statement lean on what the passage shows around it, so that it answers nothing on its own?

:func:`benchsmith.language.points_outside` finds the connectives and pointing words every layer reads
(the quality gate too). The offline agents read a statement as the whole reply to a question, so they
also refuse what documentation says about a step or an example the reply leaves out:

* a pronoun that stands for what came before: "After that you can render templates", "Even with
  that limitation, it is an excellent choice", "The rest will be verified by GitHub Actions";
* a plural demonstrative with the entry's own kind of noun ("Both of these methods are passed a
  Bucket"): an entry is one thing, "these methods" are others;
* the state after an example it does not show: "The contents of the folder ./shared will now be
  available on ...";
* outside an entry, a subject pronoun with nothing before it to stand for: "If it does not match
  anything, it will raise a NotFound exception" (it: the URL adapter, named sentences before);
* "earlier": "As I mentioned earlier, any arguments you add to a signature ...", and a neighbouring part
  of the manual: "the style of cooperation suggested in the previous section" (git, round 13);
* the author speaking in the first person ("I simply can't thank them enough"), of the authors' own
  thing as the subject ("Our gold sponsors include ...", a tutorial's "Our view now ..."), or narrating the
  tutorial's steps with "we" ("Since we're using viewsets and routers, we can simply use ...");
* "accordingly", "likewise", "similarly": "Displays the Next and Previous buttons accordingly"; "instead"
  without what it replaces: "Use the pytest_warning_recorded hook instead" (pytest, round 14);
* "then" with no condition before it: "A string then means it's a queue name in task_queues";
* a condition whose subject is left out: "If False, read() will raise OSError" (what is false?);
  a parameter's description may say it ("If False, ...": the parameter), nothing else may.

(werkzeug, jinja2, celery, mkdocs, development round 12)
"""

from __future__ import annotations

from benchsmith.language import Sentence, is_expletive, points_outside

PERSONAL_PRONOUNS = frozenset({"it", "they"})
OBJECT_PRONOUNS = frozenset({"it", "them"})
# What a manual does with a topic in another place: "as explained later", "described later".
TELLING_VERBS = frozenset("explain describe show discuss cover see mention detail introduce".split())
# adverbs that say "as what came before said" (mkdocs, development round 13)
BACK_ADVERBS = frozenset({"accordingly", "likewise", "similarly"})
REMAINDER_NOUNS = frozenset({"rest", "remainder"})
CONDITION_MARKS = frozenset({"if", "when", "unless", "once"})
# "the previous section", "the next chapter": a part of the manual the reply does not show (git, round 13)
NEIGHBOUR_WORDS = frozenset({"previous", "next", "following", "preceding", "above", "below", "last"})
PART_NOUNS = frozenset({"section", "chapter", "example", "step", "paragraph", "page", "part", "tutorial", "snippet"})


# Words of a clause that grants what someone said before: "You may be right", "That may be true".
GRANTING_WORDS = frozenset({"right", "true", "correct", "fair"})


def _concedes(sentence: Sentence) -> bool:
    """A sentence opening with a clause that grants a point, then "but": "You may be right, but remove() will raise
    a ValueError if py isn't in the list" answers someone the reply does not quote (cmd2, development readings
    rounds 16-17: read broken five times)."""
    words = [token for token in sentence.tokens if token.pos != "SPACE"]
    turn = next((i for i, token in enumerate(words) if token.text.lower() == "but" and token.dep == "cc"), None)
    if turn is None or turn > 6:
        return False
    granted = words[:turn]
    return any(token.lemma in GRANTING_WORDS and token.dep == "acomp" for token in granted) and any(
        token.lemma in ("may", "might", "could") for token in granted
    )  # "The value is correct but may be slow" grants nothing


def leans_on_context(
    sentence: Sentence, named: frozenset[str] = frozenset(), *, in_entry: bool = False, parameter: bool = False
) -> str | None:
    """Why the statement needs text the reply leaves out, or None when it stands alone. ``named`` as for
    :func:`points_outside`; ``in_entry``: the statement documents an entry (its "it" is the entry);
    ``parameter``: it describes a parameter (its left-out subject is the parameter)."""
    if reason := _plural_demonstrative(sentence, named):
        return reason
    if reason := points_outside(sentence, named):
        return reason
    tokens = sentence.tokens
    root = sentence.root
    opening = [token.text.lower() for token in tokens if token.pos != "SPACE"][:3]
    if opening[:1] == ["for"] and opening[1:2] in (["example"], ["instance"]):
        # "For example, the Heroku platform API exposes a schema ...": an illustration of the sentence before,
        # which the reply leaves out (a reply opening "For example" exemplifies nothing: drf, development round 15);
        # with or without its comma ("For example show_default=True is a keyword argument")
        return "illustrates what came before with 'for example'"
    if _concedes(sentence):
        return "concedes a point made before it ('You may be right, but ...')"
    if opening[:2] == ["by", "doing"] and opening[2:3] in (["it"], ["this"], ["that"], ["so"]):
        # "By doing it, you will receive notifications ...": the means is the step before ("How do I get
        # notifications?" was read broken: FastAPI's sources, development rounds 21 and 22)
        return f"points back with 'by doing {opening[2]}'"
    for token in tokens:
        lower = token.text.lower()
        if token.code:
            continue
        if lower == "that" and token.tag == "DT" and token.dep in ("pobj", "nsubj", "nsubjpass", "dobj"):
            return "points back with 'that'"  # "After that", "that is why"
        if (
            lower == "that"
            and token.dep == "det"
            and tokens[token.head].dep == "pobj"
            and tokens[token.head].index < root.index
        ):
            return "points back with a fronted 'that'"  # "Even with that limitation, ..."
        if (
            not in_entry
            and lower == "that"
            and token.dep == "det"
            and tokens[token.head].pos == "NOUN"
            and not tokens[token.head].code
            and any(other.text.lower() == "you" for other in tokens)
            and all(earlier.lemma != tokens[token.head].lemma for earlier in tokens[: token.index])
        ):
            # A tutorial tells its reader "You could reduce duplication in that code by ...": the code on the page,
            # which the reply does not show (FastAPI's sources, development round 21: "Is there a way to reduce
            # duplication test_sql_app.py?"). A docstring's "executed within that namespace" is its argument's.
            return f"points back with 'that {tokens[token.head].text}'"
        if (
            token.lemma in REMAINDER_NOUNS
            and token.pos == "NOUN"
            and any(child.text.lower() == "the" for child in sentence.children(token.index))
            and not any(child.dep == "prep" and child.text.lower() == "of" for child in sentence.children(token.index))
        ):
            return f"points back with 'the {token.text}'"
        if (
            token.lemma in NEIGHBOUR_WORDS
            and token.dep == "amod"
            and tokens[token.head].lemma in PART_NOUNS
            and any(child.lemma == "the" for child in sentence.children(token.head))
        ):
            return f"points at the {token.text} {tokens[token.head].text}"  # "suggested in the previous section"
        if (
            lower == "our"
            and token.dep == "poss"
            and tokens[token.head].dep in ("nsubj", "nsubjpass")
            and tokens[token.head].head == root.index
        ):
            # the authors' own thing as the subject: "Our gold sponsors include ...", a tutorial's "Our view now
            # ..." (the example built on earlier pages): nothing a user has (drf, development round 13)
            return "speaks of the authors' own with 'our'"
        if not in_entry and lower == "we" and token.dep in ("nsubj", "nsubjpass"):
            # a tutorial narrating its own steps: "Since we're using viewsets and routers, we can simply use the
            # automatic schema generation", "When we interact with the API through the web browser, we can login":
            # what "we" did is the example's, which the reply does not show. On the development readings, facts
            # answered by a sentence with "we" were broken 15 times of 31 against 377 of 2,004 (12 of 25 against 193
            # of 1,460 since round 12). An entry's description ("determines if we should strip") speaks of the code.
            return "narrates the tutorial's own steps with 'we'"
        if token.text in ("I", "me") and token.tag == "PRP":
            # the author speaking ("I simply can't thank them enough"): a page of thanks or a story, no fact of the
            # software (drf's sponsors: development round 13)
            return "the author speaks in the first person"
        if (
            lower == "instead"
            and token.dep == "advmod"
            and not any(child.lemma == "of" for child in sentence.children(token.index))
            # (under a condition it replaces what the condition rules out: "If X is not set, Y is used instead")
            and not any(other.text.lower() in CONDITION_MARKS for other in tokens[: token.index])
        ):
            return "replaces what came before with 'instead'"  # "Use the pytest_warning_recorded hook instead"
        if lower in BACK_ADVERBS and token.dep == "advmod":
            return f"points back with {token.text!r}"  # "Displays the buttons accordingly": according to what?
        if lower == "earlier" and token.dep == "advmod":
            return "points back with 'earlier'"  # "As I mentioned earlier, ..."
        if (
            lower == "later"
            and token.dep == "advmod"
            and tokens[token.head].lemma in TELLING_VERBS
            # "a parameter that we'll see later" names it here; "as explained later" sends the reader on
            and tokens[token.head].dep != "relcl"
        ):
            return "points ahead with 'later'"  # "as explained later in the advanced docs" (FastAPI, round 22)
        if lower == "now" and token.dep == "advmod" and sentence.child(token.head, "aux") is not None:
            return "follows a step it does not show with 'now'"  # "will now be available"
        if (
            lower == "then"
            and token.dep == "advmod"
            and not any(other.text.lower() in CONDITION_MARKS for other in tokens[: token.index])
        ):
            return "follows what came before with 'then'"  # "A string then means it's a queue name"
    if not in_entry and (reason := _unresolved_pronoun(sentence)):
        return reason
    if not parameter and _elliptical_condition(sentence):
        return "a condition without its subject"
    return None


def example_pointer(sentence: Sentence) -> str | None:
    """A tutorial's sentence that opens on its running example: "Here we are including it in the message",
    "In the code, a Bucket represents ...", "That way, ...". Left out
    of a reply assembled from a section's sentences (FastAPI's sources, development round 21: replies
    opening so answered nothing on their own). A fact's own statement may still open so: read with its
    question, "Here for backwards compatibility." says what TaskType is for (the same round's reading of
    the facts a first version removed: 6 of 10 ok)."""
    opening = [token.text.lower() for token in sentence.tokens if token.pos != "SPACE"][:3]
    first, second, third = [*opening, "", "", ""][:3]
    if first == "here" and second not in ("is", "are"):
        return "here"  # "Here is a list of ..." introduces what follows in the same sentence
    if first == "in" and second in ("the", "this", "that") and third == "code":
        return f"in {second} code"
    if first in ("that", "this") and second == "way" and third == ",":
        return f"{first} way"
    return None


def _plural_demonstrative(sentence: Sentence, named: frozenset[str]) -> str | None:
    for token in sentence.tokens:
        if token.text.lower() in ("these", "those") and token.dep == "det":
            head = sentence.tokens[token.head]
            if head.lemma in named and head.text.lower() not in named:
                return f"points back with {token.text!r} {head.text!r}"
    return None


def _unresolved_pronoun(sentence: Sentence) -> str | None:
    """A subject "it" or "they" before any noun it could stand for, and not an expletive ("it is
    possible to ..."); an object "it" or "them" so ("If you are just starting, you can skip it": the
    page's section, FastAPI's sources, development round 22)."""
    for token in sentence.tokens:
        if token.pos in ("NOUN", "PROPN") or token.code:
            return None  # a thing named first: the pronoun may stand for it
        lower = token.text.lower()
        if (
            lower in PERSONAL_PRONOUNS and token.dep in ("nsubj", "nsubjpass") and not is_expletive(sentence, token)
        ) or (lower in OBJECT_PRONOUNS and token.dep in ("dobj", "pobj")):
            return f"stands for something before it with {token.text!r}"
    return None


def _elliptical_condition(sentence: Sentence) -> bool:
    """ "If False, ...", "If not given, ...", "When set, ...": a condition clause with no subject."""
    words = [token for token in sentence.tokens if token.pos != "SPACE"]
    if len(words) < 3 or words[0].text.lower() not in CONDITION_MARKS:
        return False
    comma = next((token.index for token in words if token.text == ","), None)
    if comma is None or comma > 4:
        return False
    clause = sentence.tokens[1:comma]
    return bool(clause) and not any(
        token.dep in ("nsubj", "nsubjpass", "expl") or token.pos in ("NOUN", "PRON") for token in clause
    )
