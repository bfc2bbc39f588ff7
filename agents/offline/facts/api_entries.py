"""Readers of what an API entry or a code name is for: an entry's purpose, return value and
parameters (what does F do, return; what is P for), a default (what does X default to), and a
code name a sentence names with its use ("Use json.loads to read a document")."""

from __future__ import annotations

import re

from benchsmith.agents.offline.facts.clauses import entry_name, subject_of
from benchsmith.agents.offline.facts.phrases import noun_phrase
from benchsmith.agents.offline.facts.record import Found
from benchsmith.entries import VERSION_NOTE, Statement
from benchsmith.language import AUXILIARY_WORDS, Sentence
from benchsmith.words import LIGHT_VERBS, stems

# "Class attributes: standard_option_list : ...": a label and a list, not what the entry is (stdlib, rounds 8, 11)
LABEL_OPENING = re.compile(r"^[A-Z][a-z]+(?: [a-z]+)?:\s")
CIRCUMSTANCE_WORDS = frozenset("raise when if whenever fail occur happen unless".split())
PARTIAL_SLOT = "partial"  # a purpose whose first sentence needs the next one: see _says_something_else
DEPRECATION = re.compile(
    r"(?i)^\W*(?:[\w-]*deprecated\b|deprecated since|(?:this|these) (?:\w+ )?(?:is|are) deprecated)"
)


def entries(statement: Statement, sentence: Sentence) -> Found:
    name = entry_name(statement)
    if not name or statement.entry_kind is None:
        return []
    found: Found = []
    slots = (("entry", name), ("entry_kind", statement.entry_kind), ("owner", statement.owner or ""))
    opening = sentence.tokens[0] if sentence.tokens else None
    if (
        statement.role == "first"
        and opening is not None
        and opening.pos not in ("SCONJ", "ADP")
        and opening.lemma
        not in ("default", "defaults", "raise", "raises", "optionally")  # "Raises AttributeError if ...": no purpose
        and not DEPRECATION.match(statement.text)
        and not VERSION_NOTE.match(statement.text)
        and not LABEL_OPENING.match(statement.text)
        and sentence.root.lemma not in ("raise", "throw")  # "May raise an ObjectDoesNotExist exception." (drf)
    ):
        # "After receiving the pack, receive-pack may ...", "Defaults to 64", "Optionally specify a reason ..." (its
        # arguments: pytest's xfail, development round 14), "Soft-deprecated, prefer
        # src_uris", "New in version 6.1.": a circumstance, a default, a deprecation or a version, not what
        # the entry is for
        intent = opening.lemma in ("intend", "useful", "use", "mean", "helpful")  # "Intended to speed up ..."
        other = _says_something_else(sentence, name)
        if _output_contract(sentence):
            # "The method should return a list of coreapi.Field instances": what an override must hand back, no
            # purpose ("What is the purpose of get_schema_fields?": drf, development round 14)
            found.append(("returns", name, slots))
        elif other != "another entry":
            partial = ((PARTIAL_SLOT, "yes"),) if other else ()
            # "Baseclass for all template errors" says what an exception is, not when one gets it ("Why would I get
            # a TemplateError?": jinja2 and mkdocs, development round 12)
            when = (
                (
                    sentence.root.pos in ("VERB", "AUX")
                    or any(token.lemma in CIRCUMSTANCE_WORDS for token in sentence.tokens)
                )
                and not _only_output(sentence)
                and not _restates_name(sentence, name)
            )
            found.append(
                ("purpose", name, (*slots, ("why", "yes" if intent else ""), ("when", "yes" if when else ""), *partial))
            )
    if statement.role == "returns" or (
        sentence.tokens
        and sentence.tokens[0].lemma in ("return", "returns", "yield")
        and statement.entry_kind in ("function", "method", "classmethod", "staticmethod")
    ):
        found.append(("returns", name, slots))
    if (
        statement.role == "parameter"
        and statement.parameter
        and statement.parameter not in ("args", "kwargs")
        and statement.parameter.lower() not in AUXILIARY_WORDS  # "it – The exception info": a list read as fields
    ):
        found.append(("parameter", statement.parameter, (*slots, ("parameter", statement.parameter))))
    return found


