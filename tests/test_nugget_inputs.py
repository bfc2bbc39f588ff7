"""What a nugget benchmark reads: question-answer pairs from JSONL and from a Stack Exchange
Posts.xml dump the test writes, nugget qrels, and a corpus of chunks named by path and byte span."""

import json
from pathlib import Path

import pytest

from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.nugget_qrels import read_nugget_qrels, write_nugget_qrels
from benchsmith.stores.formats.qa_pairs import read_qa_jsonl
from benchsmith.stores.formats.stackexchange import parse_tags, read_posts_xml
from benchsmith.tools.corpus.cleaning import clean_documents
from benchsmith.tools.corpus.documents import Document, span_id
from benchsmith.tools.corpus.loaders import load_sources
from benchsmith.tools.corpus.source_corpus import build_source_corpus, document_chunks
from benchsmith.tools.text.qa_text import html_to_text_with_code, load_qa_pairs

# ---------------------------------------------------------------------------------------
# Posts.xml

QUESTION_BODY = (
    "<p>I call <code>json.dumps(data)</code> and get one long line:</p>\n"
    "<pre><code>import json\nif True:\n    print(json.dumps({&quot;b&quot;: 1, &quot;a&quot;: [1, 2]}))\n"
    "</code></pre>\n<p>How do I &lt;indent&gt; it?</p>"
)
ANSWER_BODY = (
    "<p>Pass <code>indent</code>:</p>\n<pre><code>json.dumps(data, indent=4)\n</code></pre>\n"
    "<ul><li>sorted keys: <code>sort_keys=True</code></li><li>compact: separators</li></ul>"
)


def row(**attributes: str) -> str:
    from xml.sax.saxutils import quoteattr

    return "  <row " + " ".join(f"{name}={quoteattr(value)}" for name, value in attributes.items()) + " />"


def write_posts(path: Path) -> Path:
    rows = [
        # 10: accepted answer 12, tags in the old <a><b> form
        row(
            Id="10",
            PostTypeId="1",
            AcceptedAnswerId="12",
            Title="Pretty-print JSON &amp; sort keys?",
            Body=QUESTION_BODY,
            Tags="<python><json>",
        ),
        row(Id="11", PostTypeId="2", ParentId="10", Body="<p>Not this one.</p>"),
        row(Id="12", PostTypeId="2", ParentId="10", Body=ANSWER_BODY),
        # 20: no accepted answer
        row(Id="20", PostTypeId="1", Title="Unanswered", Body="<p>?</p>", Tags="|python|"),
        # 30: accepted answer comes before the question in the file; new |a|b| tags
        row(Id="31", PostTypeId="2", ParentId="30", Body="<p>Use <code>pathlib.Path.rglob</code>.</p>"),
        row(
            Id="30",
            PostTypeId="1",
            AcceptedAnswerId="31",
            Title="Find files recursively",
            Body="<p>All .py files?</p>",
            Tags="|python|pathlib|",
        ),
        # 40: accepted answer missing from the dump
        row(Id="40", PostTypeId="1", AcceptedAnswerId="99", Title="Lost answer", Body="<p>x</p>", Tags="<python>"),
        # 50: another tag only
        row(Id="50", PostTypeId="1", AcceptedAnswerId="51", Title="Rust question", Body="<p>y</p>", Tags="<rust>"),
        row(Id="51", PostTypeId="2", ParentId="50", Body="<p>z</p>"),
    ]
    path.write_text(
        '<?xml version="1.0" encoding="utf-8"?>\n<posts>\n' + "\n".join(rows) + "\n</posts>\n", encoding="utf-8"
    )
    return path


def test_posts_xml_keeps_questions_with_an_accepted_answer_in_the_dump_and_joins_them_by_id(tmp_path):
    imported = read_posts_xml(write_posts(tmp_path / "Posts.xml"))
    assert [question.id for question in imported.questions] == ["10", "30", "50"]
    assert imported.questions_read == 5
    assert imported.skipped == [("40", "accepted answer 99 is not in Posts.xml")]
    first = imported.questions[0]
    assert first.answer_id == "12" and "indent" in first.answer_html and "Not this one" not in first.answer_html
    assert first.tags == ["python", "json"]
    assert imported.questions[1].tags == ["python", "pathlib"]


