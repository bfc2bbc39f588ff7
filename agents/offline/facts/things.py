"""Readers of what a named thing is or does: a definition (what is X), a comparison (what is the
difference between A and B), a behaviour (what does X do to Y) and a section whose heading names
a thing (how does X work)."""

from __future__ import annotations

import itertools
import re

from benchsmith.agents.offline.facts.clauses import (
    ENABLING_VERBS,
    EVALUATIVE,
    META_VERBS,
    entry_name,
    is_imperative,
    names_something,
    refers_to_entry,
    subject_of,
)
from benchsmith.agents.offline.facts.phrases import (
    GENERIC_NOUNS,
    QUALIFYING_WORDS,
    bare,
    fits,
    noun_phrase,
    render,
    span,
    verb_phrase,
)
from benchsmith.agents.offline.facts.record import Fact, Found
from benchsmith.agents.offline.facts.referents import example_pointer, leans_on_context
from benchsmith.entries import VERSION_NOTE, Statement, section_heading
from benchsmith.language import REQUIREMENT, Sentence, Token, is_noun_phrase, parse_all
from benchsmith.words import LIGHT_VERBS, content_words, stems

# Adjectives that place a thing among others rather than say what it is: "the only information that is
# supported" (git's protocol pages, development readings round 4).
RELATIVE = frozenset("only same other first second third last next previous former latter related similar".split())
QUOTES = frozenset({'"', "“", "”", "'", "‘", "’", "``", "''"})
QUANTIFIERS = frozenset("any all each every no some both either neither".split())
CONTRAST_PREPOSITIONS = frozenset({"unlike", "versus", "vs"})

# "A rather than B", "A instead of B" state a choice ("raises X rather than RuntimeError"), no comparison.
CONTRAST_PHRASES = (
    ("as", "opposed", "to"),
    ("compared", "to"),
    ("compared", "with"),
    ("in", "contrast", "to"),
    ("in", "contrast", "with"),
)

# Headings that name a part of the manual, not a thing a user works with.
MANUAL_WORDS = frozenset(
    "guide usage interface introduction overview tutorial api reference change changelog history "
    "faq question documentation content index keeper community support note example release "
    "contributor contributing install installation".split()
)
HEADING_PATH = re.compile(r"\s+(?:›|»|>)\s+")
# Verbs whose object is the one who then does what follows: "tell X to Y", "let X Y", "allow X to Y".
OBJECT_CONTROL_VERBS = frozenset("tell ask allow let make cause force instruct enable permit order get help".split())


def _of_a_bare_the(sentence: Sentence, attr: Token) -> bool:
    """What a thing is said to be of "the" plain noun the page is about: "Dj-rest-auth is a newer fork of the
    project" (which project? drf, development round 13). "a subclass of the Response class" or "part of the
    standard library" name it."""
    for child in sentence.children(attr.index):
        if child.dep != "prep" or child.lemma != "of":
            continue
        owner = sentence.child(child.index, "pobj")
        if (
            owner is not None
            and owner.pos == "NOUN"
            and not owner.code
            and [grand.lemma for grand in sentence.children(owner.index)] == ["the"]
        ):
            return True
    return False


