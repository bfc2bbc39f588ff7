"""Questions about what a sentence says, asked through its subject rather than by quoting it.

The offline questioner's grammar, without a parser: a sentence is read as an optional lead
clause ("If the file is missing, ..."), a subject (the words before the first verb: a copula,
a modal, or a third-person verb), the verb, and the rest. Then

* "X is a Y" → "What is X?"; "X is used to ..." → "What is X used for?"; "The Y of X is ..." →
  "What is the Y of X?"; another predicate → "Is X <predicate>?";
* "X can be cleared with ..." → "How can X be cleared?"; "X will print ..." → "What will X print?";
* "X returns ..." (and other verbs whose object is the answer) → "What does X return?";
  "X raises E if ..." or a lead "If ..., X ..." → "When does X raise E?";
  any other verb → "How does X escape non-ASCII characters?" (the object up to a clause break);
* an imperative ("Use --resume to continue a run") → "How do I continue a run?"; in docstrings,
  whose imperatives describe the function above them ("Return the parsed value"), the function
  is the subject: "What does loads return?";
* a sentence that opens with a pronoun takes the subject the passage gave before it.

Every question names its subject or its key terms: it is self-contained. A chunk's heading
path ("Issue Triage › Triage Issues › ...") never reaches a question: only its page title does.
:func:`user_phrasings` then asks the same in a user's words (``USER_VERBS``, ``USER_FRAMES``):
"X returns Y" → "What do I get back from X?", "X raises E" → "What makes X throw E?".
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, replace

from benchsmith.passages import HEADING_SEPARATOR
from benchsmith.words import STOPWORDS, content_words

COPULAS = frozenset({"is", "are", "was", "were"})
MODALS = frozenset({"can", "cannot", "could", "must", "should", "will", "would", "may", "might"})
# Verbs whose object is what the sentence tells: the question asks for it ("What does X return?").
WHAT_VERBS = frozenset(
    "returns yields gives produces outputs prints emits creates generates builds computes accepts takes expects "
    "requires needs contains holds stores lists defines provides supports exposes includes represents describes "
    "specifies means shows ensures reports records".split())
WHEN_VERBS = frozenset("raises throws fails stops exits warns".split())
KNOWN_VERBS = WHAT_VERBS | WHEN_VERBS | frozenset(
    "uses calls sets gets adds removes checks converts loads parses handles finds opens closes sends receives "
    "starts waits shows keeps makes lets allows enables disables ignores skips follows implements extends "
    "overrides wraps applies matches replaces splits joins encodes decodes escapes formats compares sorts counts "
    "measures picks chooses selects walks cuts breaks moves copies deletes updates caches indexes embeds ranks "
    "scores fuses retries writes reads runs works behaves succeeds depends belongs becomes remains appears exists "
    "happens excludes registers resolves controls determines limits defaults refers points returns combines "
    "creates marks tells turns keeps changes affects refuses accepts assigns draws lifts fits brings carries "
    "collects books proposes exceeds downloads verifies extrapolates caps polls schedules predicts covers sends "
    "stores loads saves signs validates matches filters groups merges splits renders displays logs prints "
    "installs deploys configures connects listens binds serves routes queues triggers notifies".split())
# A word after which a possible third-person verb (ends in -s) is taken for one: a determiner or a
# pronoun, not a preposition ("unit tests for tools", "100k vectors in 14 s" are nouns).
OBJECT_START = frozenset(
    "a an the that it its their them all any each no one this these those whether how what when some every two "
    "several many both either neither".split())
LEAD_WORDS = frozenset(
    "if when whenever unless although though because since after before while once for in on with by to as unlike "
    "like during without from at under given however otherwise here now thus hence therefore finally first second "
    "similarly also moreover instead alternatively optionally note normally usually typically".split())
CONDITIONAL_LEADS = frozenset({"if", "when", "whenever", "unless", "once", "after", "before"})
PRONOUNS = frozenset({"it", "they", "this", "that", "these", "those", "he", "she"})
PERSONAL_PRONOUNS = frozenset({"it", "they", "he", "she", "we", "you", "i"})
# An object that only the passage's context names ("override this in ..."), and words that point
# back to what the sentence before said ("the remaining arguments", "the above example").
OBJECT_PRONOUNS = frozenset({"this", "these", "those", "it", "them"})
RELATIVE_WORDS = frozenset({"remaining", "above", "aforementioned", "former", "latter", "following", "preceding",
                            "previous", "said"})
NOT_SUBJECTS = frozenset({"there", "here", "you", "we", "i", "which", "who", "what", "where", "how", "why", "one"})
LEADING_DETERMINERS = frozenset({"the", "a", "an", "each", "every", "this", "these", "that", "those"})
CUT_WORDS = frozenset(
    "by with using via through when if unless because so which that where while and or but since as although "
    "whether than instead whose who whom once until".split())
IMPERATIVES = frozenset(
    "use pass run set call add install create make write read open start stop import choose keep put try check "
    "configure enable disable give define specify provide avoid remove delete replace register return raise ensure "
    "convert load save build send select initialize compute get find list print update override implement "
    "subclass instantiate apply clear reset close parse encode decode format wrap generate".split())
NOT_VERBS = frozenset("always perhaps sometimes thus its this has does was is as us yes less unless various "
                      "previous ones series news analysis basis class process access address status".split())
DOC_EXTENSIONS = (".md", ".rst", ".txt", ".html", ".htm", ".ipynb", ".pdf", ".markdown")
# "name -- description" or "name: description", as docstrings list parameters (a code-like name only).
DEFINITION = re.compile(r"^(?P<name>[a-z_][\w.]*(\(\))?|[A-Za-z_]\w*[._]\w[\w.]*(\(\))?)\s*(--|:|—|–)\s+\S")
QUANTIFIERS = frozenset({"every", "each", "all", "any", "no", "some", "many", "most"})
NEGATIONS = frozenset({"no", "none", "nothing", "neither", "nor"})
PAST_TENSE = frozenset("took made gave ran wrote went came said found kept left saw told thought brought built sent "
                       "spent stood got did had became began chose drew grew knew lost meant paid read rose "
                       "sold shut spoke wore won".split())
DETERMINERS = frozenset("a an the all any each every its their this these true false none whether".split())
# Adverbs a predicate may open with: "X is then passed ..." asks about "passed".
PREDICATE_ADVERBS = frozenset("then also always usually now still only just often never first automatically "
                              "normally typically currently".split())
MODULE_NOUNS = frozenset({"module", "package", "library"})
CALLABLE_NOUNS = frozenset({"function", "method", "class", "callable", "routine", "constructor", "decorator"})
# Words that show the words before a verb are a clause, not a subject ("Today it has the foundation").
CLAUSE_WORDS = frozenset({"has", "have", "had", "does", "do", "did", "it", "they", "we", "you", "he", "she", "i",
                          "there", "not", "be", "been", "this", "that", "these", "those"})
PREPOSITIONS = frozenset("of in on at to for from with into onto by about over under between through during "
                         "without within across after before since until against among per via".split())
# Imperatives a user does ("How do I install it?"); in docstrings "Return X" describes a function instead.
DOCSTRING_IMPERATIVES = frozenset({"return", "raise", "yield"})
USER_ACTIONS = IMPERATIVES - DOCSTRING_IMPERATIVES
LABEL_TOKENS = 6  # "Benchmark audit (MTR-Eval): ..." labels its sentence within this many words
PARTICIPLES = frozenset("built done made run written read found given taken kept set put shown known seen sent "
                        "held left lost meant paid split cut begun chosen drawn driven hidden broken spoken".split())
MAX_SUBJECT_TOKENS, MAX_OBJECT_TOKENS = 7, 8
WH_WORDS = frozenset("how what which whether when where why who whom".split())
MIN_QUESTION_CONTENT_WORDS = 3


@dataclass(frozen=True)
class Ask:
    question: str
    subject: str | None  # what the question is about, as written in it (the polisher refers back to it)
    key_terms: tuple[str, ...]  # the sentence's content words the question carries (for the ambiguity check)


@dataclass(frozen=True)
class _Token:
    text: str  # as written, punctuation stripped
    breaks: bool  # a clause ends after it (comma, semicolon, colon, period)
    colon: bool = False  # ... with a colon
    opens: bool = False  # it opens a parenthesis ("(install all modules)")

    @property
    def lower(self) -> str:
        return self.text.lower()


def _tokens(sentence: str) -> list[_Token]:
    tokens: list[_Token] = []
    for raw in sentence.split():
        if not any(character.isalnum() for character in raw):  # "--", "-", "&": a clause separator
            if tokens:
                tokens[-1] = replace(tokens[-1], breaks=True)
            continue
        text = raw.lstrip("(\"'“‘[").rstrip(".,;:!?\"'”’")
        if text.count(")") > text.count("(") and not text.endswith("()"):
            text = text.rstrip(")]")
        if text.count("(") != text.count(")"):  # "t.open(file," is a piece of a call, not a word
            text = text.split("(")[0]
        if text:
            tokens.append(_Token(text, raw[-1] in ".,;:!?" or (raw.endswith(")") and text != raw.rstrip(".,;:!?")),
                                 raw.endswith(":"), raw.startswith(("(", "["))))
    return tokens


def _words(tokens: list[_Token]) -> str:
    return " ".join(token.text for token in tokens)


def verb_base(verb: str) -> str:
    """returns → return, applies → apply, matches → match, does → do, has → have."""
    lower = verb.lower()
    irregular = {"does": "do", "has": "have", "goes": "go", "is": "be", "are": "be"}
    if lower in irregular:
        return irregular[lower]
    if lower.endswith("ies") and len(lower) > 4:
        return lower[:-3] + "y"
    if lower.endswith(("sses", "shes", "ches", "xes", "zes")):
        return lower[:-2]
    return lower[:-1] if lower.endswith("s") else lower


def third_person(base: str) -> str:
    """return → returns, apply → applies, match → matches (the inverse of :func:`verb_base`)."""
    if base.endswith(("s", "sh", "ch", "x", "z", "o")):
        return base + "es"
    if base.endswith("y") and len(base) > 2 and base[-2] not in "aeiou":
        return base[:-1] + "ies"
    return base + "s"


def _is_third_person_verb(tokens: list[_Token], index: int) -> bool:
    word = tokens[index].lower
    if word in KNOWN_VERBS:
        return tokens[index].text.islower()
    if not (tokens[index].text.isalpha() and tokens[index].text.islower() and len(word) >= 4 and word.endswith("s")):
        return False
    if word.endswith(("ss", "us", "is", "ous", "ics", "ness")) or word in NOT_VERBS:
        return False
    following = tokens[index + 1] if index + 1 < len(tokens) else None
    if following is None:
        return False
    if following.lower in OBJECT_START:  # "breaks the", "fits it": not "tests for", "vectors in"
        return True
    # "a judge ensemble rates query-evidence alignment": after a determiner and a noun, unless
    # the next word is the verb ("the function arguments are").
    follows_noun_phrase = index >= 2 and tokens[0].lower in LEADING_DETERMINERS and not tokens[index - 1].breaks
    next_is_verb = following.lower in COPULAS or following.lower in MODALS or following.lower in KNOWN_VERBS
    return follows_noun_phrase and not next_is_verb and not following.text[:1].isupper()


def _subject_text(tokens: list[_Token], proper_nouns: frozenset[str], title: str, context_name: str | None) -> str:
    """The subject as it reads mid-question: a leading article or a sentence-initial capital
    lowered; "this module" named by the module's title, "this function" by the signature above."""
    texts = [token.text for token in tokens]
    if len(texts) == 2 and texts[0].lower() == "this" and texts[1].lower() in CALLABLE_NOUNS and context_name:
        return context_name
    if len(texts) == 2 and texts[0].lower() in ("this", "the") and texts[1].lower() in MODULE_NOUNS \
            and re.fullmatch(r"[A-Za-z_][\w.]*", title) and not title.lower().endswith(DOC_EXTENSIONS):
        return f"the {title} {texts[1].lower()}"
    first = texts[0]
    if first.lower() in LEADING_DETERMINERS or (first[:1].isupper() and first[1:].islower() and first.isalpha()
                                                 and first not in proper_nouns):
        texts[0] = first.lower()
    if texts[0] in ("this", "these", "that", "those"):
        texts[0] = "the"
    return " ".join(texts)


