import re

import pytest

from benchsmith.tools.chunking import chunk_document, hard_cut
from benchsmith.tools.documents import Document, content_id

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


def test_offsets_point_into_the_document_and_ids_are_content_hashes():
    document = Document("d", "src", "title", "text", prose())
    chunks = chunk_document(document, chunk_size=300, min_chars=0)
    for position, chunk in enumerate(chunks):
        assert document.text[chunk.start : chunk.end] == chunk.text
        assert chunk.id == content_id(chunk.text)
        assert (chunk.position, chunk.doc_id, chunk.title) == (position, "d", "title")


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