def definitions(statement: Statement, sentence: Sentence) -> Found:
    """ "Blueprints are a way to organize views", "X refers to Y": a present-tense statement of what a
    named thing is. Not one that says how good it is ("a huge drain"), a value ("is None"), a
    subject narrowed by a clause ("Character sequences that match ... are"), or a past ("was new")."""
    root = sentence.root
    subject = subject_of(sentence, root)
    if subject is None or subject.dep != "nsubj" or sentence.child(root.index, "neg", "aux"):
        return []
    is_copula = root.lemma == "be" and root.tag in ("VBZ", "VBP") and sentence.child(root.index, "attr") is not None
    defining = root.lemma in ("mean", "refer", "represent", "denote") and root.tag in ("VBZ", "VBP")
    if not (is_copula or defining) or sentence.child(root.index, "mark") or subject.index > root.index:
        return []
    fronted = next((c for c in sentence.children(root.index) if c.dep == "prep" and c.index < subject.index), None)
    if fronted is not None and not any(t.text == "," for t in sentence.tokens[fronted.index : subject.index]):
        # "Alongside the tools directory is a build\native directory": a place and what stands there, read as
        # "directory is a directory" ("What exactly is directory?" read broken: python-docs, development, thirty-first
        # session). A fronted phrase set off by a comma leaves the subject its own: "In general, a descriptor is ..."
        return []
    if any(
        child.dep == "advcl" or (child.dep == "prep" and child.lemma in ("give", "unlike", "like"))
        for child in sentence.children(root.index)
    ) or any(
        (child.lemma in RELATIVE | QUANTIFIERS and child.dep in ("amod", "det", "advmod"))
        or (child.lemma in EVALUATIVE and child.dep == "amod")
        for child in sentence.children(subject.index)
    ):
        # "Given N <references>, the first N lines are ...", "If the filter contains n entries, then the filter size
        # is ...": true only under a condition; "Unlike commiturl, pushurl is a base path": a contrast, not what it is
        # (git, round 13); "a related concept", "any unknown capability": no one thing; "A common scenario is a task
        # that ...", "A simple dictionary is actually the most flexible representation": a case the page weighs, no
        # term ("What exactly is a common scenario?" read broken: doit, development, twenty-fifth session)
        return []  # "If the filter contains n entries, then the filter size is ...": true only under a condition
    equatives = [t for t in sentence.tokens if t.lemma == "as" and t.dep == "advmod" and t.head > t.index]
    if equatives and not any(t.lemma == "as" and t.index > equatives[-1].index for t in sentence.tokens):
        return []  # "all forms of HTTP request are as obvious [as ...]": compared with what? (requests, rounds 8, 11)
    before, after = (
        sentence.tokens[max(subject.index - 1, 0)],
        sentence.tokens[min(subject.index + 1, len(sentence) - 1)],
    )
    if before.text in QUOTES or after.text in QUOTES:
        return []  # '"Behavior" is the way in which ...': a word glossed or a label quoted, nothing a user asks about
    if any(child.lemma in ("now", "longer", "anymore") for child in sentence.children(root.index)):
        return []  # "RequestException is now a subclass of IOError": a change, not what it is (requests, round 8)
    if any(
        child.dep in ("relcl", "acl") or (defining and child.dep == "prep")
        for child in sentence.children(subject.index)
    ):
        return []  # "The lack of a central group means ...": a consequence, not what a term means
    attr = sentence.child(root.index, "attr")
    if is_copula and attr is not None:
        article = sentence.child(attr.index, "det")
        evaluative = any(
            (child.dep == "amod" and (child.lemma in EVALUATIVE | RELATIVE or _weighed(sentence, child)))
            or child.lemma == "default"
            for child in sentence.children(attr.index)
        )  # "--guess is the default behavior" says it is on, not what it is (git, development round 11); "Hooks are a
        # much better approach" weighs them, and answered what hooks are (cmd2, round 17)
        if attr.pos != "NOUN" or article is None or article.lemma not in ("a", "an", "the") or evaluative:
            return []
        if _of_a_bare_the(sentence, attr):
            return []
        if (
            statement.entry
            and article.lemma == "the"
            and not subject.code
            and subject.tag == "NN"
            and not sentence.children(subject.index)
            and not refers_to_entry(subject)
        ):
            # "Sender is the app instance" under a signal: a field of the entry named like a label, what it is
            # only there ("What exactly is Sender?" names no signal: celery, development round 12)
            return []
    if refers_to_entry(subject) and statement.entry:
        if statement.entry_kind in ("function", "method", "classmethod", "staticmethod", "coroutine"):
            return []  # in a function's description "It is either a SplitResult or ..." is its result (stdlib, round 11)
        topic = entry_name(statement)
    else:
        topic = noun_phrase(sentence, subject, article=True)
    if not topic:
        return []
    plural = subject.tag in ("NNS", "NNPS") and not subject.code
    return [("definition", bare(topic), (("thing", topic), ("plural", "yes" if plural else "")))]


def comparisons(statement: Statement, sentence: Sentence) -> Found:
    lowered = [token.lemma for token in sentence.tokens]
    marker = next((token for token in sentence.tokens if token.lemma in CONTRAST_PREPOSITIONS), None)
    if marker is None:
        for phrase in CONTRAST_PHRASES:
            for start in range(len(lowered) - len(phrase) + 1):
                if tuple(lowered[start : start + len(phrase)]) == phrase:
                    marker = sentence.tokens[start + len(phrase) - 1]
                    break
            if marker:
                break
    if marker is None:
        return []
    other = next((token for token in sentence.children(marker.index) if token.dep == "pobj"), None)
    if other is None:
        other = next((token for token in sentence.tokens[marker.index + 1 :] if token.pos in ("NOUN", "PROPN")), None)
    root = sentence.root
    first = subject_of(sentence, root) or sentence.child(root.index, "dobj")
    if other is None or first is None:
        return []
    if not all(token.code or token.pos == "PROPN" for token in (first, other)):
        return []  # "these instead of socket objects": two things a user names, or no comparison
    a, b = noun_phrase(sentence, first), noun_phrase(sentence, other)
    if not a or not b or a.lower() == b.lower() or a.lower().endswith(b.lower()) or b.lower().endswith(a.lower()):
        return []
    return [("comparison", a, (("a", a), ("b", b)))]