def _valid_subject(tokens: list[_Token]) -> bool:
    if not tokens or len(tokens) > MAX_SUBJECT_TOKENS or any(token.breaks for token in tokens):
        return False
    if any(token.lower in PAST_TENSE for token in tokens):
        return False  # "the whole demo took 2 (minutes)": a clause, not a noun phrase
    if any(token.lower in CUT_WORDS or token.lower in COPULAS or token.lower in MODALS or token.lower in CLAUSE_WORDS
           or token.lower in PREPOSITIONS and token.lower != "of"
           or (token.lower in KNOWN_VERBS and token.text.islower()) for token in tokens[1:]):
        return False
    if tokens[0].lower in NEGATIONS:
        return False  # "no such check (takes place)": a negation names nothing to ask about
    if any(token.lower in RELATIVE_WORDS for token in tokens):
        return False  # "the remaining arguments (are passed ...)": which ones, the sentence before says
    if tokens[0].lower in NOT_SUBJECTS or tokens[0].lower in PERSONAL_PRONOUNS or tokens[0].lower in PRONOUNS \
            and len(tokens) == 1 or tokens[-1].lower in PREPOSITIONS:
        return False
    if len(tokens) > 1 and tokens[0].text[:1].isupper() and tokens[1].lower in DETERMINERS:
        return False  # "Arrange the given list ...": an imperative, not a subject
    if any(token.lower in LEADING_DETERMINERS | {"all", "any"} and tokens[index].lower != "of"
           for index, token in enumerate(tokens[1:])):
        return False  # "the model seam every agent (goes through)": a clause, not a noun phrase
    return bool(content_words(_words(tokens)))


