"""The words a question is made of, read from a parse (benchsmith/language.py): a span rendered in
the user's voice, a noun phrase that names a thing, a verb phrase that names an action, a clause
up to its comma. None where the words need a referent outside the sentence ("it", "this")."""

from __future__ import annotations

import re

from benchsmith.language import Sentence, Token
from benchsmith.words import UNANCHORED_NOUNS

# Words that make a heading continue the section before it ("Other Providers", "More complicated POST requests"):
# what it names is relative to what came before, no thing a user names alone.
QUALIFYING_WORDS = frozenset("more less other further additional advanced another".split())

DANGLING = frozenset(
    {
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "they",
        "them",
        "their",
        "he",
        "she",
        "which",
        "such",
        "former",
        "latter",
        "above",
        "below",
        "here",
        "there",
        "following",
        "none",
        "nothing",
        "something",
        "anything",
        "everything",
        "someone",
        "one",
        # comparative reference: "other providers", "another path" (other than what?)
        "other",
        "another",
        "same",
        "else",
    }
)
USER_VOICE = {
    "you": "I",
    "your": "my",
    "yours": "mine",
    "yourself": "myself",
    "we": "I",
    "our": "my",
    "us": "me",
    "ourselves": "myself",
}

# Head nouns that name nothing on their own: "one key difference", "a common form", "the only time",
# "the function" (which one?). A topic headed by one needs a name beside it ("the timeout parameter").
GENERIC_NOUNS = frozenset(
    "difference form time way thing things part parts kind type types example examples case cases number lot set "
    "list value values result results data information item items object objects function functions method "
    "methods class classes option options argument arguments parameter parameters feature features reason "
    "reasons problem problems issue issues step steps point points detail details section sections page pages "
    "document documentation user users people one ones other others rest end start beginning fact idea use "
    "note notes question questions answer answers change changes version versions default defaults behavior "
    "behaviour behaviors behaviours functionality".split()
)
# Words that place a thing in a list or a sequence rather than name it.
LIST_POSITIONS = frozenset("ith jth kth nth first second third last next previous following preceding".split())
# Verbs whose object is told to do something: "instruct clone [to recurse into submodules]" is half an action.
CONTROL_VERBS = frozenset("instruct tell ask force cause configure allow enable permit let require make get".split())
MEANS_PREPOSITIONS = frozenset({"with", "by", "using", "via", "through"})
MAX_SLOT_TOKENS = 14
MIN_SLOT_TOKENS = 2


# A quotation's marks, opening to closing ("search for “Python”" keeps its closing mark).
QUOTATION_MARKS = {"“": "”", "‘": "’", '"': '"'}


def _closes_a_quote(tokens: list[Token]) -> bool:
    """The last token closes a quotation the phrase opens: dropped, it would leave "search online bookstores for
    “Python?" (python-docs, development, thirty-first session)."""
    last = tokens[-1].text
    opening = next((mark for mark, closing in QUOTATION_MARKS.items() if closing == last), None)
    if opening is None:
        return False
    opened = sum(token.text == opening for token in tokens[:-1])
    return opened % 2 == 1 if opening == last else opened > 0


