import re

import pytest

from benchsmith.tools.corpus.chunking import chunk_document, hard_cut
from benchsmith.tools.corpus.documents import Document, span_id

WORDS = re.compile(r"\S+")


def prose(paragraphs: int = 12) -> str:
    sentence = "The retriever ranks passages by cosine similarity between query and passage vectors. "
    return "\n\n".join(" ".join([sentence] * (3 + i % 5)) + f"Paragraph {i} ends here." for i in range(paragraphs))


def words_of(text: str) -> list[str]:
    return WORDS.findall(text)


@pytest.mark.parametrize("chunk_size", [120, 300, 1024])
def test_no_chunk_over_limit_and_no_word_split(chunk_size):
    document = Document("d", "src", "title", "text", prose())
    chunks = chunk_document(document, chunk_size=chunk_size, min_chars=0)
    assert chunks
    assert max(len(c.text) for c in chunks) <= chunk_size
    # Concatenating the chunks' words gives back the document's words: no word was cut.
    assert [w for c in chunks for w in words_of(c.text)] == words_of(document.text)


def test_paragraph_boundaries_are_preferred():
    paragraphs = [f"Topic {i}. " + "Some words about it. " * 10 for i in range(4)]
    document = Document("d", "src", "t", "text", "\n\n".join(p.strip() for p in paragraphs))
    chunks = chunk_document(document, chunk_size=len(paragraphs[0]) + 5, min_chars=0)
    assert [c.text for c in chunks] == [p.strip() for p in paragraphs]


def test_sentence_punctuation_splits_before_spaces():
    text = " ".join(f"Sentence number {i} says something short." for i in range(40))
    chunks = chunk_document(Document("d", "s", "t", "text", text), chunk_size=200, min_chars=0)
    assert chunks
    assert all(c.text.endswith(".") for c in chunks)


def test_cjk_full_stops_and_commas():
    text = "这是第一句话，内容比较长。" * 30
    chunks = chunk_document(Document("d", "s", "t", "text", text), chunk_size=50, min_chars=0)
    assert max(len(c.text) for c in chunks) <= 50
    assert all(c.text.endswith(("。", "，")) for c in chunks)
    assert "".join(c.text for c in chunks) == text


def test_code_splits_on_definitions():
    functions = [f"def function_{i}(x):\n    total = x + {i}\n    return total * 2\n" for i in range(10)]
    code = "import os\n\n\n" + "\n\n".join(functions)
    chunks = chunk_document(Document("m.py", "m.py", "m.py", "python", code), chunk_size=80, min_chars=0)
    assert max(len(c.text) for c in chunks) <= 80
    # Every function lands whole in one chunk: the splits fell on definition boundaries.
    for function in functions:
        assert sum(function.strip() in c.text for c in chunks) == 1


def test_offsets_point_into_the_document_and_ids_are_its_path_and_byte_span():
    text = "Café. " + prose()  # one two-byte character: byte offsets run one ahead of character offsets
    document = Document("docs/a b.txt", "src", "title", "text", text)
    chunks = chunk_document(document, chunk_size=300, min_chars=0)
    for position, chunk in enumerate(chunks):
        assert document.text[chunk.start : chunk.end] == chunk.text
        byte_start = len(text[: chunk.start].encode("utf-8"))
        assert chunk.id == f"docs/a%20b.txt:{byte_start}-{byte_start + len(chunk.text.encode('utf-8'))}"
        assert (chunk.position, chunk.doc_id, chunk.title) == (position, "docs/a b.txt", "title")
    assert chunks[1].id == span_id("docs/a b.txt", chunks[1].start + 1, chunks[1].end + 1)
    assert [chunk.id for chunk in chunk_document(document, chunk_size=300, min_chars=0)] == [
        chunk.id for chunk in chunks
    ]  # the same document always gives the same ids


def test_a_beir_passage_that_is_one_chunk_keeps_its_id_and_a_split_one_gets_spans():
    passage = Document("doc-7", "corpus.jsonl", "T", "beir", "  " + prose(1) + "\n")
    assert [chunk.id for chunk in chunk_document(passage, chunk_size=1024, min_chars=0)] == ["doc-7"]
    split = chunk_document(passage, chunk_size=120, min_chars=0)
    assert len(split) > 1 and all(chunk.id.startswith("doc-7:") for chunk in split)


def test_a_whole_document_is_one_chunk_without_its_surrounding_whitespace():
    (chunk,) = chunk_document(Document("a.txt", "src", "A", "text", "\n  " + prose() + "\n\n"), None)
    assert chunk.text == prose() and chunk.id == f"a.txt:3-{3 + len(prose())}"


def test_short_chunks_are_dropped():
    paragraph = ("A paragraph long enough to keep, with several words in it. " * 4)[:195]
    chunks = chunk_document(Document("d", "s", "t", "text", "Tiny.\n\n" + paragraph), chunk_size=200, min_chars=50)
    assert [c.text.startswith("A paragraph") for c in chunks] == [True]


