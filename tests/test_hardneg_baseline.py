"""The offline hard-negative agents on documentation (tests/sphinx_fixtures.py's Harbour tree and
its settings pages): swaps to words of the same kind, conditions without list markers, queries
that keep acronyms."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from benchsmith.agents.condition_extractor import ConditionExtractor
from benchsmith.agents.condition_queries import ConditionQueryWriter
from benchsmith.agents.condition_text import name_kind, names, split_sentences, swap_candidates
from benchsmith.agents.negative_rewriter import NegativeRewriter
from benchsmith.tools.benchmark.condition_documents import RelatedDocuments
from benchsmith.tools.corpus.cleaning import clean_documents
from benchsmith.tools.corpus.loaders import load_sources
from benchsmith.words import STOPWORDS
from tests.sphinx_fixtures import write_build_files, write_settings_pages, write_sphinx_tree

LIST_NUMBER_AT_END = re.compile(r"[.!?:;]\s+\d{1,3}[.)]?$")
LIST_MARKER_AT_START = re.compile(r"^(\d{1,3}[.)]|[-*+•])\s")


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """Conditions, negatives and descriptive queries of every fixture page, as the graph makes them."""
    root = tmp_path_factory.mktemp("docs")
    write_sphinx_tree(root), write_settings_pages(root), write_build_files(root)
    documents = clean_documents(load_sources([str(root)]).documents)
    texts = {document.id: document.text for document in documents}
    related = RelatedDocuments(texts)
    rows = []
    for document in documents:
        others = [texts[other] for other in related.of(document.id)]
        sentences = ConditionExtractor().baseline(document=document.text, count=3, related=others).sentences
        if not sentences:
            continue
        queries = ConditionQueryWriter(len(sentences)).baseline(sentences=sentences, domain="custom")
        negatives = [
            NegativeRewriter().baseline(sentence=sentence, kind="subtle", document=document.text, related=others)
            for sentence in sentences
        ]
        rows.append((document.id, sentences, queries, negatives))
    return rows


def test_negatives_swap_within_a_kind_and_never_to_a_stopword(generated):
    swaps = [negative.change for _, _, _, negatives in generated for negative in negatives]
    assert len(swaps) >= 15
    for _, sentences, _, negatives in generated:
        for sentence, negative in zip(sentences, negatives):
            assert negative.sentence != " ".join(sentence.split()), negative.change
            if negative.change.startswith("name"):
                old, new = re.findall(r"'([^']+)'", negative.change)
                assert new.lower() not in STOPWORDS and name_kind(new) == name_kind(old), negative.change
            # "is read" → "is written": a participle stays a participle.
            assert not re.search(r"\b(is|are|was|were) write\b", negative.sentence), negative.sentence
    names_swapped = [change for change in swaps if change.startswith("name")]
    assert any(
        "'GaugeClient' → 'PluginBuilder'" in change or "'PluginBuilder' → " in change for change in names_swapped
    )


def test_conditions_carry_no_list_markers_and_queries_keep_acronyms(generated):
    backend = next(row for row in generated if row[0] == "build-backend.md")
    assert any("PluginBuilder creates a fresh environment" in sentence for sentence in backend[1])
    for _, sentences, queries, _ in generated:
        for sentence, condition in zip(sentences, queries.conditions):
            for text in (sentence, condition):
                assert not LIST_NUMBER_AT_END.search(text) and not LIST_MARKER_AT_START.match(text), text
                assert text.split()[0].lower() not in ("see", "use"), text  # an instruction states no fact
        for query in queries.descriptive:
            assert not re.search(r"\b[a-z][A-Z]{2,}\b", query), query  # "pEP 517"
    assert any("where PEP 517" in query or "as PEP 517" in query for query in backend[2].descriptive)


def test_stray_list_numbers_are_not_sentences_nor_swapped():
    text = "Install the wheel into the mirror directory first. 2\n\n1. The builder reads 4 files.\n2. Then it stops."
    sentences = split_sentences(text)
    assert sentences == [
        "Install the wheel into the mirror directory first.",
        "The builder reads 4 files.",
        "Then it stops.",
    ]
    assert [swap.old for swap in swap_candidates("Install the wheel into the mirror directory first. 2")] == ["first"]


def test_names_are_not_stopwords_nor_capitalized_common_words():
    text = (
        "The options are listed below. Read the file (As described in Configuration) before you edit it.\n\n"
        "The configuration is read at start. The BestCandidateResult holds Lisbon."
    )
    found = names(text)
    assert "As" not in found and "Configuration" not in found
    assert {"BestCandidateResult", "Lisbon"} <= set(found)


def test_name_replacements_are_spread_over_the_pool_and_of_the_same_kind():
    pool_page = "The GaugeClient, the PluginBuilder, the WheelCache, the TideModel and the FerryPlanner cooperate."
    classes = [
        "BestCandidateResult",
        "PortRegistry",
        "BuoyLedger",
        "SlotPlanner",
        "CraneRoster",
        "ReeferSocket",
        "SwellForecast",
        "MirrorIndex",
        "QuayMap",
    ]
    replacements = Counter()
    for name in classes:
        sentence = f"The {name} object is created for every crossing of the harbour."
        swap = next(swap for swap in swap_candidates(sentence, sentence, [pool_page]) if swap.kind == "name")
        assert name_kind(swap.new) == "identifier" and swap.new in pool_page
        replacements[swap.new] += 1
    assert len(replacements) >= 3 and max(replacements.values()) <= 4