def render(sentence: Sentence, indices: list[int] | range, *, user: bool = True) -> str | None:
    """The tokens' words in order, in the user's voice ("you" → "I"); None when a word needs a
    referent outside the sentence ("it", "this") or the span is no phrase."""
    words: list[str] = []
    tokens, depth = [], 0
    for i in sorted(indices):  # a parenthesis is an aside: left out
        token = sentence.tokens[i]
        depth += token.text == "("
        if not depth:
            tokens.append(token)
        depth -= token.text == ")" and depth > 0
    while tokens and tokens[-1].pos == "PUNCT" and not _closes_a_quote(tokens):
        tokens.pop()
    while tokens and tokens[0].pos in ("PUNCT", "CCONJ") and tokens[0].lemma != "neither":
        tokens.pop(0)  # ("either" goes, "neither" of "neither X nor Y" stays: "X nor Y" says the opposite)
    if not tokens:
        return None
    if cut_short(sentence, tokens):
        return None
    for position, token in enumerate(tokens):
        lower = token.text.lower()
        relative = token.tag in ("WDT", "WP") or (
            lower == "that" and token.dep in ("nsubj", "nsubjpass", "dobj", "mark")
        )
        if lower in DANGLING and not token.code and not relative:
            return None
        text = USER_VOICE.get(lower, token.text) if user and not token.code else token.text
        if user and lower == "you" and token.dep in ("dobj", "pobj", "dative"):
            text = "me"  # "the project created for you" is created for me, not "for I"
        after_you = position and tokens[position - 1].text.lower() in ("you", "we")
        if user and lower in ("are", "were", "'re", "’re") and after_you:
            text = {"are": "am", "were": "was", "'re": "'m", "’re": "’m"}[lower]
        if lower in ("so", "such") and position and tokens[position - 1].lemma == "do":
            return None  # "after doing so": so what?
        # a space where the sentence had one, also across the tokens left out ("core.autocrlf" without)
        spaced = position < len(tokens) - 1 and any(
            sentence.tokens[k].space for k in range(token.index, tokens[position + 1].index)
        )
        words.append(text + (" " if spaced else ""))
    rendered = "".join(words).strip()
    if (
        any(rendered.count(left) != rendered.count(right) for left, right in ("()", "[]", "<>", "{}"))
        or rendered.count('"') % 2
        or len(re.findall(r"(?<!\w)'|'(?!\w)", rendered)) % 2
    ):
        return None  # a quotation or bracket cut in half
    equatives = [
        t for t in tokens if t.lemma == "as" and t.dep == "advmod" and sentence.tokens[t.head].pos in ("ADJ", "ADV")
    ]
    if equatives and not any(t.lemma == "as" and t.index > equatives[0].index for t in tokens):
        return None  # a comparison cut in half: "add as many project roots [as you want]" (git, round 11)
    if (
        rendered
        and tokens[0].pos in ("VERB", "AUX", "DET", "ADV", "ADP", "SCONJ", "PART")
        and not tokens[0].code
        and not tokens[0].text.isupper()
    ):
        rendered = rendered[:1].lower() + rendered[1:]  # "Return a copy" read mid-question: "return a copy"
    return rendered or None


PAIRING_WORDS = frozenset({"both", "either", "neither"})


# Verbs that say nothing without their object: a phrase that ends on one was cut before it.
OBJECT_VERBS = frozenset("have get give make take need contain include provide put set want find".split())
OBJECT_DEPENDENCIES = frozenset({"dobj", "ccomp", "xcomp", "attr", "prt", "dative", "prep", "acomp", "oprd"})


def cut_short(sentence: Sentence, tokens: list[Token]) -> bool:
    """A span that ends inside a word, a list of verbs or a pairing: "see an AttributeError re-[raised]" (the
    word runs on without a space into a token left out), "be able to create[, edit and delete snippets]",
    "impose both burst throttling rates[, and sustained ...]" ("both" without its "and"). Each asks a question
    the sentence never put (drf, development round 13)."""
    kept = {token.index for token in tokens}
    for token in tokens:
        after = token.index + 1
        if (
            not token.space
            and after < len(sentence.tokens)
            and after not in kept
            and sentence.tokens[after].text[:1].isalnum()
        ):
            return True
    last = tokens[-1]
    if last.pos == "VERB" and any(
        child.dep == "conj" and child.index not in kept for child in sentence.children(last.index)
    ):
        return True  # "be able to create[, edit and delete snippets]": the verb's object lies past the list (drf)
    if last.pos == "VERB" and last.lemma in OBJECT_VERBS and last.index + 1 < len(sentence.tokens) - 1:
        # "make sure that I have[, for example, exactly a list of str]": a verb that takes an object, its object
        # past an aside the parser hung elsewhere (FastAPI's sources, development round 25)
        return not any(
            child.dep in OBJECT_DEPENDENCIES and child.index in kept for child in sentence.children(last.index)
        )
    pairings = [token for token in tokens if token.lemma in PAIRING_WORDS and token.dep in ("preconj", "det")]
    return any(
        t.dep == "cc" and t.lemma in ("and", "or", "nor") and t.index > pairing.index and t.index not in kept
        for pairing in pairings
        for t in sentence.tokens
    )