def _object(tokens: list[_Token], limit: int = MAX_OBJECT_TOKENS) -> list[_Token]:
    """The words after the verb up to a clause break or a word that starts a new clause."""
    taken: list[_Token] = []
    cut_short = False
    for token in tokens:
        if token.lower in CUT_WORDS or (token.opens and taken):
            break
        if len(taken) >= limit:
            cut_short = True
            break
        taken.append(token)
        if token.breaks:
            break
    if cut_short:  # "... a load rating in tonnes painted (on its crown)": end before the unfinished phrase
        first_preposition = next((index for index, token in enumerate(taken) if index >= 2
                                  and token.lower in PREPOSITIONS), 0)
        if first_preposition >= 2:
            taken = taken[:first_preposition]
    while taken and (taken[-1].lower in STOPWORDS or len(taken[-1].text) < 2):
        taken.pop()
    return taken


def _split_lead(tokens: list[_Token]) -> tuple[str | None, list[_Token]]:
    """A leading clause ("If the file is missing,") or label ("Benchmark audit (MTR-Eval):")
    and the main clause after it."""
    label = next((index for index, token in enumerate(tokens[:LABEL_TOKENS]) if token.colon
                  and index + 1 < len(tokens)), None)
    if label is not None:
        tokens = tokens[label + 1:]
    if tokens and tokens[0].lower in LEAD_WORDS:
        for index, token in enumerate(tokens[:15]):
            if token.breaks and index + 1 < len(tokens):
                return tokens[0].lower, tokens[index + 1:]
        return tokens[0].lower, []
    return None, tokens


