from benchsmith.tools.corpus.quality import DEFAULT_MIN_QUALITY, InformationDensityScorer, information_density

PROSE = (
    "Chroma stores embeddings with their documents and metadata. A query embeds the text with the same "
    "model and returns the nearest neighbours by cosine distance, which the retriever then re-ranks."
)


def test_prose_and_code_pass_the_default_minimum():
    code = 'def add(left, right):\n    """Sum two numbers."""\n    return left + right\n' * 2
    assert information_density(PROSE) > 0.9
    assert information_density(code) >= DEFAULT_MIN_QUALITY


def test_junk_falls_below_the_default_minimum():
    symbols = "| --- | --- | --- |\n| 1.0 | 2.0 | 3.5 |\n" * 10
    repeated = "buy now " * 60
    blob = "QmFzZTY0IGVuY29kZWQgYmxvYiB3aXRoIG5vIHNwYWNlcw" * 5
    for junk in (symbols, repeated, blob, "", "!!! ??? ..."):
        assert information_density(junk) < DEFAULT_MIN_QUALITY, junk[:30]


def test_scorer_scores_each_text_in_order():
    assert InformationDensityScorer().score([PROSE, "buy now " * 60]) == [
        information_density(PROSE),
        information_density("buy now " * 60),
    ]


def precision_and_recall_of_keep(keep: list[str], drop: list[str]) -> tuple[float, float]:
    scorer = InformationDensityScorer()
    kept_good = sum(score >= DEFAULT_MIN_QUALITY for score in scorer.score(keep))
    kept_bad = sum(score >= DEFAULT_MIN_QUALITY for score in scorer.score(drop))
    return kept_good / max(1, kept_good + kept_bad), kept_good / len(keep)


def test_labelled_sample_precision_and_recall_of_keep(capsys):
    """The labelled sample (tests/quality_sample.py): chunks to keep vs option tables,
    ASCII tables, navigation, stubs, licenses and redirect notices."""
    from tests import quality_sample as sample

    calibration = precision_and_recall_of_keep(sample.KEEP, sample.DROP)
    held_out = precision_and_recall_of_keep(sample.HELD_OUT_KEEP, sample.HELD_OUT_DROP)
    with capsys.disabled():
        print(
            f"\nquality sample, calibration ({len(sample.KEEP)} keep, {len(sample.DROP)} drop): precision of keep "
            f"{calibration[0]:.3f}, recall {calibration[1]:.3f}; held out ({len(sample.HELD_OUT_KEEP)} keep, "
            f"{len(sample.HELD_OUT_DROP)} drop): precision {held_out[0]:.3f}, recall {held_out[1]:.3f}"
        )
    assert len(sample.KEEP) + len(sample.DROP) >= 40
    assert min(calibration) >= 0.9 and min(held_out) >= 0.9


def test_each_kind_of_junk_scores_below_the_minimum_and_its_prose_twin_above():
    table = "+------+------+\n| name | size |\n+======+======+\n| a | 1 |\n+------+------+\n| b | 2 |\n+------+------+"
    described = (
        "+------+------------------------------------------------+\n| mean | Arithmetic mean of the data, "
        "the usual average. |\n+------+------------------------------------------------+\n| mode | The "
        "most common value in discrete data. |\n+------+------------------------------------------------+"
    )
    options = "Options:\n-v, --verbose\n-q, --quiet\n-o, --output PATH\n--dry-run\n--help"
    documented_option = (
        "--workers N\n\nHow many processes claim items from the shared database. More workers "
        "finish a large run sooner, but they share one rate limit."
    )
    stub = "Changelog\n\nSee https://example.org/project/blob/main/CHANGELOG.md"
    answer = "Changelog\n\nVersion 2.0 drops Python 3.9 and renames the --llm flag to --model; see the changelog."
    for junk in (table, options, stub):
        assert information_density(junk) < DEFAULT_MIN_QUALITY, junk
    for content in (described, documented_option, answer):
        assert information_density(content) >= DEFAULT_MIN_QUALITY, content


def test_the_stdlib_corpus_keeps_nearly_every_chunk(capsys):
    from benchsmith.tools.corpus.chunking import chunk_document
    from benchsmith.tools.corpus.cleaning import clean_documents
    from tests.stdlib_corpus import stdlib_documents

    chunks = [chunk for document in clean_documents(list(stdlib_documents())) for chunk in chunk_document(document)]
    filtered = [
        chunk
        for chunk, score in zip(chunks, InformationDensityScorer().score([c.text for c in chunks]))
        if score < DEFAULT_MIN_QUALITY
    ]
    with capsys.disabled():
        print(
            f"\nstdlib: {len(filtered)} of {len(chunks)} chunks below {DEFAULT_MIN_QUALITY}: "
            + ", ".join(sorted({chunk.title for chunk in filtered}))
        )
    assert len(chunks) > 1000 and len(filtered) <= 0.005 * len(chunks)