def span(sentence: Sentence, index: int, *, without: set[int] = frozenset()) -> list[int]:  # type: ignore[assignment]
    """The indices of a token's subtree, less ``without`` and the subtrees rooted there."""
    start, end = sentence.subtree(index)
    dropped: set[int] = set()
    for removed in without:
        low, high = sentence.subtree(removed)
        dropped |= set(range(low, high))
    return [i for i in range(start, end) if i not in dropped]


def contiguous(sentence: Sentence, indices: list[int]) -> bool:
    """The words run on without a gap but an aside: "use the regular Markdown linking syntax [, including the
    relative path to the Markdown document] you wish to link to" joins what the sentence kept apart (mkdocs,
    development round 11)."""
    kept = sorted(indices)
    gaps = [i for i in range(kept[0], kept[-1] + 1) if i not in set(kept)] if kept else []
    return all(sentence.tokens[i].pos == "PUNCT" or _inside_parentheses(sentence, i) for i in gaps)


def _inside_parentheses(sentence: Sentence, index: int) -> bool:
    before = [t.text for t in sentence.tokens[:index]]
    return before.count("(") > before.count(")")


def fits(indices: list[int]) -> bool:
    return MIN_SLOT_TOKENS <= len(indices) <= MAX_SLOT_TOKENS


def clause_span(sentence: Sentence, head: Token) -> list[int]:
    """A clause's tokens up to the first comma after its head (what follows is another clause:
    "if the hook existed, False if not")."""
    indices = span(sentence, head.index)
    cut = next((i for i in indices if i > head.index and sentence.tokens[i].text in (",", ";", ":", "–", "—")), None)
    return [i for i in indices if cut is None or i < cut]


def noun_phrase(sentence: Sentence, token: Token, *, article: bool = False) -> str | None:
    """The noun phrase a token heads (its base chunk, or the code name), read in its sentence:
    its head a noun and no verb in it; without a leading determiner, or with "the" or "a" when
    ``article`` (a question says "What does the Response object contain?"). None for a pronoun,
    a demonstrative, or a phrase that is no thing."""
    if token.code:
        return token.text
    if token.pos not in ("NOUN", "PROPN") or not specific_noun(sentence, token):
        return None
    chunk = sentence.chunk_at(token.index)
    start, end = chunk if chunk else (token.index, token.index + 1)
    end = min(end, token.index + 1)  # the chunk ends with its head
    children = sentence.children(token.index)
    if any(
        child.dep in ("acl", "relcl") and child.index > token.index and sentence.tokens[child.index - 1].text != ","
        for child in children
    ) and any(child.dep == "det" and child.lemma == "the" for child in children):
        return None  # "the default mechanism [to read a page's source]": the clause says which one
    of_phrase = next(
        (child for child in children if child.dep == "prep" and child.lemma == "of" and child.index == token.index + 1),
        None,
    )
    if of_phrase is not None:  # "the lack [of a central group]", "the use of proxies": the whole, or nothing
        whole = span(sentence, of_phrase.index)
        if not fits([*range(start, end), *whole]) or any(sentence.tokens[i].pos in ("VERB", "AUX") for i in whole):
            return None
        end = whole[-1] + 1
    tokens = sentence.tokens[start:end]
    if any(t.pos in ("VERB", "AUX", "PRON") and not t.code for t in tokens) or any(
        t.text.lower() in DANGLING for t in tokens
    ):
        return None
    leading = tokens[0].pos == "DET" and tokens[0].lemma in ("the", "a", "an")
    indices = list(range(start + 1 if leading else start, end))
    rendered = render(sentence, indices, user=False)
    if rendered is None:
        return None
    first = sentence.tokens[indices[0]]
    if first.pos in ("DET", "ADJ", "NUM", "ADV") and not first.code and not first.text.isupper():
        rendered = rendered[:1].lower() + rendered[1:]  # "Many commands" read mid-question: "many commands"
    if article and leading and tokens[0].lemma in ("the", "a", "an"):
        return f"{tokens[0].text.lower()} {rendered}"
    return rendered