def question_about(sentence: str, *, title: str, context_name: str | None = None,
                   previous_subject: str | None = None, proper_nouns: frozenset[str] = frozenset()) -> Ask | None:
    """A question the sentence answers, asked about its subject (None when nothing fits).

    ``context_name`` is the function or class the passage documents at this point (from a
    signature line above the sentence); ``previous_subject`` the subject of the sentence before
    (what a leading "It" refers to); ``proper_nouns`` the capitalised words the passage uses
    mid-sentence (a sentence-initial "Clustering" is lowered, "Python" is not)."""
    title = page_title(title)
    if definition := DEFINITION.match(sentence):  # "xml_declaration -- bool indicating if ...": a parameter
        name = definition["name"]
        ask = Ask(f"What does {name} mean?", name, tuple(content_words(name)))
        return _with_enough_words(ask, title)
    lead, main = _split_lead(_tokens(sentence))
    if not main:
        return None
    if main[0].text[:1].isupper() and (main[0].lower in IMPERATIVES or main[0].text.isalpha() and len(main) > 1
                                       and main[1].lower in DETERMINERS and main[0].text not in proper_nouns
                                       and not main[0].lower.endswith("s")):
        ask = _imperative(main, context_name, title)
    else:
        ask = _declarative(main, lead, previous_subject, context_name, title, proper_nouns)
    if ask is None:
        return None
    return _with_enough_words(ask, title)


def _declarative(main: list[_Token], lead: str | None, previous_subject: str | None, context_name: str | None,
                 title: str, proper_nouns: frozenset[str]) -> Ask | None:
    for index in range(0, min(len(main), MAX_SUBJECT_TOKENS + 1)):
        word = main[index].lower
        if index == 0:  # "Returns the value." in a docstring: the documented function is the subject
            following = main[1].lower if len(main) > 1 else ""
            if context_name and (word in KNOWN_VERBS or _is_third_person_verb([_Token(word, False), *main[1:]], 0)
                                 and following in DETERMINERS):
                return _ask(context_name, _Token(word, main[0].breaks), main[1:], lead)
            if word in KNOWN_VERBS and following in DETERMINERS:  # "Provides the ...": what provides it?
                obj = _object(main[1:])
                return Ask(f"What {word} {_words(obj)}?", None, (word, *content_words(_words(obj)))) if obj else None
            continue
        if not (word in COPULAS or word in MODALS or _is_third_person_verb(main, index)):
            continue
        head = [token for token in main[:index] if token.lower not in PREDICATE_ADVERBS] or main[:index]
        if len(head) == 1 and head[0].lower in PRONOUNS:
            if not previous_subject:
                return None
            subject = previous_subject
        elif _valid_subject(head):
            subject = _subject_text(head, proper_nouns, title, context_name)
        else:
            continue
        return _ask(subject, main[index], main[index + 1:], lead)
    return None