def behaviours(statement: Statement, sentence: Sentence) -> Found:
    """ "Requests automatically decompresses gzip-encoded responses", "The Response object contains
    all of the information" → what does S V / does S V O."""
    root = sentence.root
    will = sentence.child(root.index, "aux")
    if (
        root.pos != "VERB"
        or (root.tag not in ("VBZ", "VBP") and not (root.tag == "VB" and will is not None and will.lemma == "will"))
        or root.lemma in ("be", "have", "do", "raise", "throw")
        or root.lemma in ENABLING_VERBS
        or root.lemma in META_VERBS
    ):
        return []
    subject = subject_of(sentence, root)
    obj = sentence.child(root.index, "dobj")
    if (
        subject is None
        or subject.dep != "nsubj"
        or obj is None
        or subject.index > root.index
        or any(child.lemma == "no" for child in sentence.children(obj.index))
        or not names_something(sentence, root)
        or sentence.child(subject.index, "conj")
    ):  # "octopus and resolve vivify": not octopus alone
        return []
    if refers_to_entry(subject) and statement.entry:
        owner, plural = entry_name(statement), False
    elif (
        subject.code
        or subject.pos == "PROPN"
        or any(child.code or child.pos == "PROPN" for child in sentence.children(subject.index))
        or _described_thing(sentence, subject)
        or _heading_thing(sentence, subject, statement)
    ):
        # the verb agrees with its subject: "Requests decompresses" is one thing, "Blueprints record" several
        owner, plural = noun_phrase(sentence, subject, article=True), root.tag == "VBP"
        if owner is None and _heading_thing(sentence, subject, statement):
            owner = f"the {subject.text}"  # the heading says which: "the audit" under "Audit"
        children = sentence.children(subject.index)
        named = subject.code or subject.pos == "PROPN" or any(c.code or c.pos == "PROPN" for c in children)
        if statement.entry and not named and any(c.dep == "det" and c.lemma == "the" for c in children):
            return []  # "the default implementation" in an entry's description is the entry's (pytest, round 11)
    else:
        return []
    if not owner or sentence.child(root.index, "neg") or not root.lemma.isalpha():
        return []  # (a verb the tagger found in a quote mark: "What does parse_cache_control_header ’?")
    purpose = next(
        (
            child
            for child in sentence.children(root.index)
            if child.dep in ("advcl", "xcomp")
            and child.index > obj.index
            and (marker := sentence.child(child.index, "aux")) is not None
            and marker.lemma == "to"
        ),
        None,
    )
    aim = render(sentence, span(sentence, purpose.index)) if purpose and fits(span(sentence, purpose.index)) else None
    if purpose is not None and aim is None and root.lemma in OBJECT_CONTROL_VERBS:
        # "orm_mode will tell the Pydantic model to read the data even if ...": the object is who is told, half
        # of what it says, and what it is told too long to ask ("What does it tell?", "What does the --upgrade
        # option tell?": FastAPI's sources, development round 21). "provides a serializer to support ..." asks
        # well without its purpose (drf: the same round's reading of what the first version removed).
        return []
    if root.lemma in LIGHT_VERBS and aim is None:
        return []  # "What does MkDocs use?": uses for what? ("... use to render Markdown?" says)
    indices = verb_phrase(sentence, root)
    if any(
        child.index > obj.index and child.index not in indices and child.dep == "advcl"
        for child in sentence.children(root.index)
        if child is not purpose
    ) or _on_its_own(sentence, obj):
        # "sets an exit_code attribute to zero when it is instantiated", "handles the hierarchy on its own": the
        # object is half of what the statement says; "What does the cmd2.Cmd object set?" asks a riddle (cmd2,
        # development readings rounds 16-17). "fits constituents to twelve months of readings" still asks well.
        return []
    rest = render(sentence, [i for i in indices if i != root.index]) if fits(indices) else None
    slots = (("owner", owner), ("verb", root.lemma), ("does", "do" if plural else "does"), ("aim", aim or ""))
    return [("behaviour", bare(owner), (*slots, *((("rest", rest),) if rest else ())))]