def test_a_token_longer_than_the_limit_is_the_only_hard_cut():
    blob = "x" * 250
    chunks = chunk_document(Document("d", "s", "t", "text", f"before {blob} after"), chunk_size=100, min_chars=0)
    assert max(len(c.text) for c in chunks) <= 100
    assert "".join(c.text.replace(" ", "") for c in chunks) == f"before{blob}after"
    assert hard_cut("aaa bbb ccc", 7) == ["aaa bbb", "ccc"]


def marked_page() -> Document:
    from benchsmith.tools.corpus.cleaning import clean_document

    markdown = (
        "# Guide\n\n## Install\n\n" + "Install it with pip in a fresh virtual environment. " * 3 + "\n\n"
        "## Options\n\n--verbose\n--quiet\n\n### Advanced\n\n" + "Tune the batch size for your machine. " * 3
    )
    return clean_document(Document("guide.md", "/docs/guide.md", "guide", "markdown", markdown))


def test_chunks_of_a_page_do_not_cross_headings_and_titles_are_heading_paths():
    document = marked_page()
    chunks = chunk_document(document, chunk_size=1000, min_chars=0)  # the whole page would fit in one chunk
    assert [(chunk.title, chunk.text.split("\n")[0]) for chunk in chunks] == [
        ("Guide › Install", "Guide"),  # a heading with nothing under it joins the next section
        ("Guide › Options", "Options"),
        ("Guide › Options › Advanced", "Advanced"),
    ]
    assert chunks[1].text == "Options\n\n--verbose\n--quiet"  # the option list is not glued to the prose above
    for chunk in chunks:
        assert document.text[chunk.start : chunk.end] == chunk.text and chunk.id == span_id(
            "guide.md", chunk.start, chunk.end
        )  # ASCII: bytes are characters
        assert chunk.source == "/docs/guide.md"


def test_a_section_shorter_than_min_chars_joins_the_next():
    chunks = chunk_document(marked_page(), chunk_size=1000, min_chars=40)
    assert [chunk.title for chunk in chunks] == ["Guide › Install", "Guide › Options"]
    assert chunks[1].text.startswith("Options\n\n--verbose\n--quiet\n\nAdvanced\n\nTune")


def test_a_chunk_that_starts_mid_section_is_titled_by_the_headings_above():
    document = marked_page()
    chunks = chunk_document(document, chunk_size=80, min_chars=0)
    continued = [chunk for chunk in chunks if chunk.text.startswith("Install it with pip")]
    assert len(continued) > 1 and {chunk.title for chunk in continued} == {"Guide › Install"}


def test_python_chunks_are_titled_module_and_definition():
    from benchsmith.tools.corpus.cleaning import clean_document

    code = (
        '"""Tools."""\n\nimport os\n\n\nclass Store:\n    """A store."""\n\n    def add(self, item):\n'
        "        return item\n\n    limit = 10\n\n\ndef helper(x):\n    return x * 2\n\n\nCONSTANT = 1\n"
    )
    document = clean_document(Document("pkg/store.py", "/src/pkg/store.py", "pkg.store", "python", code))
    chunks = chunk_document(document, chunk_size=40, min_chars=0)
    titles = {chunk.text.split("\n")[0].strip(): chunk.title for chunk in chunks}
    assert titles['"""Tools."""'] == "pkg.store"
    assert titles["class Store:"] == "pkg.store › Store"
    assert titles["def add(self, item):"] == "pkg.store › Store.add"
    assert titles["limit = 10"] == "pkg.store › Store"  # after the method, back in its class
    assert titles["def helper(x):"] == "pkg.store › helper"
    assert titles["CONSTANT = 1"] == "pkg.store"
    assert "".join(chunk.text for chunk in chunks).replace("\n", "").replace(" ", "") == document.text.replace(
        "\n", ""
    ).replace(" ", "")


@pytest.mark.parametrize("chunk_size", [60, 120, 400])
def test_no_chunk_splits_a_title_from_its_underline(chunk_size):
    from benchsmith.tools.corpus.chunking import is_adornment

    text = (
        "Cargo handling\n==============\n\n"
        + "Cranes on the north quay lift containers of thirty tonnes. " * 3
        + "\n\nReefers\n-------\n\nRefrigerated containers draw shore power from the sockets.\n"
    )
    headings = [[0, 1, "Cargo handling"], [text.index("Reefers"), 2, "Reefers"]]
    document = Document("cargo.rst", "cargo.rst", "cargo", "rst", text, headings)
    chunks = chunk_document(document, chunk_size=chunk_size, min_chars=0)
    for chunk in chunks:
        lines = chunk.text.split("\n")
        assert not is_adornment(lines[0]), chunk.text
        assert not (len(lines) == 1 and lines[0] in ("Cargo handling", "Reefers")), chunk.text
    assert "Cargo handling\n==============" in chunks[0].text
    assert any("Reefers\n-------" in chunk.text for chunk in chunks)
    assert chunks[-1].title == "Cargo handling › Reefers"
