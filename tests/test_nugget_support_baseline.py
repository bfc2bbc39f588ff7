"""The offline nugget pipeline on documentation (tests/sphinx_fixtures.py's Harbour tree and its
settings pages): the corpus chunker opens sections at their RST titles, the offline support
judge credits a nugget to the few chunks that state it, and the extractive writer keeps the key
sentence before a code block."""

from __future__ import annotations

import pytest

from benchsmith.agents.nuggets import NuggetWriter, SupportJudge
from benchsmith.agents.text import PassageStatistics
from benchsmith.tools.corpus.chunking import is_adornment
from benchsmith.tools.corpus.source_corpus import build_source_corpus
from tests.sphinx_fixtures import write_build_files, write_settings_pages, write_sphinx_tree


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("docs")
    write_sphinx_tree(root), write_settings_pages(root), write_build_files(root)
    return build_source_corpus([str(root)], chunk_size=300, min_chars=40)


def support(corpus, nuggets: list[str]) -> list[list[str]]:
    """For each nugget, the ids of the corpus chunks the offline judge says support it."""
    chunks = [{"title": chunk.title, "text": chunk.text} for chunk in corpus.chunks]
    statistics = PassageStatistics(f"{chunk['title']} {chunk['text']}" for chunk in chunks)
    verdict = SupportJudge(len(chunks), len(nuggets)).baseline(nuggets=nuggets, chunks=chunks, statistics=statistics)
    return [
        [corpus.chunks[judgment.chunk - 1].id for judgment in verdict.judgments if number in judgment.supported_nuggets]
        for number in range(1, len(nuggets) + 1)
    ]


def test_chunks_open_at_their_titles_without_adornments_and_build_files_are_not_chunks(corpus):
    assert {chunk.path for chunk in corpus.chunks}.isdisjoint({"conf.py", "setup.py", "noxfile.py"})
    # The corpus is the cleaned text ingestion chunks: RST over- and underlines are gone, and a
    # section's chunk opens at its title, with the title's heading path.
    assert not [
        chunk.id
        for chunk in corpus.chunks
        if any(is_adornment(line) and not line.startswith("```") for line in chunk.text.split("\n"))
    ]
    for title in ("Configuration file", "Network timeouts", "Sections", "Installation"):
        assert any(chunk.text.startswith(f"{title}\n") and chunk.title.endswith(title) for chunk in corpus.chunks), (
            title
        )


def test_support_needs_the_key_terms_not_shared_common_words(corpus):
    timeout, ferry, installer, common = support(
        corpus,
        [
            "The default value of the feed_timeout setting in the configuration file is 30 seconds.",
            "The ferry window sets how many minutes before high water a crossing may depart.",
            "The installer verifies the checksum of each wheel it downloads.",
            "Harbour reads the file and the setting.",
        ],
    )
    # The timeout nugget shares "setting", "configuration", "file", "default", "value" with the
    # configuration page, but only the timeouts page names feed_timeout and 30 seconds.
    assert [chunk_id.split(":")[0] for chunk_id in timeout] == ["timeouts.rst"]
    assert [chunk_id.split(":")[0] for chunk_id in ferry] == ["options.rst"]
    assert [chunk_id.split(":")[0] for chunk_id in installer] == ["install.rst"]
    assert len(common) <= 2  # common words alone are not support


def test_every_fixture_sentence_is_supported_by_its_own_chunk_and_few_others(corpus):
    sentences = [
        "Cranes on the north quay lift containers of up to thirty tonnes.",
        "An environment variable overrides the value of the same setting in the configuration file.",
        "The WheelCache keeps each built wheel for 14 days before it is removed.",
        "Spring tides bring the largest range, neap tides the smallest.",
        "Stale issues receive a reminder label after thirty days without a reply.",
    ]
    for sentence, supporters in zip(sentences, support(corpus, sentences)):
        own = [chunk.id for chunk in corpus.chunks if sentence in chunk.text]
        assert own and set(own) <= set(supporters) and len(supporters) <= 2, (sentence, supporters)


def test_extractive_nuggets_keep_the_key_sentence_before_a_code_block():
    answer = (
        "Set feed_timeout in the network section of harbour.toml:\n\n"
        "```toml\n[network]\nfeed_timeout = 45\n```\n\n"
        "Harbour retries the gauge feed after the timeout. For example:\n\n```python\nharbour.poll()\n```\n"
    )
    nuggets = NuggetWriter().baseline(question="How do I raise the feed timeout?", answer=answer).nuggets
    assert nuggets == [
        "Set feed_timeout in the network section of harbour.toml.",
        "Harbour retries the gauge feed after the timeout.",
    ]
