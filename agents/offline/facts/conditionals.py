"""Readers of what holds under a condition: a condition (what happens if C), a remedy (what should
I do if C), an absence (what happens without X), an API entry's conditional return, and an error
with what raises it (when does F raise E)."""

from __future__ import annotations

import builtins

from benchsmith.agents.offline.facts.clauses import (
    META_VERBS,
    WANTING_VERBS,
    docstring_mood,
    entry_name,
    is_imperative,
    light_on_judgement,
    names_something,
    refers_to_entry,
    said_to_you,
    subject_of,
)
from benchsmith.agents.offline.facts.phrases import (
    MEANS_PREPOSITIONS,
    clause_span,
    fits,
    noun_phrase,
    object_topic,
    render,
)
from benchsmith.agents.offline.facts.record import FactKind, Found
from benchsmith.entries import Statement, short_name
from benchsmith.language import Sentence, Token
from benchsmith.words import content_words

GIVEN_SLOT = "given"  # a definite noun a condition leans on: see definite_referent
CONDITION_MARKS = frozenset({"if", "when", "whenever"})
INTENT_VERBS = frozenset({"intend", "plan", "decide", "choose", "expect", "hope", "mean", "try", "have"})

# What a user does to a setting or an object: a passive of one of these states the user's action
# ("if verify is set to False" → "if I set verify to False"); of any other it states a fact.
USER_ACTIONS = frozenset(
    "set pass use call give specify enable disable configure install add remove change provide "
    "define create delete edit open close run start stop send write read load save import "
    "register override replace rename move copy update upgrade omit leave put return raise "
    "select choose apply attach mount deploy build".split()
)

# The heads of noun phrases that name one setting of something: "the json parameter", "the timeout option".
SETTING_NOUNS = frozenset(
    "parameter argument option flag setting variable header field attribute key hook value keyword".split()
)
BUILTIN_EXCEPTIONS = frozenset(name for name in dir(builtins) if name.endswith(("Error", "Exception", "Warning")))
EXCEPTION_WORDS = ("Error", "Exception", "Warning", "Exit", "Interrupt", "Timeout")