def _says_something_else(sentence: Sentence, name: str) -> str | None:
    """An entry's first sentence that does not say what the entry does: where it applies ("Only used
    with the init command": a participle with no subject) or what another thing is ("The default for
    format-patch is to output files with the suffix .patch"). Asked what the entry is for, it answers
    only with what follows it (:data:`PARTIAL_SLOT`; git, development round 11); a sentence about
    another entry (a list of variables described together) never."""
    root = sentence.root
    subject = subject_of(sentence, root)
    if subject is None:
        restriction = root.tag == "VBN" and sentence.child(root.index, "aux", "auxpass") is None
        return "restriction" if restriction else None
    low, high = sentence.subtree(subject.index)
    if any(token.code and token.text != name for token in sentence.tokens[low:high]) and name not in sentence.text:
        return (
            "another entry"  # "The GIT_HTTP_EXPORT_ALL environmental variable may be passed ..." under REQUEST_METHOD
        )
    about_another = (
        root.lemma == "be"
        and subject.pos in ("NOUN", "PROPN")
        and not subject.code
        and subject.text.lower() not in ("you", "it", "this")
        and name not in sentence.text
    )
    # what the reader does or what the project does, not what the entry is for: "To implement your own bytecode
    # cache you have to subclass this class", "Sometimes you get an URL by a user that ...", "Jinja keeps internal
    # caches for environments and lexers" (asked what BytecodeCache, url_fix or clear_caches is for, it answered
    # with the background: jinja2 and werkzeug, development round 12)
    background = subject.text.lower() in ("you", "we") or (
        subject.pos == "PROPN" and not subject.code and subject.text.lower() not in re.split(r"[._]", name.lower())
    )
    return "another thing" if about_another or background else None


def defaults(statement: Statement, sentence: Sentence) -> Found:
    verb = next((token for token in sentence.tokens if token.lemma == "default" and token.pos == "VERB"), None)
    if verb is None:
        return []
    subject = subject_of(sentence, verb)
    owner: str | None
    if subject is None and statement.role == "parameter" and statement.parameter:
        owner = statement.parameter  # "(optional) Defaults to True" under a parameter
    elif subject is None:
        owner = entry_name(statement)
    else:
        owner = noun_phrase(sentence, subject)  # never "it": which of the entry's things defaults?
    return [("default", owner, (("owner", owner),))] if owner else []


def named_uses(statement: Statement, sentence: Sentence) -> Found:
    """What a code name is for, where a sentence names it with its use: "Use --llm openai:<model>
    for real conversations", "Use json.loads to read a document" (what is X for?), and
    "--dry-run prints calls and cost first" (what does X do?: the parser often takes the verb after
    a code name for a noun)."""
    tokens = [token for token in sentence.tokens if token.pos != "PUNCT"]
    if len(tokens) < 4 or statement.entry:
        return []
    first, second = tokens[0], tokens[1]
    if (
        first.code
        and first.text.startswith("-")
        and second.text.lower().endswith("s")
        and second.text.isalpha()
        and second.text.islower()
        and second.lemma not in LIGHT_VERBS
        and second.pos in ("VERB", "NOUN")
        and second.tag in ("VBZ", "NNS")
    ):
        return [
            (
                "purpose",
                first.text,
                (("entry", first.text), ("entry_kind", _code_kind(first.text)), ("owner", ""), ("why", "")),
            )
        ]
    if (
        first.text.lower() == "use"
        and second.code
        and any(  # (the tagger may call "Use" a name)
            token.text.lower() in ("for", "to", "when") for token in tokens[2:]
        )
        # "Use pytest.raises() with the pytest.mark.parametrize decorator to ...": what the two do together, not
        # what pytest.raises() is for (pytest, development round 14)
        and not (len(tokens) > 2 and tokens[2].text.lower() == "with")
    ):
        return [
            (
                "purpose",
                second.text,
                (("entry", second.text), ("entry_kind", _code_kind(second.text)), ("owner", ""), ("why", "")),
            )
        ]
    return []


# Verbs that say what an entry hands back, not what a user calls it for.
OUTPUT_VERBS = frozenset({"return", "yield"})


def _only_output(sentence: Sentence) -> bool:
    """A description that says only what the entry hands back ("Return a list of coreapi.Field() instances", "The
    method should return a rendered HTML string", "Return True if file is a static page"): it answers what the
    entry returns, not when or why one calls it ("When would I use get_schema_fields?": drf and mkdocs,
    development round 13)."""
    opening = sentence.tokens[0].text.lower() if sentence.tokens else ""
    # (the tagger reads a docstring's opening "Return explanation ..." or "Yields ModuleInfo ..." as a name); "True if
    # version is compatible with ..." is the value it returns (stdlib's satisfied_by)
    return sentence.root.lemma in OUTPUT_VERBS or opening in ("return", "returns", "yield", "yields", "true", "false")


def _output_contract(sentence: Sentence) -> bool:
    """ "The method should return ...", "Subclasses must return ...": what an implementation is to hand back."""
    root = sentence.root
    return root.lemma in OUTPUT_VERBS and any(
        child.dep == "aux" and child.lemma in ("should", "must") for child in sentence.children(root.index)
    )


def _restates_name(sentence: Sentence, name: str) -> bool:
    """A description that spells out the entry's name ("copy_static_files": "Copy static files from source to
    destination") says what it does in the name's words, not what problem it solves or when to use it."""
    named = stems([part for part in re.split(r"[^a-z0-9]+", re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()) if part])
    if len(named) < 2:
        return False
    said = set(stems([token.text.lower() for token in sentence.tokens]))
    return all(stem in said for stem in named)


def _code_kind(name: str) -> str:
    """An entry kind from a code name's form: an option, a call, else a name."""
    return "option" if name.startswith("-") else "function" if name.endswith(")") else "name"
