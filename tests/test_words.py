"""The one tokenizer, stopword lists, stemmer and content words (benchsmith/words.py)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from benchsmith.words import MEASURE_STOPWORDS, STOPWORDS, content_words, english_stemmer, stems, words


def test_words_are_lower_cased_runs_of_letters_digits_and_underscores():
    assert words("Use `functools.lru_cache`: it's 2x faster!") == [
        "use",
        "functools",
        "lru_cache",
        "it",
        "s",
        "2x",
        "faster",
    ]
    assert words("Straße, naïve café; 東京") == ["straße", "naïve", "café", "東京"]
    assert words(" -- ") == []


def test_content_words_drop_short_words_and_stopwords_and_keep_order_and_repeats():
    assert content_words("How do I parse the JSON file and parse it again?") == [
        "parse",
        "json",
        "file",
        "parse",
        "again",
    ]


def test_the_measures_keep_the_pronouns_and_modals_the_agents_drop():
    question = "Whose settings must our parser read?"
    assert content_words(question) == ["settings", "parser", "read"]
    assert content_words(question, MEASURE_STOPWORDS) == ["whose", "settings", "must", "our", "parser", "read"]
    assert MEASURE_STOPWORDS < STOPWORDS


def test_stems_are_snowball_english():
    assert stems(["returns", "returned", "returning", "parsing", "connections"]) == [
        "return",
        "return",
        "return",
        "pars",
        "connect",
    ]


def test_each_thread_stems_with_its_own_stemmer_and_all_agree():
    vocabulary = [
        f"{root}{suffix}"
        for root in ("connect", "parse", "index", "retriev", "happi", "generaliz")
        for suffix in ("", "s", "ing", "ed", "ation", "ness", "ers")
    ] * 50
    expected = stems(vocabulary)
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda _: stems(vocabulary), range(64)))
    assert all(result == expected for result in results)

    barrier = threading.Barrier(4)

    def stemmer_of_this_thread(_: int) -> object:
        barrier.wait(timeout=10)  # four threads at once: none is reused for another call
        return english_stemmer()

    with ThreadPoolExecutor(max_workers=4) as pool:
        stemmers = list(pool.map(stemmer_of_this_thread, range(4)))
    assert len({id(stemmer) for stemmer in stemmers}) == 4
    assert english_stemmer() is english_stemmer()