def conditions(statement: Statement, sentence: Sentence) -> Found:
    found: Found = []
    root = sentence.root
    if root.lemma in ("raise", "throw"):
        return found  # an error's condition: errors() reads it
    conditional = [
        clause
        for clause in sentence.tokens
        if clause.dep == "advcl"
        and clause.head == root.index
        and (mark := _condition_mark(sentence, clause)) is not None
        and mark.lemma in CONDITION_MARKS
    ]
    wishes = [clause for clause in conditional if _wished(sentence, clause) is not None]
    if wishes:
        # "If you want to show an error message, put it in X when you initialize Cmd": the task is the wish, and a
        # condition beside it is part of the instruction, none to ask of its own (cmd2, development round 17)
        conditional = wishes[:1]
    if len(conditional) > 1:
        # "If you change the encoding, Requests will use r.encoding whenever you call r.text": asked under one
        # condition, the reply answers under both (requests, development round 12)
        return found
    for clause in conditional:
        mark = _condition_mark(sentence, clause)
        if mark is None:
            continue
        subject = subject_of(sentence, clause)
        if subject is None:
            continue
        if _concessive(sentence, mark) or _judgement(sentence, root):
            # "Even if you are creating templates from strings, an environment is created": it happens either way;
            # "it's useful to have multiple environments, if different configurations are in use": a judgement,
            # nothing that happens (jinja2, development round 12)
            continue
        if sentence.child(clause.index, "neg") and clause.lemma in WANTING_VERBS:
            continue  # "if you don't want to execute the test function": no task to ask how to do (pytest, round 11)
        if (wanted := _wished(sentence, clause)) is not None:
            # "If you want to add cookies, ..." asks how to add cookies; "see gitrevisions(7) if you want to
            # see more complex cases" only points elsewhere (git's tutorial, development readings round 4)
            main_subject = subject_of(sentence, root)
            if (
                # "see X", and "then you should review the Theme Developer Guide" (mkdocs, round 12): a pointer
                (root.lemma in META_VERBS and (main_subject is None or main_subject.text.lower() == "you"))
                # "There are a few use cases when you might want to customize the ListSerializer behavior": that such
                # cases exist, no way to do it (drf, development round 25)
                or (root.lemma == "be" and main_subject is not None and main_subject.dep == "expl")
                or not names_something(sentence, wanted)
                or light_on_judgement(sentence, wanted)
            ):  # "if you want to have better success" (mkdocs, round 5)
                continue
            marker = sentence.child(wanted.index, "aux")
            indices = [i for i in clause_span(sentence, wanted) if not marker or i != marker.index]
            if fits(indices) and (vp := render(sentence, indices)):
                found.append(("procedure", object_topic(sentence, wanted) or vp, (("vp", vp),)))
            continue
        if (
            clause.lemma in INTENT_VERBS
            or clause.lemma in WANTING_VERBS | {"require"}
            or (root.lemma in META_VERBS and subject_of(sentence, root) is None)
            or any(
                child.dep == "aux"
                and child.lemma in ("have", "would", "can", "could", "may", "might", "should", "must")
                for child in sentence.children(clause.index)
            )
        ):
            continue  # "if you intend to X, ... is required", "if it fails, see ...", "if it had been ..."
        if clause.tag == "VBD" or (
            clause.lemma not in USER_ACTIONS
            and any(child.dep == "auxpass" and child.tag == "VBD" for child in sentence.children(clause.index))
        ):
            continue  # "when you installed MkDocs", "if conflicts were detected": a past event, no condition to ask
        if _leaning_condition(sentence, clause, subject):
            continue
        condition = condition_clause(sentence, clause, mark)
        if condition is None:
            continue
        slots: tuple[tuple[str, str], ...] = (
            ("clause", condition),
            ("mark", "when" if mark.lemma == "whenever" else mark.lemma),
        )
        if referent := definite_referent(sentence, clause, subject):
            slots = (*slots, (GIVEN_SLOT, referent))
        if docstring_mood(statement, sentence):
            if root.lemma in ("return", "returns", "yield") and statement.entry:
                found.append(
                    (
                        "conditional-return",
                        entry_name(statement) or condition,
                        (*slots, ("entry", entry_name(statement) or "")),
                    )
                )
            continue
        if _detail_of_setting(statement, sentence):
            continue
        if (subject_of(sentence, root) is None and not is_imperative(sentence, root)) or (
            root.tag == "VBN" and sentence.child(root.index, "aux", "auxpass") is None
        ):
            # "Advice shown when a sequencer command is in progress", "Tree to checkout from (when paths are
            # given)": a label with no clause of its own says nothing that happens (git, development round 11)
            continue
        person = subject.text.lower() in ("you", "we")
        if (person and clause.lemma == "be") or (not person and noun_phrase(sentence, subject) is None):
            continue  # "if you are new to X", "if the function returns": what it is about is unclear
        topic = noun_phrase(sentence, subject) or condition
        modal = sentence.child(root.index, "aux")
        told = said_to_you(sentence, root)
        passive = sentence.child(root.index, "auxpass") is not None
        advising = (
            is_imperative(sentence, root)
            # "you should X", "you can X"; not "you may also be CC'd" (what happens to you: git, development round 14)
            or (told and modal is not None and modal.lemma not in LIKELIHOOD_MODALS and not passive)
            # "you are encouraged to delete parts of it": advice in the passive (git, development round 14)
            or (told and passive and root.lemma in ADVISING_VERBS)
            # "X must be set", not "the similarity should become more apparent" (what to expect: drf, round 13)
            or (modal is not None and modal.lemma in ("must", "should") and root.lemma not in LINKING_VERBS)
            or root.lemma in ("need", "require")
            or any(child.lemma == "required" for child in sentence.children(root.index))
        )
        kind: FactKind = "remedy" if advising else "condition"
        if kind == "condition" and person and clause.lemma in MENTAL_VERBS:
            continue  # "If you know FastAPI, you already know Typer": what the user knows is no event that happens
        if kind == "condition" and told and root.lemma in WANTING_VERBS:
            # "When you create a web API, you want it to be always running", "If you are just starting with FastAPI
            # you might want to skip it": what the user wants then, not what happens (FastAPI, development round 22)
            continue
        if kind == "remedy" and (
            sentence.child(root.index, "neg") or any(child.lemma == "never" for child in sentence.children(root.index))
        ):
            continue  # "If you use gh-deploy, never edit ...": a warning, not what to do
        if kind == "condition" and (affected := _affected(sentence, root, condition)):
            slots = (*slots, ("affected", affected))
        if kind == "remedy" and told and modal is not None and modal.lemma in ("can", "could"):
            # "When an event occurs, you can run a piece of code": a move the user may make, not one they must
            # ("When an event occurs, what do I need to do?" was read broken twice: guizero and cleo, round 18)
            slots = (*slots, (OPTION_SLOT, "can"))
        found.append((kind, topic, slots))
    first = sentence.tokens[0] if sentence.tokens else None
    if first is not None and first.lemma == "without" and first.head == root.index and root.pos in ("VERB", "AUX"):
        lacking = sentence.child(first.index, "pobj")
        if lacking is not None and any(
            child.dep == "det" and child.lemma in QUANTIFYING_DETERMINERS for child in sentence.children(lacking.index)
        ):
            lacking = None  # "Without any work on the part of the designer, ...": no thing a user goes without (cmd2, round 17)
        thing = noun_phrase(sentence, lacking, article=True) if lacking else None
        if thing:
            found.append(("absence", thing, (("thing", thing),)))
    return found


