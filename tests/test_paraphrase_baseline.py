"""The offline paraphraser and context restorer on documentation-style turns (the questions a
reader of tests/sphinx_fixtures.py's Harbour tree asks): no text damage, no dropped objects."""

from __future__ import annotations

import re

import pytest

from benchsmith.agents.paraphraser import PREFIX_LEAD_INS, baseline_paraphrases, restore_context

# (previous question, raw turn, self-contained rewrite): the rewrite names what the raw turn
# leaves implicit, as a conversational benchmark's rewrite does.
TURNS = [
    (
        "What does the installer verify?",
        "How does it handle a network-related failure?",
        "How does the installer handle a network-related failure?",
    ),
    (
        "What is the installer's mirror directory?",
        "Why must it be writable?",
        "Why must the installer's mirror directory be writable?",
    ),
    (
        "What does PEP 517 define?",
        "Does it define the build backend's hooks?",
        "Does PEP 517 define the build backend's hooks?",
    ),
    (
        "How does the tide predictor work?",
        "Why doesn't it model storm surges?",
        "Why doesn't the tide predictor model storm surges?",
    ),
    (
        "What is the ferry window?",
        "How do I change it, and what's its default?",
        "How do I change the ferry window, and what's the ferry window's default?",
    ),
    (
        "How do I know which buoy to book?",
        "What load rating does it carry?",
        "What load rating does a mooring buoy carry?",
    ),
    ("Which options does Harbour read?", "What does tide_source mean?", "What does the tide_source option mean?"),
    ("Where are wheels stored?", "Can I install them offline?", "Can I install Harbour wheels offline?"),
]
# Damage seen on real trees: a space inside a contraction or after a hyphen ("I' d", "network-
# related" → "network- related"), a pronoun put after "to" ("I'd like to it"), a verb's object
# swallowed with its verb ("does it?" for "does PEP 517 define the backend?").
SPLIT_WORD = re.compile(r"\w['’] \w|\w- \w|\w -\w|\s['’]s\b")
DANGLING = re.compile(r"\bto (it|its)\b|\b(it|its) (the|a|an)\b|\bthe (it|its)\b", re.I)
LOWERED_ACRONYM = re.compile(r"\b[a-z][A-Z]{2,}")


def variants_and_turns():
    for previous, raw, rewrite in TURNS:
        for variant in baseline_paraphrases(rewrite, 6):
            yield rewrite, variant, restore_context(variant, [(previous, "")], raw, rewrite)


def test_no_variant_or_restored_turn_splits_a_word_or_drops_an_object():
    checked = 0
    for _rewrite, variant, turn in variants_and_turns():
        for text in (variant, turn):
            assert not SPLIT_WORD.search(text), text
            assert not DANGLING.search(text), text
            assert not LOWERED_ACRONYM.search(text), text
        # The restorer replaces one run of words by a pronoun and keeps every other word as written.
        lead = next((lead for lead in PREFIX_LEAD_INS if variant.lower().startswith(lead)), "")
        assert turn.lower().startswith(lead), (variant, turn)
        if turn != variant:
            # One phrase was replaced by a pronoun or left out; what follows it is kept as written.
            suffix = 0
            while suffix < min(len(turn), len(variant)) and turn[-1 - suffix] == variant[-1 - suffix]:
                suffix += 1
            changed = turn[: len(turn) - suffix]
            assert variant.startswith(changed[: max(0, len(lead))]), (variant, turn)
            assert re.search(r"\b(it|its|It|Its)\W*$", changed) or len(turn) < len(variant), (variant, turn)
            if not re.search(r"\b(it|its)\W*$", turn, re.I):
                assert suffix > 1, f"the object after the pronoun was dropped: {turn}"
        checked += 1
    assert checked == 6 * len(TURNS)


@pytest.mark.parametrize(
    ("raw", "rewrite", "expected"),
    [
        ("Does it define the hooks?", "Does PEP 517 define the hooks?", "Does it define the hooks?"),
        (
            "How does it handle a network-related failure?",
            "How does the installer handle a network-related failure?",
            "How does it handle a network-related failure?",
        ),
        (
            "Why must the mirror directory be writable?",
            "Why must the installer's mirror directory be writable?",
            "Why must its mirror directory be writable?",
        ),
        # Context words that modify a noun the turn names are left out, never replaced inside the phrase
        # ("Three it stadium", "angel it rounds").
        ("What happened to the stadium?", "What happened to Three Rivers stadium?", "What happened to the stadium?"),
        (
            "Tell me more about angel rounds.",
            "Tell me more about angel investment rounds.",
            "Tell me more about angel rounds.",
        ),
        ("What makes a good location?", "What makes a good food truck location?", "What makes a good location?"),
        # A verb stays: "how is food tested" → "how is it tested", not "how is it".
        (
            "How is testing done for contamination?",
            "How is food tested for GMO contamination?",
            "How is it tested for GMO contamination?",
        ),
        ("How do I stop it from hurting?", "How do I stop my shoulder from hurting?", "How do I stop it from hurting?"),
        (
            "Is the other fat good for you?",
            "What are the benefits of unsaturated fats?",
            "What are the benefits of the fats?",
        ),
    ],
)
def test_the_pronoun_replaces_the_noun_phrase_only(raw, rewrite, expected):
    assert restore_context(rewrite, [("earlier question", "")], raw, rewrite) == expected


def test_prefixed_forms_keep_their_lead_in_when_its_words_are_context():
    # "know" is a context word (the previous question used it): the lead-in is not touched.
    turn = restore_context(
        "I'd like to know: how does the mirror work?",
        [("How do I know the mirror is used?", "")],
        "How does it work?",
        "How does the mirror work?",
    )
    assert turn == "I'd like to know: how does it work?"


def test_lead_ins_only_go_before_a_single_question():
    for query in ("Tell me about the tide tables.", "OK, thanks. What is the ferry window?"):
        assert not any(
            variant.lower().startswith(lead) for variant in baseline_paraphrases(query, 6) for lead in PREFIX_LEAD_INS
        ), query


def test_acronyms_keep_their_case_and_only_whole_questions_swap():
    variants = baseline_paraphrases("PEP 517 defines which hooks, and where is the build backend named?", 6)
    assert variants
    assert all("pEP" not in variant for variant in variants)
    assert any(variant.startswith("Where is the build backend named, and PEP 517 defines") for variant in variants)
    # "A and B" inside one question is a noun phrase: never reordered.
    variants = baseline_paraphrases("What is the difference between wheels and sdists?", 6)
    assert variants
    assert all("sdists and" not in variant.lower() for variant in variants)