def test_posts_xml_tag_filter_keeps_questions_with_any_wanted_tag(tmp_path):
    path = write_posts(tmp_path / "Posts.xml")
    assert [q.id for q in read_posts_xml(path, ["pathlib"]).questions] == ["30"]
    assert [q.id for q in read_posts_xml(path, ["JSON", "rust"]).questions] == ["10", "50"]
    assert parse_tags("<c#><.net>") == ["c#", ".net"] and parse_tags("|c#|.net|") == ["c#", ".net"]


def test_posts_become_text_with_code_blocks_kept_as_code(tmp_path):
    pairs = load_qa_pairs(write_posts(tmp_path / "Posts.xml"), ["json"])
    assert pairs.source_format == "posts-xml" and len(pairs.pairs) == 1
    pair = pairs.pairs[0]
    assert pair.question.startswith("Pretty-print JSON & sort keys?\n\n")
    # The code block keeps its lines and indentation, fenced; inline code is backticked; entities decoded.
    assert '```\nimport json\nif True:\n    print(json.dumps({"b": 1, "a": [1, 2]}))\n```' in pair.question
    assert "I call `json.dumps(data)` and get one long line:" in pair.question
    assert "How do I <indent> it?" in pair.question
    assert pair.answer == (
        "Pass `indent`:\n\n```\njson.dumps(data, indent=4)\n```\n\n"
        "- sorted keys: `sort_keys=True`\n- compact: separators"
    )


def test_html_to_text_drops_scripts_and_keeps_paragraphs_apart():
    text = html_to_text_with_code("<p>one   two</p><script>alert(1)</script><p>three<br>four</p>")
    assert text == "one two\n\nthree\n\nfour"


@pytest.mark.parametrize(
    "content, message",
    [
        ("<posts><row Id='1' PostTypeId='1' AcceptedAnswerId='2'", "Posts.xml:1: malformed XML"),
        ("<posts>\n<row PostTypeId='1' />\n</posts>", "Posts.xml:2: a row without a valid Id"),
        ('<!DOCTYPE posts [<!ENTITY x "y">]>\n<posts></posts>', "document type declaration is not allowed"),
    ],
)
def test_bad_posts_xml_is_refused_with_file_and_line(tmp_path, content, message):
    path = tmp_path / "Posts.xml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        read_posts_xml(path)


# ---------------------------------------------------------------------------------------
# JSONL


def test_jsonl_pairs_and_their_errors_name_the_file_and_line(tmp_path):
    path = tmp_path / "qa.jsonl"
    path.write_text(json.dumps({"id": 7, "question": " Q? ", "answer": "A.", "tags": ["x"]}) + "\n", encoding="utf-8")
    assert [(p.id, p.question, p.answer, p.tags) for p in read_qa_jsonl(path)] == [("7", "Q?", "A.", ["x"])]
    for line, message in [
        ({"question": "Q", "answer": "A"}, "qa.jsonl:2: missing 'id'"),
        ({"id": "a b", "question": "Q", "answer": "A"}, "qa.jsonl:2: id 'a b' must .* no whitespace"),
        ({"id": "7", "question": "Q", "answer": "A"}, "qa.jsonl:2: id '7' repeats line 1"),
        ({"id": "8", "question": "Q", "answer": " "}, "qa.jsonl:2: missing or empty 'answer'"),
    ]:
        bad = tmp_path / "bad" / "qa.jsonl"
        bad.parent.mkdir(exist_ok=True)
        bad.write_text(path.read_text() + json.dumps(line) + "\n", encoding="utf-8")
        with pytest.raises(InputError, match=message):
            read_qa_jsonl(bad)


# ---------------------------------------------------------------------------------------
# Nugget qrels