# Modals that say what is likely, not what the user is to do.
LIKELIHOOD_MODALS = frozenset({"may", "might", "will", "would"})
# What a person knows, thinks or likes: a state of mind, not something that happens to the docs' subject
# ("What happens if I know?": jinja2, development round 18).
MENTAL_VERBS = frozenset("know think believe feel understand like love prefer remember".split())
OPTION_SLOT = "option"  # a remedy the user may take ("you can ..."), asked as what they can do
# Verbs that advise in the passive ("you are encouraged to ...").
ADVISING_VERBS = frozenset({"encourage", "advise", "recommend", "urge", "ask", "expect", "require"})


# Determiners that make a noun phrase point at a thing named before it ("the base object", "its
# contents") or quantify over nothing named ("no contributor objects").
POINTING_DETERMINERS = frozenset("the this that these those its their his her our".split())
QUANTIFYING_DETERMINERS = frozenset("no any all each every both some either neither".split())


def _wished(sentence: Sentence, clause: Token) -> Token | None:
    """The verb of the task in "If you want to X", "if we wish to X" (asked as how to do X); None for any other
    clause."""
    subject = subject_of(sentence, clause)
    if (
        subject is None
        or subject.text.lower() not in ("you", "we")
        or clause.lemma not in WANTING_VERBS
        or sentence.child(clause.index, "neg") is not None
    ):
        return None
    return sentence.child(clause.index, "xcomp")


def _leaning_condition(sentence: Sentence, clause: Token, subject: Token) -> bool:
    """A condition clause that does not stand alone as a question. Readers of the development half
    (rounds 6-8: 27 of 59 condition questions broken) name: a clause the parser cut out of a longer
    one ("if subtree include [has not been modified]": a verb follows it in the sentence); a clause that
    does what an earlier sentence said ("if you do so"); a subject
    that is a pronoun, or that quantifies over no thing named ("if no contributor objects and two
    agree"). A definite thing is :func:`definite_referent`'s."""
    if clause.lemma == "do" and any(
        child.lemma in ("so", "this", "that", "it") for child in sentence.children(clause.index)
    ):
        return True  # "If you do so, ...": what is done was said before ("What can I do if I do?": cmd2, round 18)
    _, high = sentence.subtree(clause.index)
    following = sentence.tokens[high] if high < len(sentence.tokens) else None
    if following is not None and following.pos in ("VERB", "AUX", "PART") and not following.code:
        return True
    if subject.text.lower() in ("you", "we", "i", "one"):
        return _everyday(sentence, clause)
    if subject.code or subject.pos == "PROPN":
        return False
    determiners = {child.lemma for child in sentence.children(subject.index) if child.dep in ("det", "poss")}
    if determiners == {"any"} and any(child.dep == "compound" for child in sentence.children(subject.index)):
        return False  # "if any postcommand hook raises an exception": any one of a kind the words name (cmd2, round 17)
    return subject.pos == "PRON" or (subject.dep == "nsubj" and bool(determiners & QUANTIFYING_DETERMINERS))


def _everyday(sentence: Sentence, clause: Token) -> bool:
    """A user's action on any one thing of the kind and nothing more ("when you make a request", "when you
    report an issue", "when you receive a response"): what happens then is everything the page says, and
    its one sentence is no answer (requests, development rounds 8 and 11)."""
    children = sentence.children(clause.index)
    obj = next((child for child in children if child.dep == "dobj"), None)
    if obj is None or obj.code or any(child.dep in ("prep", "dative", "xcomp", "ccomp") for child in children):
        return False
    modifiers = sentence.children(obj.index)
    return all(child.dep == "det" and child.lemma in ("a", "an") for child in modifiers) and bool(modifiers)


