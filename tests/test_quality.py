from benchsmith.tools.quality import DEFAULT_MIN_QUALITY, InformationDensityScorer, information_density

PROSE = ("Chroma stores embeddings with their documents and metadata. A query embeds the text with the same "
         "model and returns the nearest neighbours by cosine distance, which the retriever then re-ranks.")


def test_prose_and_code_pass_the_default_minimum():
    code = "def add(left, right):\n    \"\"\"Sum two numbers.\"\"\"\n    return left + right\n" * 2
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
        information_density(PROSE), information_density("buy now " * 60)]