def test_nugget_qrels_round_trip_and_refuse_ordinary_qrels(tmp_path):
    path = tmp_path / "nuggets.trec"
    write_nugget_qrels(path, [("q1", "q1_1", "a.py:0-10", 1), ("q1", "q1_10", "a.py:0-10", 0)])
    assert path.read_text() == "q1 q1_1 a.py:0-10 1\nq1 q1_10 a.py:0-10 0\n"
    assert read_nugget_qrels(path) == {"q1": {"q1_1": {"a.py:0-10": 1}, "q1_10": {"a.py:0-10": 0}}}
    ordinary = tmp_path / "qrels.trec"
    ordinary.write_text("q1 0 d1 1\nq2 0 d2 1\n")
    with pytest.raises(InputError, match="look like ordinary qrels"):
        read_nugget_qrels(ordinary)
    bad = tmp_path / "bad.trec"
    bad.write_text("q1 q1_1 d1 1\nq1 q1_2 d1\n")
    with pytest.raises(InputError, match=r"bad.trec:2: a nugget qrels line has 4 fields"):
        read_nugget_qrels(bad)


# ---------------------------------------------------------------------------------------
# Corpus with provenance ids

PYTHON = '''"""A module."""

import os


def first(value):
    """The first function, long enough to stand on its own as a chunk of code."""
    return [value] * 2


class Second:
    """A class whose body is long enough to be a chunk of its own, as well."""

    def method(self):
        return "é" * 3
'''
MARKDOWN = """# Title

Intro paragraph about the project, long enough to be kept as a chunk of its own text.

## Install

Run pip install to install the package; this section explains the installation in some detail.

## Usage

Call the main function with a path; this section explains the usage in some more detail.
"""


def write_corpus(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "module.py").write_text(PYTHON, encoding="utf-8")
    (root / "my docs").mkdir()
    (root / "my docs" / "README.md").write_text(MARKDOWN, encoding="utf-8")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return root


def test_chunk_ids_are_path_and_byte_span_and_lead_back_to_the_bytes_of_the_cleaned_file(tmp_path):
    root = write_corpus(tmp_path / "repo")
    corpus = build_source_corpus([str(root)], chunk_size=140, min_chars=20)
    assert corpus.files == 2
    cleaned = {
        document.id: document.text.encode("utf-8") for document in clean_documents(load_sources([str(root)]).documents)
    }
    for chunk in corpus.chunks:
        assert cleaned[chunk.path][chunk.start : chunk.end].decode("utf-8") == chunk.text
        assert chunk.id == span_id(chunk.path, chunk.start, chunk.end)
        assert not any(character.isspace() for character in chunk.id)
    assert {chunk.id.split(":")[0] for chunk in corpus.chunks} == {"pkg/module.py", "my%20docs/README.md"}
    # The same files give the same ids in another run.
    assert [c.id for c in build_source_corpus([str(root)], chunk_size=140, min_chars=20).chunks] == [
        c.id for c in corpus.chunks
    ]


def test_code_is_split_at_definitions_and_markdown_at_headings(tmp_path):
    root = write_corpus(tmp_path / "repo")
    chunks = build_source_corpus([str(root)], chunk_size=140, min_chars=20).chunks
    code = [chunk.text for chunk in chunks if chunk.path.endswith(".py")]
    assert any(text.startswith("def first") for text in code) and any(text.startswith("class Second") for text in code)
    markdown = [chunk for chunk in chunks if chunk.path.endswith(".md")]
    assert [chunk.text.splitlines()[0] for chunk in markdown] == ["Title", "Install", "Usage"]
    assert [chunk.title for chunk in markdown] == ["Title", "Title › Install", "Title › Usage"]  # heading paths
    # Non-ASCII text: byte offsets, not character offsets.
    last = [chunk for chunk in chunks if chunk.path.endswith(".py")][-1]
    assert last.end - last.start == len(last.text.encode("utf-8")) > len(last.text)


def test_a_beir_corpus_keeps_its_ids_as_they_are():
    document = Document("doc-7", "corpus.jsonl", "T", "beir", "Some text.")
    (chunk,) = document_chunks(document)
    assert (chunk.id, chunk.title, chunk.text) == ("doc-7", "T", "Some text.")