def definite_referent(sentence: Sentence, clause: Token, subject: Token) -> str | None:
    """The noun a condition is about when it is definite and named by no code name or proper noun
    ("If the base object is deltified", "if the environment variable is not defined"; for "if you
    use the X", its object): the passage names it before when it does, and a question that leaves
    that out leans on text the user never saw (git and mkdocs, development round 8).
    :func:`benchsmith.agents.offline.facts.passage_facts` drops the fact when an earlier statement
    of the passage has the noun."""
    person = subject.text.lower() in ("you", "we", "i", "one")
    things = [t for t in sentence.children(clause.index) if t.dep in ("dobj", "attr")] if person else [subject]
    for thing in things:
        start, end = sentence.subtree(thing.index)
        if thing.pos != "NOUN" or any(t.code or t.pos == "PROPN" for t in sentence.tokens[start:end]):
            continue
        if {child.lemma for child in sentence.children(thing.index) if child.dep in ("det", "poss")} & (
            POINTING_DETERMINERS
        ):
            return thing.lemma
    return None


def _detail_of_setting(statement: Statement, sentence: Sentence) -> bool:
    """A condition in an entry's description (a setting, an option, a function) that does not name
    the entry ("[merge.verbosity] ... if conflicts were detected"; "[aifc] ... if the setpos() method
    is not used"): asked alone it leaves out what it is about, and the page's name is no help ("In
    git config, what should I expect if conflicts were detected?": git and stdlib development
    readings, rounds 5-7). The entry's own questions ask about it."""
    if not statement.entry:
        return False
    name = short_name(statement.entry)
    return (
        not any(token.code and (token.text == name or token.text.endswith(name)) for token in sentence.tokens)
        and name not in sentence.text
    )


def _affected(sentence: Sentence, root: Token, condition: str) -> str | None:
    """What a condition changes, when the sentence names it and the condition does not: "the json
    parameter is ignored if data or files is passed" asks "What happens to the json parameter if
    I pass data or files?", not what happens at all (which reads as if passing data did nothing
    else; readers of the development half call such questions unaskable). A code name, or a
    setting named by a compound ("the json parameter"); None for a person, a pronoun, a quantity
    ("all submodules") or a thing the condition already names."""
    subject = subject_of(sentence, root)
    if subject is None or subject.dep == "expl" or root.lemma == "be":
        return None  # "--ff is the default if ...": what it is, not what happens to it
    children = sentence.children(subject.index)
    if any(child.lemma in ("all", "each", "every", "any", "some", "no", "both") for child in children):
        return None
    named = subject.code or (
        subject.lemma in SETTING_NOUNS and any(child.dep == "compound" or child.code for child in children)
    )
    phrase = noun_phrase(sentence, subject, article=True) if named else None
    if not phrase or set(content_words(phrase)) & set(content_words(condition)):
        return None
    return phrase


def _concessive(sentence: Sentence, mark: Token) -> bool:
    """ "even if", "even when": what follows holds either way."""
    return mark.index > 0 and sentence.tokens[mark.index - 1].lemma == "even"


def _judgement(sentence: Sentence, root: Token) -> bool:
    """ "It is useful to ...", "it's possible to ...": the main clause judges, an expletive "it" its subject."""
    subject = subject_of(sentence, root)
    return (
        (root.lemma == "be" or root.text in ("'s", "\u2019s"))  # the tagger leaves "it’s" unlemmatized
        and subject is not None
        and subject.text.lower() == "it"
        and sentence.child(root.index, "acomp") is not None
        and sentence.child(root.index, "xcomp", "ccomp") is not None
    )


def _condition_mark(sentence: Sentence, clause: Token) -> Token | None:
    """The word that makes a clause a condition: "if" is a marker; "when" the parser often takes for
    an adverb of the clause's verb ("A crossing is cancelled when the swell exceeds two metres")."""
    mark = sentence.child(clause.index, "mark")
    if mark is not None:
        return mark
    first = sentence.tokens[sentence.subtree(clause.index)[0]]
    return (
        first if first.dep == "advmod" and first.head == clause.index and first.lemma in ("when", "whenever") else None
    )