def _ask(subject: str, verb: _Token, rest: list[_Token], lead: str | None) -> Ask | None:
    word = verb.lower
    if word in COPULAS:
        return _copula_question(subject, word, rest)
    if word in MODALS:
        return _modal_question(subject, word, rest)
    base, obj = verb_base(word), _object(rest)
    # An object only the passage's context names: "How does prompt_user_passwd override this in a GUI?"
    dangling = bool(obj) and obj[0].lower in OBJECT_PRONOUNS and (len(obj) == 1 or obj[1].lower in PREPOSITIONS)
    key = (*content_words(subject), *content_words(verb.text))
    if word in WHEN_VERBS or lead in CONDITIONAL_LEADS:
        if word in WHEN_VERBS and not obj or dangling:
            return None
        return Ask(f"When does {subject} {_phrase(base, obj)}?", subject, (*key, *content_words(_words(obj))))
    if [token.lower for token in obj] == ["sure"]:  # "make sure that ..."
        return Ask(f"What does {subject} {base} sure of?", subject, key)
    if obj and obj[0].lower in WH_WORDS:  # "sets how many minutes ...": what it sets is the answer
        return Ask(f"What does {subject} {base}?", subject, key)
    if not obj and word not in WHAT_VERBS:  # "travels with a bill of lading": how, not what
        return Ask(f"How does {subject} {base}?", subject, key)
    if word in WHAT_VERBS or not obj:
        return Ask(f"What does {subject} {base}?", subject, key)
    if dangling:
        return None
    return Ask(f"How does {subject} {_phrase(base, obj)}?", subject, (*key, *content_words(_words(obj))))


def _phrase(base: str, obj: list[_Token]) -> str:
    return " ".join([base, _words(obj)]).strip()


ATTRIBUTE = re.compile(r"^the (?P<attribute>[\w -]{2,40}?) of (?P<owner>.+)$")


def _copula_question(subject: str, copula: str, rest: list[_Token]) -> Ask | None:
    negated = False  # "escapes are not expanded": "How are escapes expanded?" would claim they are
    while rest and (rest[0].lower == "not" or rest[0].lower in PREDICATE_ADVERBS):
        negated, rest = negated or rest[0].lower == "not", rest[1:]
    if not rest:
        return None
    head = rest[0].lower
    key = tuple(content_words(subject))
    if head in ("used", "useful"):
        return Ask(f"What {copula} {subject} used for?", subject, key)
    if attribute := ATTRIBUTE.match(subject):
        return Ask(f"What {copula} the {attribute['attribute']} of {attribute['owner']}?", attribute["owner"], key)
    if head in ("a", "an", "the", "one", "either"):
        if subject.split()[0].lower() in QUANTIFIERS:  # "What is every job?"
            return None
        return Ask(f"What {copula} {subject}?", subject, key)
    if head == "being" and len(rest) > 1:
        rest, head = rest[1:], rest[1].lower
    if head.isalpha() and (head.endswith("ed") or head in PARTICIPLES) and len(head) > 3:
        return None if negated else Ask(f"How {copula} {subject} {head}?", subject, (*key, *content_words(head)))
    predicate = _object(rest, limit=6)
    if not predicate or predicate[0].lower in PREPOSITIONS or not _names_a_thing(subject):
        return None  # "Is command on CLI?": a fragment, not a question
    return Ask(f"{copula.capitalize()} {subject} {_words(predicate)}?", subject,
               (*key, *content_words(_words(predicate))))


def _names_a_thing(subject: str) -> bool:
    """A subject a yes/no question can stand on: with an article or a possessive, a code name,
    or two words or more ("command" alone is a heading's word, not a thing)."""
    first = subject.split()[0].lower()
    return len(subject.split()) >= 2 or first in LEADING_DETERMINERS or bool(re.search(r"[._(]|[a-z][A-Z]", subject))