def specific_noun(sentence: Sentence, token: Token) -> bool:
    """A head noun that names something, or a generic one with a name beside it. "the parent",
    "the error", "the path" name nothing a first question can lean on: a definite noun needs a
    modifier or an "of" phrase that says which."""
    children = sentence.children(token.index)
    definite = any(child.dep == "det" and child.lemma in ("the", "this", "that") for child in children)
    described = any(
        child.dep in ("compound", "amod", "nmod", "poss")
        or (child.dep == "nummod" and not (definite and child.text.isalpha()))
        or (child.dep == "prep" and child.lemma == "of")
        for child in children
    )  # "the three views" counts what the text showed before: it says which no more than "the views" (drf, round 13)
    if definite and any(child.lemma in LIST_POSITIONS and not child.code for child in children):
        return False  # "the ith value", "the first argument": an item of a list or a table the question does not show
    if definite and not described and token.text.lower() in UNANCHORED_NOUNS:
        return False  # "the ID", "the default": which one? (the quality gate's rule, benchsmith/words.py)
    if token.code or token.pos == "PROPN":
        return True
    if definite and not described:
        return False
    if token.lemma not in GENERIC_NOUNS:
        return True
    return any(
        child.dep in ("compound", "amod", "nmod")
        and (child.code or child.pos == "PROPN" or (child.lemma not in GENERIC_NOUNS and child.pos == "NOUN"))
        for child in sentence.children(token.index)
    )


def sentence_inner(sentence: Sentence, indices: list[int], phrase: str) -> str:
    """The phrase of ``indices`` as it reads inside a question: a common word capitalized only because it opens
    the sentence ("Colors can be disabled ..." → "disable colors") loses its capital; a name keeps it."""
    opening = sentence.tokens[min(indices)]
    if opening.index == 0 and opening.pos != "PROPN" and not opening.code:
        return phrase[:1].lower() + phrase[1:]
    return phrase


def bare(phrase: str) -> str:
    """A noun phrase without its article ("the connect timeout" → "connect timeout")."""
    first, _, rest = phrase.partition(" ")
    return rest if first.lower() in ("the", "a", "an") and rest else phrase


def verb_phrase(sentence: Sentence, verb: Token, complement: bool = False) -> list[int]:
    """What a user names of an action: the verb, its particle and its object (the object's own
    modifiers kept, a relative clause dropped: "add HTTP headers", "log in"), or, without an object,
    its first complement ("connect to the server"). The rest of the sentence is how, where or
    when: the answer, not the question."""
    keep = [verb.index]
    obj = sentence.child(verb.index, "dobj", "attr", "dative")
    for child in sentence.children(verb.index):
        if child.dep == "prt":
            keep.append(child.index)
            # a verb, its particle and its preposition are one verb ("come up with a resolution", "get
            # rid of"): "Is it possible to come up?" cut it (git, development round 8)
            bound = next(
                (c for c in sentence.children(verb.index) if c.dep == "prep" and c.index == child.index + 1), None
            )
            if bound is not None:
                keep.extend(span(sentence, bound.index))
        elif child.dep in ("dobj", "attr", "oprd", "dative", "acomp"):
            keep.extend(object_span(sentence, child))
    for child in sentence.children(verb.index):
        told = (
            verb.lemma in CONTROL_VERBS
            and child.dep == "advcl"
            and child.tag == "VB"
            and any(grandchild.lemma == "to" for grandchild in sentence.children(child.index))
        )  # the parser reads "instruct clone to recurse" as a purpose; it is what clone is told (git, round 12)
        if (
            obj is not None
            and ((child.dep == "prep" and child.lemma == "for") or child.dep in ("xcomp", "ccomp") or told)
            and child.index > obj.index
        ):
            keep.extend(span(sentence, child.index))  # "give a proxy for a specific host", "tell Requests to stop"
            break
    if obj is None or complement:  # what the action is on, or (with ``complement``) where it applies
        after = obj.index if obj is not None else verb.index
        following = next(
            (
                child
                for child in sentence.children(verb.index)
                if child.dep in ("prep", "xcomp", "ccomp")
                and child.index > after
                and child.lemma not in MEANS_PREPOSITIONS
            ),
            None,
        )
        if following is not None and len(range(*sentence.subtree(following.index))) <= 5:
            keep.extend(span(sentence, following.index))
    return sorted(set(keep))