def condition_clause(sentence: Sentence, verb: Token, mark: Token) -> str | None:
    """A condition as a user states it: its core (subject, verb, objects, first complement; no
    adverbs, asides or relative clauses), a passive without its agent turned into what the user
    does ("verify is set to False" → "I set verify to False")."""
    high = sentence.subtree(verb.index)[1]
    if high < len(sentence.tokens) and _manner(sentence.tokens[high]):
        return None  # "If you use REST framework commercially we ...": the parser gave the adverb to the main clause
    dropped = {
        child.index
        for child in sentence.children(verb.index)
        if (child.dep in ("parataxis", "appos") or (child.dep == "advmod" and not _manner(child)))
        and child.index > mark.index
    }
    # "multiple times" (npadvmod) stays: "if --group is specified multiple times" is another condition
    preps = [child for child in sentence.children(verb.index) if child.dep in ("prep", "agent")]
    # a later phrase that says by what means stays: "when we interact with the API [through the web browser]" is
    # another condition without it (drf, development round 13)
    dropped |= {child.index for child in preps[1:] if child.lemma not in (*MEANS_PREPOSITIONS, "through")}
    indices = [i for i in clause_span(sentence, verb) if i != mark.index]
    indices = [i for i in indices if not any(i in range(*sentence.subtree(d)) for d in dropped)]
    subject = sentence.child(verb.index, "nsubjpass")
    passive = (
        subject is not None
        and sentence.child(verb.index, "auxpass") is not None
        and verb.tag == "VBN"
        and not sentence.child(verb.index, "agent")
        and not sentence.child(verb.index, "aux")
        and verb.lemma in USER_ACTIONS
        and not any(child.dep in ("conj", "cc", "preconj") for child in sentence.children(verb.index))
        and not any(
            token.lemma in ("neither", "nor") for token in sentence.tokens[slice(*sentence.subtree(subject.index))]
        )
    )
    # "if X is either not set or empty" stays as written: "if I don't set X empty" garbles it; so does "if neither X
    # nor Y is defined" ("if I define X nor Y": python-docs, development, thirty-first session)
    if not passive or subject is None:  # (a passive has its subject)
        return render(sentence, indices) if fits(indices) else None
    auxiliaries = {child.index for child in sentence.children(verb.index) if child.dep in ("auxpass", "aux", "neg")}
    thing = [i for i in indices if i in range(*sentence.subtree(subject.index))]
    rest = [i for i in indices if i > verb.index and i not in thing and i not in auxiliaries]
    object_text, rest_text = render(sentence, thing), render(sentence, rest) if rest else ""
    if object_text is None or rest_text is None or not fits([*thing, verb.index, *rest]):
        return None
    negated = sentence.child(verb.index, "neg") is not None  # "if X is not set" → "if I don't set X"
    return " ".join(part for part in ("I", "don't" if negated else "", verb.lemma, object_text, rest_text) if part)


# Adverbs in -ly that place a statement, not the action ("usually", "finally"): a condition drops them.
DISCOURSE_ADVERBS = frozenset(
    "usually typically generally normally really actually simply finally currently additionally previously "
    "eventually already only also probably possibly certainly obviously basically essentially".split()
)


def _manner(token: Token) -> bool:
    """An adverb that says how the action is done ("commercially", "explicitly", "recursively"): a condition
    without it is another condition ("If you use REST framework commercially, we encourage you to fund it"
    asked as "what happens if I use REST framework?": drf, development round 13)."""
    return token.pos == "ADV" and token.text.lower().endswith("ly") and token.lemma not in DISCOURSE_ADVERBS


LINKING_VERBS = frozenset("be become seem appear remain look feel sound get grow".split())
# Determiners that quantify a subject rather than name it ("any settings", "many commands").
QUANTIFIERS = frozenset("many some most all several few various any each every".split())
NON_RAISING_KINDS = frozenset({"setting", "option", "variable", "data", "attribute"})