def _modal_question(subject: str, modal: str, rest: list[_Token]) -> Ask | None:
    key = tuple(content_words(subject))
    if modal == "cannot":  # "X cannot be pickled" → "Can X be pickled?"
        predicate = _object(rest, limit=4)
        return Ask(f"Can {subject} {_words(predicate)}?", subject, (*key, *content_words(_words(predicate)))) \
            if predicate else None
    negated = False  # "will not be added": "How will it be added?" would claim it is
    while rest and (rest[0].lower == "not" or rest[0].lower in PREDICATE_ADVERBS):  # "will only be added"
        negated, rest = negated or rest[0].lower == "not", rest[1:]
    if negated:
        return None
    if len(rest) >= 2 and rest[0].lower == "be":
        participle = rest[1].lower
        if not (rest[1].text.isalpha() and (participle.endswith(("ed", "en")) or participle in PARTICIPLES)):
            return None  # "a user may be having ...": no passive to ask about
        return Ask(f"How {modal} {subject} be {rest[1].text}?", subject, (*key, *content_words(rest[1].text)))
    if len(rest) > 1 and rest[1].lower in PREPOSITIONS:
        return None  # "it will default to adding ...": "What will it default?" asks nothing
    if rest and rest[0].text.isalpha() and rest[0].text.islower():
        return Ask(f"What {modal} {subject} {rest[0].text}?", subject, (*key, *content_words(rest[0].text)))
    return None


def _imperative(main: list[_Token], context_name: str | None, title: str) -> Ask | None:
    verb = main[0]
    if context_name:  # a docstring's imperative describes its function: "Return X." → what does f return?
        return _ask(context_name, _Token(third_person(verb.lower), verb.breaks), main[1:], None)
    rest = main[1:]
    if verb.lower in DOCSTRING_IMPERATIVES or _is_code_name(title):
        # A docstring that does not name its function here: ask which one does it.
        obj = _object(rest)
        return Ask(f"Which function {third_person(verb.lower)} {_words(obj)}?", None,
                   (*content_words(verb.text), *content_words(_words(obj)))) if obj else None
    if verb.lower not in USER_ACTIONS:
        return None
    purpose = next((index for index, token in enumerate(rest) if token.lower == "to" and index + 1 < len(rest)
                    and rest[index + 1].text.isalpha() and rest[index + 1].text.islower()), None)
    if purpose is not None:
        goal = _object(rest[purpose + 2:])
        return Ask(f"How do I {_phrase(rest[purpose + 1].text, goal)}?", None,
                   (*content_words(rest[purpose + 1].text), *content_words(_words(goal))))
    obj = _object(rest)
    if not obj:
        return None
    return Ask(f"How do I {_phrase(verb.lower, obj)}?", None, (*content_words(verb.lower), *content_words(_words(obj))))


def _with_enough_words(ask: Ask, title: str) -> Ask | None:
    """At least three content words; a short question names where it is asked about."""
    if len(content_words(ask.question)) >= MIN_QUESTION_CONTENT_WORDS:
        return ask
    topic = documented_topic(title)
    if not topic:
        return None
    longer = f"In {topic}, {ask.question[:1].lower()}{ask.question[1:]}"
    if len(content_words(longer)) < MIN_QUESTION_CONTENT_WORDS:
        return None
    return Ask(longer, ask.subject, (*ask.key_terms, *content_words(topic)))




def page_title(title: str) -> str:
    """The page a chunk's heading path starts with: "Issue Triage › Triage Issues › Reaching
    resolution" → "Issue Triage". A question names the page, never the path (a user does not
    type one)."""
    return HEADING_SEPARATOR.split(title.strip(), maxsplit=1)[0].strip()


# ---------------------------------------------------------------------------------------
# The user's words. Documentation says "X returns Y", "raises E", "specifies Z"; a user asks
# "What do I get back from X?", "What makes X throw E?". The lexicon maps a documentation verb
# (base form) to the everyday phrasing a user types for it; the frames below turn the question
# the grammar gives into the ones a user asks, which carry words the passage need not use (so a
# lexical retriever cannot match the question by copying alone).

USER_VERBS = {
    "escape": "deal with", "handle": "deal with", "process": "deal with", "convert": "turn", "transform": "turn",
    "create": "make", "generate": "make", "build": "make", "construct": "make", "instantiate": "make",
    "remove": "get rid of", "delete": "get rid of", "drop": "get rid of", "discard": "throw away",
    "specify": "choose", "configure": "set up", "install": "set up", "initialize": "set up",
    "enable": "turn on", "disable": "turn off", "invoke": "run", "execute": "run", "call": "run",
    "check": "test", "validate": "test", "verify": "check", "compute": "work out", "calculate": "work out",
    "raise": "throw", "fail": "break", "stop": "quit", "exit": "quit", "warn": "complain",
    "load": "read in", "parse": "read", "store": "keep", "save": "keep", "sort": "put in order",
    "search": "look up", "find": "look up", "retrieve": "get", "fetch": "get", "obtain": "get",
    "ignore": "leave out", "skip": "leave out", "exclude": "leave out", "require": "need", "expect": "need",
    "support": "work with", "display": "show", "accept": "take", "apply": "use", "replace": "swap out",
    "split": "break up", "join": "put together", "combine": "put together", "merge": "put together",
    "cache": "remember", "limit": "cap", "poll": "check on", "refuse": "turn down", "reject": "turn down",
    "download": "fetch", "collect": "gather", "propose": "suggest", "exceed": "go over", "extrapolate": "predict",
    "reassign": "move", "assign": "give", "modify": "change", "update": "change", "emit": "send out",
    "terminate": "end", "determine": "decide", "indicate": "tell", "encode": "turn", "serialize": "turn",
    "deserialize": "turn back", "register": "sign up", "allocate": "set aside", "acquire": "get hold of",
    "release": "let go of", "append": "add", "insert": "add", "prepend": "add", "receive": "get",
}