def _heading_thing(sentence: Sentence, noun: Token, statement: Statement) -> bool:
    """ "The audit" in a section headed "Audit": the thing the section is about, named by its heading."""
    heading = statement.heading if hasattr(statement, "heading") else ""
    return (
        bool(heading)
        and noun.pos == "NOUN"
        and noun.lemma not in GENERIC_NOUNS
        and any(child.dep == "det" and child.lemma == "the" for child in sentence.children(noun.index))
        and noun.lemma
        in {word.lower().rstrip("s") for word in heading.split()} | {word.lower() for word in heading.split()}
    )


def _described_thing(sentence: Sentence, noun: Token) -> bool:
    """A definite common noun with a modifier that says which: "the ferry planner", "the tide
    predictor"; not "the maintainer" or "passengers"."""
    children = sentence.children(noun.index)
    return (
        noun.pos == "NOUN"
        and noun.lemma not in GENERIC_NOUNS
        and any(child.dep == "det" and child.lemma == "the" for child in children)
        and any(child.dep in ("compound", "amod") and child.lemma not in EVALUATIVE for child in children)
    )


def sections(found: tuple[Statement, ...], title: str) -> list[Fact]:
    """The section the passage opens, when its heading names a thing ("Custom Headers", "Session
    Objects"), not a page of the manual ("Developer Interface", "The User Guide"): how does it work,
    answered by the section's first statements."""
    heading = section_heading(title)
    if (
        not found
        or not heading
        or found[0].text.strip() != heading
        or found[0].entry
        or len(found) < 2
        or len(HEADING_PATH.split(title)) < 2
        or ":" in heading
        or heading.endswith("?")
        or heading.isupper()
    ):
        return []
    if heading.split()[0].lower() in QUALIFYING_WORDS:
        return []  # "Other Providers": other than those before (mkdocs, development round 12)
    parsed = parse_all([heading])[0]
    if parsed.tokens and (
        parsed.tokens[-1].pos not in ("NOUN", "PROPN")
        or any(token.pos not in ("NOUN", "PROPN", "ADJ", "PUNCT") for token in parsed.tokens)
    ):
        return []  # "Great themes available", "Apache as CGI": a title, not a thing's name
    if (
        not is_noun_phrase(parsed)
        or any(token.code or token.pos in ("NUM", "DET") for token in parsed.tokens)
        or len(parsed) > 4
        or any(token.lemma in MANUAL_WORDS or token.text.lower().rstrip("s") in MANUAL_WORDS for token in parsed.tokens)
    ):
        return []
    text = " ".join(statement.text for statement in found[1:])
    topic = " ".join(
        word if not word.istitle() or re.search(rf"(?<![.!?]\s)(?<!^)\b{re.escape(word)}\b", text) else word.lower()
        for word in heading.split()
    )
    words = topic.split()
    if any(before[:1].islower() and after[:1].isupper() for before, after in itertools.pairwise(words)):
        return []  # "feature Requests": a common noun before a name is a part of the manual (requests, round 11)
    plural = parsed.root.tag in ("NNS", "NNPS")
    parsed_body = parse_all([statement.text for statement in found[1:3]])
    # a statement with no subject of its own continues an example ("Will create and attach a Mark object ...")
    body = [
        s.position
        for s, sentence in zip(found[1:3], parsed_body)
        if s.whole and (s is found[1] or subject_of(sentence, sentence.root) is not None)
    ]
    head = stems([parsed.tokens[-1].text.lower()])[0] if parsed.tokens else ""
    if not body or head not in stems(content_words(found[body[0]].text)):
        return []  # the section's first sentence is not about what its heading names
    lead = parse_all([found[body[0]].text])[0]
    if VERSION_NOTE.match(lead.text) or leans_on_context(lead) or example_pointer(lead):
        # "Changed in version 2.9: This extension was removed", "This template, which we'll call base.html, ...":
        # when it changed, or a sentence about an example the reply leaves out (jinja2, development round 12)
        return []
    named = frozenset({head, parsed.tokens[-1].text.lower()}) if parsed.tokens else frozenset()

    def stands_in_the_reply(position: int) -> bool:
        # ("They make APIs more self describing": the pronoun is the lead sentence's subject, in the reply)
        sentence = parse_all([found[position].text])[0]
        return not (leans_on_context(sentence, named, in_entry=True) or example_pointer(sentence))

    body = [position for position in body if position == body[0] or stands_in_the_reply(position)]
    if not any(
        token.pos in ("NOUN", "PROPN")
        and stems([token.text.lower()])[0] == head
        and (
            token.dep in ("nsubj", "nsubjpass", "attr", "ROOT") or lead.tokens[token.head].dep in ("nsubj", "nsubjpass")
        )
        for token in lead.tokens
    ) or (is_imperative(lead, lead.root) or (lead.root.lemma in META_VERBS and subject_of(lead, lead.root) is None)):
        # the first sentence must be about the heading's thing, its subject ("Miscellaneous differences" opening
        # on "The two backends will use different wording"; "All communication is done using packet-line
        # framing" explains no framing), and not send the reader elsewhere ("For the
        # full list of options consult the reference documentation"; git and pytest, development round 8)
        return []
    if REQUIREMENT.search(lead.text) and not any(
        token.dep in ("nsubj", "nsubjpass") and stems([token.text.lower()])[0] == head for token in lead.tokens
    ):
        # a requirement of something else explains nothing: "Client Side Certificates" opening on "The
        # private key to your local certificate must be unencrypted" (requests, development round 4)
        return []
    if (
        _heading_is_a_task(parsed, found[1:3])
        or _lead_narrows(lead, head)
        # every word of the heading in the first sentence: "Object types" opening on "Type 5 is reserved" (git, r13)
        or not set(stems(content_words(heading))) <= set(stems(content_words(lead.text)))
    ):
        return []
    pointer = any(token.lemma in ("find", "list", "locate") and token.tag == "VBN" for token in lead.tokens)
    # "A list of third party themes can be found in the wiki" says where, not how they work
    return [
        Fact(
            "section",
            topic,
            (("topic", topic), ("do", "do" if plural else "does"), ("where", "yes" if pointer else "")),
            body[0],
            tuple(body),
        )
    ]