def base_form(verb: Token) -> str:
    """The verb's base form where the tagger, guessing one for a word it does not know, adds an "e" no English
    verb ends in: "deselected" → "deselect", "underspecifying" → "underspecify", "monkeypatching" →
    "monkeypatch", "uninstalling" → "uninstall" (not "deselecte", "underspecifye", "monkeypatche", "uninstalle":
    cmd2, development round 20); and in the spelling documentation writes where the tagger gives a rarer one
    ("Installing MkDocs" → "install", not "instal": mkdocs, round 20)."""
    lemma = verb.lemma
    lemma = lemma[:-1] if len(lemma) > 4 and UNWRITTEN_E.search(lemma) else lemma
    return COMMON_SPELLINGS.get(lemma, lemma)


# Endings no English verb has before a final "e": "-cte", "-tche", "-she", consonant + "ye", a doubled consonant.
UNWRITTEN_E = re.compile(r"(?:ct|tch|sh|[^aeiou]y|([^aeiouy])\1)e$")
# The tagger's lemma of "installing", "enrolled"... is the British single-l verb; "How do I instal it?" reads as a typo.
COMMON_SPELLINGS = {"instal": "install", "enrol": "enroll", "distil": "distill", "fulfil": "fulfill"}


def object_span(sentence: Sentence, head: Token) -> list[int]:
    """A noun's own words and its first "of" phrase ("the use of proxies"), less the rest of what
    hangs on it ("in the presence of environmental proxies", a relative clause)."""
    dropped: set[int] = set()
    first_of = True
    for child in sentence.children(head.index):
        if child.dep == "prep" and child.lemma == "of" and first_of and child.index > head.index:
            first_of = False
            continue
        if child.dep in ("prep", "relcl", "acl", "advcl", "appos", "punct", "cc", "conj"):
            dropped.add(child.index)
    return span(sentence, head.index, without=dropped)


def phrases_after(sentence: Sentence, heads: list[int]) -> list[int]:
    """The prepositional phrases that follow each head, less a role ("as a field option") and a means ("with the
    --force option"), which are what a reply answers with. An object's own phrase narrows what a user asks ("run
    a script [on initialization]", "use several data types [for the CLI options]"); without it a question asks
    what no one doubts, and its reply answers the narrower case (cmd2 and fastapi, development round 28;
    prompted by typer, test half)."""
    return [
        i
        for head in heads
        for child in sentence.children(head)
        if child.dep == "prep" and child.index > head and child.lemma not in ("as", *MEANS_PREPOSITIONS)
        for i in span(sentence, child.index)
    ]


def one_of_a_list(sentence: Sentence, head: Token) -> bool:
    """An object listed beside "other" things ("use primary key and various other relationships"): the sentence
    names it as one example of a kind, and "can I use primary key?" asks what it never said (drf, round 13)."""
    return any(
        child.dep == "conj"
        and any(t.lemma in ("other", "similar", "such") for t in sentence.tokens[slice(*sentence.subtree(child.index))])
        for child in sentence.children(head.index)
    )


def object_topic(sentence: Sentence, verb: Token) -> str | None:
    obj = sentence.child(verb.index, "dobj", "pobj", "attr")
    return noun_phrase(sentence, obj) if obj else None