def user_verb(verb: str) -> str | None:
    """The user's phrasing of a documentation verb (base form), or None when it has none."""
    return USER_VERBS.get(verb.lower())


# What a user asks about a thing whose details they do not know yet (no word of the passage but its name):
# of an API name, what it is for; of anything else (a tool, a person, a setting), the role it plays.
GENERAL_CODE_QUESTIONS = ("What is {s} actually good for?", "What problem does {s} solve?",
                          "When should I reach for {s}?")
GENERAL_QUESTIONS = ("What role does {s} play?",)
GENERAL_PLURAL_QUESTIONS = ("What role do {s} play?",)
_TOPIC_PREFIX = re.compile(r"^In (?P<topic>[^,]+), (?P<first>\w)")
# (frame of the question the grammar gives, the user's questions for it, best first).
# {s}: the subject; {o}: the object; {v}: the verb; {uv}: the user's verb for it; {c}: the copula.
USER_FRAMES: list[tuple[re.Pattern[str], tuple[str, ...]]] = [(re.compile(pattern), templates)
                                                              for pattern, templates in [
    (r"^What does (?P<s>[\w.()]+) mean\?$", ("What is {s} for?", "What goes into {s}?")),
    (r"^What does (?P<s>.+) (?P<v>return|yield|give|produce|output)\?$",
     ("What do I get back from {s}?", "What comes out when I use {s}?")),
    (r"^What does (?P<s>.+) (?P<v>print|show|display|report|log|emit)\?$",
     ("What will I see from {s}?", "What output should I expect from {s}?")),
    (r"^What does (?P<s>.+) (?P<v>require|need|expect|take|accept)\?$",
     ("What do I have to give {s}?", "What has to be in place before I can use {s}?")),
    (r"^What does (?P<s>.+) (?P<v>contain|hold|store|include|list|keep|record|define)\?$",
     ("What will I find in {s}?", "What goes into {s}?")),
    (r"^What does (?P<s>.+) (?P<v>provide|support|expose|offer|allow|enable)\?$",
     ("What can I do with {s}?", "What does {s} let me do?")),
    (r"^What does (?P<s>.+) (?P<v>create|generate|build|make|compute)\?$",
     ("What do I end up with after using {s}?", "What comes out of {s}?")),
    (r"^What does (?P<s>.+) (?P<v>describe|specify|mean|represent|indicate)\?$",
     ("What is {s} telling me?", "How should I read {s}?")),
    (r"^What does (?P<s>.+) (?P<v>\w+)\?$", ("What does {s} {uv}?",)),
    (r"^When does (?P<s>.+?) (?P<v>raise|throw|fail|stop|exit|warn)(?: (?P<o>.+))?\?$",
     ("What makes {s} {uv}{_o}?", "What could go wrong with {s}?")),
    (r"^When does (?P<s>.+?) (?P<v>\w+) (?P<o>.+)\?$", ("When would {s} {uv} {o}?",)),
    (r"^How does (?P<s>.+?) (?P<v>\w+) (?P<o>.+)\?$", ("How does {s} {uv} {o}?", "*{general}")),
    (r"^What (?P<c>is|are) (?P<s>.+) used for\?$", ("Why would I need {s}?", "When would I reach for {s}?")),
    (r"^What (?P<c>is|are) the role of (?P<o>.+)\?$", ()),  # a key phrase's question: no other wording
    (r"^What (?P<c>is|are) the (?P<a>[\w -]+?) of (?P<o>.+)\?$", ("How do I find out the {a} of {o}?",)),
    (r"^What (?P<c>is|are) (?P<s>.+)\?$", ("What {c} {s} for?", "Why would I care about {s}?")),
    (r"^How do I (?P<v>\w+) (?P<o>.+)\?$", ("How do I {uv} {o}?", "What steps do I follow to {uv} {o}?")),
    (r"^Which function (?P<v>\w+) (?P<o>.+)\?$", ("Which function do I need to {uv} {o}?",)),
]]