def _heading_is_a_task(heading: Sentence, body: tuple[Statement, ...]) -> bool:
    """A heading whose first word the section uses as a verb names a task, not a thing: "Download translations"
    over "their work needs to be downloaded" (the tagger reads a heading's first word as a noun; drf, development
    round 12). A word the section also uses as a noun ("Test fixtures") is a thing's name."""
    if len(heading.tokens) < 2:
        return False
    first = heading.tokens[0].text.lower()
    uses = [
        token.pos
        for sentence in parse_all([statement.text for statement in body])
        for token in sentence.tokens
        if token.lemma == first or token.text.lower() == first
    ]
    return "VERB" in uses and not any(pos in ("NOUN", "PROPN", "ADJ") for pos in uses)


def _lead_narrows(lead: Sentence, head: str) -> bool:
    """The section's first sentence is about its heading's thing only where the thing is its main clause's
    subject as the heading names it: "Binary search within a block is supported by ..." is about a block's
    search, "By default validation enforces that all fields be required" about validation ("Can you give me an
    overview of optional fields?": git and drf, development round 13)."""
    root = lead.root
    for token in lead.tokens:
        if token.pos not in ("NOUN", "PROPN") or stems([token.text.lower()])[0] != head:
            continue
        if token.dep == "compound" and lead.tokens[token.head].head == root.index:
            token = lead.tokens[token.head]  # "Session objects": the heading's words as the subject's
        if token.index == root.index or (token.head == root.index and token.dep in ("nsubj", "nsubjpass", "attr")):
            return token.dep in ("nsubj", "nsubjpass") and any(
                child.dep in ("prep", "relcl", "acl", "nummod") for child in lead.children(token.index)
            )  # "Type 5 is reserved": one of the kind, not the kind
        if token.dep == "pobj" and lead.tokens[token.head].dep == "prep":
            owner = lead.tokens[lead.tokens[token.head].head]  # "the use of X" as the subject
            if owner.head == root.index and owner.dep in ("nsubj", "nsubjpass"):
                return False
    return True


def _weighed(sentence: Sentence, adjective: Token) -> bool:
    """A comparison or a superlative that weighs a thing: "a much better approach", "the fastest way". (The tagger
    also calls "pytest" a superlative: an "-er" or "-est" word counts only with "much", "far", "by far" or as a
    judgement of its own.)"""
    if adjective.tag not in ("JJR", "JJS"):
        return False
    return adjective.text.lower() in WEIGHING_WORDS or sentence.child(adjective.index, "advmod") is not None


WEIGHING_WORDS = frozenset("better best worse worst easier easiest simpler simplest faster fastest".split())


def _on_its_own(sentence: Sentence, obj: Token) -> bool:
    """ "on its own", "on their own" after the object: the point is that the thing does it unaided ("Sphinx
    magically handles the intra-file hierarchy on its own": "What does Sphinx handle?" was read broken three
    times). The parser hangs the phrase anywhere, so its words are read."""
    after = [token.text.lower() for token in sentence.tokens[obj.index + 1 :]]
    return any(word == "on" and "own" in after[i + 1 : i + 4] for i, word in enumerate(after))