def errors(statement: Statement, sentence: Sentence) -> Found:
    found: Found = []
    for verb in sentence.tokens:
        if verb.lemma not in ("raise", "throw") or verb.pos not in ("VERB",) or sentence.child(verb.index, "neg"):
            continue  # "It will not raise SystemExit": no cause of it (pytest, development rounds 8 and 11)
        subject = subject_of(sentence, verb)
        obj = sentence.child(verb.index, "dobj")
        if _the_reader_raises(sentence, verb, subject):
            continue  # "It might be tempting to raise an HTTPException ...": the reader's act, no cause of the error
        if subject is not None and subject.dep == "nsubjpass":
            error = _error_name(sentence, subject)
            raiser = entry_name(statement)
        else:
            error = _error_name(sentence, obj) if obj else None
            raiser = (
                entry_name(statement) if subject is None or refers_to_entry(subject) else noun_phrase(sentence, subject)
            )
            if subject is None and verb.tag == "VBG" and verb.dep in ("pcomp", "advcl", "acl"):
                raiser = None  # "how long we wait ... before raising a WorkerLostError": the entry raises nothing
            elif subject is not None and any(
                child.dep == "det" and child.lemma in QUANTIFIERS for child in sentence.children(subject.index)
            ):
                raiser = None  # "Any settings [which fail validation] will raise ...": no thing a user names
            elif subject is not None and not subject.code and _complement_left_out(sentence, subject):
                # "an attempt to evaluate it raises a NameError": "What makes attempt raise NameError?" asks about an
                # attempt at nothing (python-docs, development, thirty-first session: read broken; a first reader let
                # "What makes pattern match attempt raise TypeError?" pass as a close call)
                raiser = None
        if raiser is not None and statement.entry_kind in NON_RAISING_KINDS and raiser == entry_name(statement):
            raiser = None  # a setting or an option raises nothing: the code that reads it does (celery, round 12)
        if not error or (raiser is None and error in BUILTIN_EXCEPTIONS):
            continue  # "Why would I get a ValueError?": every page that raises one answers it
        if not _says_when(sentence, verb):
            continue  # "May raise an ObjectDoesNotExist exception.": what makes it raise, the reply never says (drf)
        slots = (("error", error), *((("raiser", raiser),) if raiser else ()))
        found.append(("error", raiser or error, slots))
    return found


READER_PRONOUNS = frozenset({"you", "we"})


def _complement_left_out(sentence: Sentence, noun: Token) -> bool:
    """The noun's clause or phrase says what it is of, and a raiser named by the noun phrase alone leaves it out:
    "an attempt [to evaluate it]", "a call [to the method]" (an "of" phrase stays in the noun phrase)."""
    return any(
        child.dep in ("acl", "relcl") or (child.dep == "prep" and child.lemma != "of")
        for child in sentence.children(noun.index)
        if child.index > noun.index
    )


def _the_reader_raises(sentence: Sentence, verb: Token, subject: Token | None) -> bool:
    """The reader raises the error, so the statement says what the reader may do, not what makes the software
    raise it: "You can raise an HTTPException", "It might be tempting to raise an HTTPException" (an infinitive
    under an adjective), "If you have custom exceptions ..., maybe even raising an HTTPException" (a participle of
    the reader's clause). Asked "What causes an HTTPException?", each was read as a reply that answers another
    question (FastAPI's sources, development round 25)."""
    if subject is not None:
        return subject.text.lower() in READER_PRONOUNS
    if verb.tag not in ("VB", "VBG") or verb.dep == "ROOT":
        return False  # a docstring's "Raise KeyError if the key is missing." is the entry's
    head = sentence.tokens[verb.head]
    if verb.dep == "xcomp" and head.pos == "ADJ":
        return True
    governing = subject_of(sentence, head)
    return governing is not None and governing.text.lower() in READER_PRONOUNS


def _says_when(sentence: Sentence, verb: Token) -> bool:
    """A statement of an error that says when it happens: a clause ("if the URL is invalid", "when ..."), a
    phrase ("on failure", "for invalid data"), or a subject that is the cause ("Calling .is_valid() will
    cause a ValidationError to be raised")."""
    if any(token.lemma in ("if", "when", "whenever", "unless", "once", "because") for token in sentence.tokens):
        return True
    holders = {verb.index, sentence.root.index}
    if any(
        child.dep in ("prep", "advcl", "agent") and child.lemma not in ("as", "with")
        for holder in holders
        for child in sentence.children(holder)
    ):
        return True
    subject = subject_of(sentence, sentence.root)
    return subject is not None and not refers_to_entry(subject) and subject.pos != "PRON"


def _error_name(sentence: Sentence, token: Token) -> str | None:
    """An exception's name ("ValueError", "a TooManyRedirects exception" → "TooManyRedirects")."""
    if token.code or token.text.endswith(EXCEPTION_WORDS):
        return (
            token.text
            if token.text.endswith(EXCEPTION_WORDS) or token.lemma in ("exception", "error") or token.code
            else None
        )
    if token.lemma in ("exception", "error", "warning"):
        named = next(
            (
                child
                for child in sentence.children(token.index)
                if child.dep == "compound" and (child.code or child.pos == "PROPN")
            ),
            None,
        )
        return named.text if named else None
    return None