def user_phrasings(ask: Ask, title: str, *, general: bool = False) -> list[Ask]:
    """The question asked in the user's words (see ``USER_VERBS``, ``USER_FRAMES``): a task or
    a behaviour ("What do I get back from X?") instead of the documentation's verb, best first;
    each has three content words (naming the page where it needs to). Empty when no frame fits.
    ``general``: instead the frame's more general questions (a template marked ``*``), which drop
    the passage's object ("What is X actually good for?"): fewer of its words, less specific."""
    question = ask.question
    if prefix := _TOPIC_PREFIX.match(question):  # "In tides, what ..." → "What ..."
        question = prefix["first"].upper() + question[prefix.end():]
    found: list[Ask] = []
    for frame, templates in USER_FRAMES:
        if "(?P<s>" in frame.pattern:  # the subject is known: anchor it ("the json.dumps function escape ...")
            if not ask.subject:
                continue
            frame = re.compile(re.sub(r"\(\?P<s>\.\+\??\)", lambda _: f"(?P<s>{re.escape(ask.subject)})",
                                      frame.pattern))
        match = frame.match(question)
        if not match:
            continue
        parts = {name: value or "" for name, value in match.groupdict().items()}
        verb = parts.get("v", "")
        base = verb_base(verb) if verb.endswith("s") and not verb.endswith("ss") and frame.pattern.startswith(
            "^Which") else verb
        parts["uv"] = user_verb(base) or base
        parts["_o"] = f" {parts['o']}" if parts.get("o") else ""
        if parts.get("s"):  # one of several wordings, chosen by the subject: a benchmark repeats no one template
            subject = parts["s"]
            plural = bool(re.search(r"[^s]s$", subject)) and subject[:1].islower()
            wordings = GENERAL_CODE_QUESTIONS if re.search(r"[._(]|[a-z][A-Z]", subject) else \
                GENERAL_PLURAL_QUESTIONS if plural else GENERAL_QUESTIONS
            words_of = subject.split()
            if len(words_of) > 1 and words_of[0].lower() not in LEADING_DETERMINERS and words_of[-1].isalpha() \
                    and words_of[-1].islower():
                subject = f"the {subject}"  # "Ttk Menubutton widget displays ...": what role does the widget play?
            parts["general"] = wordings[zlib.crc32(subject.encode()) % len(wordings)].format(**{**parts, "s": subject})
        for template in templates:
            if template.startswith("*") != general:
                continue
            template = template.lstrip("*")
            if "{uv}" in template and not user_verb(base):
                continue  # no user's word for this verb: the grammar's question stays the only one
            phrased = template.format(**parts)
            worded = Ask(phrased, ask.subject, tuple(content_words(phrased)))  # the terms it carries, for ambiguity
            if phrased != question and (asked := _with_enough_words(worded, title)):
                found.append(asked)
        break
    return found


def document_name(title: str) -> str:
    """The document as a whole: "the README documentation", "the json.decoder documentation"."""
    stem = page_title(title)
    if stem.lower().endswith(DOC_EXTENSIONS):
        stem = stem.rsplit(".", 1)[0]
    if re.search(r"\b(documentation|docs|guide|manual|reference|tutorial)$", stem, re.IGNORECASE):
        return f"the {stem[:1].lower() + stem[1:] if stem[1:2].islower() else stem}"
    return f"the {stem} documentation" if stem else "this collection"


def documented_topic(title: str) -> str:
    """How a question names the document: "the json.decoder module" reads oddly, "json.decoder" does not."""
    title = page_title(title)
    if title.lower().endswith(DOC_EXTENSIONS):
        title = title.rsplit(".", 1)[0]
        return f"the {title} documentation" if title else ""
    return title


def _is_code_name(title: str) -> bool:
    """A module path or identifier ("xml.etree.ElementTree", "build_clib"), not a page title or file name."""
    return bool(re.fullmatch(r"[A-Za-z_]\w*([._]\w+)+", title)) and not title.lower().endswith(DOC_EXTENSIONS)


def signature_name(line: str, title: str) -> str | None:
    """The name a signature or dotted-name line documents, relative to the title's module:
    ``xmlrpc.server.DocCGIXMLRPCRequestHandler.handle_get(self)`` under ``xmlrpc.server`` is
    ``DocCGIXMLRPCRequestHandler.handle_get``."""
    match = re.match(r"^\s*([A-Za-z_][\w.]*)(\(.*\))?", line)
    if not match:
        return None
    name = match.group(1).rstrip(".")
    if title and name.startswith(title + ".") and name != title:
        name = name[len(title) + 1:]
    return name or None
