import json
from pathlib import Path

import pytest

from benchsmith.stores.errors import InputError
from benchsmith.tools.corpus.cleaning import clean_text, remove_repeated_lines
from benchsmith.tools.corpus.documents import Document
from benchsmith.tools.corpus.loaders import load_sources, module_documentation
from tests.stdlib_corpus import stdlib_documents


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    (root / "sub").mkdir(parents=True)
    (root / "guide.md").write_text("# Guide\n\nRead [the docs](https://x.example) first.\n", encoding="utf-8")
    (root / "sub" / "notes.txt").write_text("Plain notes about retrieval.\n", encoding="utf-8")
    (root / "page.html").write_text(
        "<html><head><title>t</title><script>var x=1;</script></head>"
        "<body><nav>Home | About</nav><p>Visible &amp; kept.</p></body></html>",
        encoding="utf-8",
    )
    (root / "nb.ipynb").write_text(
        json.dumps(
            {
                "cells": [
                    {"cell_type": "markdown", "source": ["Notebook prose."]},
                    {"cell_type": "code", "source": "print(1)", "outputs": [{"text": "1"}]},
                ]
            }
        ),
        encoding="utf-8",
    )
    (root / "image.bin.txt").write_bytes(b"\x89PNG\x00\x00binary")
    (root / "latin1.txt").write_bytes("caf\xe9 au lait".encode("latin-1"))
    (root / "empty.md").write_text("   \n", encoding="utf-8")
    (root / "logo.png").write_bytes(b"\x89PNG")
    (root / ".git").mkdir()
    (root / ".git" / "config.txt").write_text("hidden", encoding="utf-8")
    return root


def test_directory_loads_supported_files_and_lists_skipped_ones(corpus):
    result = load_sources([str(corpus)])
    assert sorted(d.id for d in result.documents) == ["guide.md", "nb.ipynb", "page.html", "sub/notes.txt"]
    reasons = {Path(s.path).name: s.reason for s in result.skipped}
    assert reasons["image.bin.txt"] == "binary file"
    assert reasons["latin1.txt"].startswith("not UTF-8")
    assert reasons["empty.md"] == "empty file"
    assert reasons["logo.png"] == "unsupported file type .png"
    assert "config.txt" not in reasons  # hidden folders are not corpus
    notebook = next(d for d in result.documents if d.id == "nb.ipynb")
    assert "Notebook prose." in notebook.text and "```python\nprint(1)\n```" in notebook.text
    assert "1\n" not in notebook.text.split("```")[-1]  # outputs dropped


def test_unreadable_file_is_skipped_with_the_reason(corpus, monkeypatch):
    original = Path.read_bytes

    def read_bytes(self):
        if self.name == "notes.txt":
            raise PermissionError(13, "Permission denied")
        return original(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    skipped = {Path(s.path).name: s.reason for s in load_sources([str(corpus)]).skipped}
    assert skipped["notes.txt"] == "unreadable: Permission denied"


def test_missing_path_stops_with_its_name(tmp_path):
    with pytest.raises(InputError, match="nowhere: no such file or directory"):
        load_sources([str(tmp_path / "nowhere")])


def test_empty_corpus_stops(tmp_path):
    (tmp_path / "empty.txt").write_text("", encoding="utf-8")
    with pytest.raises(InputError, match=r"empty corpus.*skipped 1 file"):
        load_sources([str(tmp_path)])


def test_beir_corpus_and_its_malformed_line(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"_id": "d1", "title": "T", "text": "one"}\n\n{"_id": 2, "text": "two"}\n', encoding="utf-8")
    documents = load_sources([str(tmp_path)]).documents  # a folder holding corpus.jsonl is BEIR
    assert [(d.id, d.title, d.text, d.kind) for d in documents] == [
        ("d1", "T", "one", "beir"),
        ("2", "", "two", "beir"),
    ]
    corpus.write_text('{"_id": "d1", "text": "one"}\n{"_id": "d2", "text": \n', encoding="utf-8")
    with pytest.raises(InputError, match=r"corpus\.jsonl:2: malformed JSON"):
        load_sources([str(corpus)])
    corpus.write_text('{"_id": "d1", "text": "one"}\n["not", "an", "object"]\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"corpus\.jsonl:2: expected a JSON object"):
        load_sources([str(corpus)])
    corpus.write_text('{"_id": "d1"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"corpus\.jsonl:1: missing 'text' for document 'd1'"):
        load_sources([str(corpus)])


def test_stdlib_source_documents_modules_by_path():
    documents = {d.id: d for d in stdlib_documents()}
    assert len(documents) > 300
    decoder = documents["json.decoder"]
    assert decoder.title == "json.decoder" and decoder.kind == "stdlib"
    assert "json.decoder.JSONDecoder.decode(self, s, _w=WHITESPACE.match)" in decoder.text
    assert not any(name.startswith(("test.", "idlelib")) or "._" in name for name in documents)


def test_stdlib_chunks_are_titled_module_and_object():
    from benchsmith.tools.corpus.chunking import chunk_document
    from benchsmith.tools.corpus.cleaning import clean_documents

    decoder = next(d for d in stdlib_documents() if d.id == "json.decoder")
    chunks = chunk_document(clean_documents([decoder])[0], chunk_size=300)
    titles = {chunk.title for chunk in chunks}
    assert {"json.decoder › JSONDecoder.decode", "json.decoder › JSONDecodeError"} <= titles
    assert all(title.startswith("json.decoder") for title in titles)
    assert all(chunk.source.endswith("json/decoder.py") for chunk in chunks)


def test_titles_are_names_until_cleaning_finds_headings_and_paths_stay_in_source(tmp_path):
    (tmp_path / "guide").mkdir()
    (tmp_path / "guide" / "getting-started.md").write_text("No heading here.\n", encoding="utf-8")
    (tmp_path / "guide" / "index.rst").write_text("Guide home\n==========\n\nText.\n", encoding="utf-8")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("X = 1\n", encoding="utf-8")
    (tmp_path / "pkg" / "store.py").write_text("X = 1\n", encoding="utf-8")
    documents = {d.id: d for d in load_sources([str(tmp_path)]).documents}
    assert {name: d.title for name, d in documents.items()} == {
        "guide/getting-started.md": "getting-started",
        "guide/index.rst": "guide",
        "pkg/__init__.py": "pkg",
        "pkg/store.py": "pkg.store",
    }
    assert documents["guide/index.rst"].source == str(tmp_path / "guide" / "index.rst")
    from benchsmith.tools.corpus.cleaning import clean_documents

    assert {d.id: d.title for d in clean_documents(list(documents.values()))}["guide/index.rst"] == "Guide home"


def test_module_documentation_skips_private_names():
    import ast

    tree = ast.parse(
        '"""Module doc."""\nclass A:\n    """A doc."""\n    def m(self):\n        """M doc."""\n'
        'def _hidden():\n    """no."""\n'
    )
    assert module_documentation("pkg.mod", tree) == "Module doc.\n\npkg.mod.A\nA doc.\n\npkg.mod.A.m(self)\nM doc."


def test_cleaning_strips_markup():
    html = (
        "<body><script>x()</script><nav>Menu</nav><h1>Title</h1><p>First &amp; second.</p><footer>(c)</footer></body>"
    )
    assert clean_text(html, "html") == "Title\n\nFirst & second."
    markdown = "---\ntitle: x\n---\n## Install\n\nSee [docs](http://a.b) and ![logo](l.png).\n<!-- hidden -->\n[ref]: http://c.d"
    assert clean_text(markdown, "markdown") == "Install\n\nSee docs and logo."
    rst = "Title\n=====\n\n.. note::\n\nUse :func:`os.path.join` and ``code``.\n\n.. a comment"
    assert clean_text(rst, "rst") == "Title\n\nUse os.path.join and code."
    code = "# Copyright 2020 Someone\n# Licensed under the MIT License\n\ndef f():\n    return 1\n"
    assert clean_text(code, "python") == "def f():\n    return 1"


def test_lines_repeated_across_many_documents_are_boilerplate():
    footer = "Copyright Example Corp, all rights reserved."
    documents = [Document(str(i), "s", "t", "text", f"Body text number {i}.\n{footer}") for i in range(6)]
    cleaned = remove_repeated_lines(documents)
    assert [d.text for d in cleaned] == [f"Body text number {i}." for i in range(6)]


def test_build_configuration_files_are_skipped_and_listed_but_load_when_named(tmp_path):
    from tests.sphinx_fixtures import BUILD_FILES, write_build_files, write_sphinx_tree

    root = write_build_files(write_sphinx_tree(tmp_path / "docs"))
    result = load_sources([str(root)])
    ids = {document.id for document in result.documents}
    assert ids.isdisjoint(BUILD_FILES) and {"install.rst", "tides.md"} <= ids
    reasons = {Path(item.path).name: item.reason for item in result.skipped}
    assert all(reasons[name] == "build configuration, not documentation" for name in BUILD_FILES)
    # A file the user names on its own is loaded: the rule is about walking a documentation tree.
    assert [document.id for document in load_sources([str(root / "conf.py")]).documents] == ["conf.py"]


def test_fifos_sockets_and_links_to_them_are_listed_never_opened(tmp_path):
    """Opening a FIFO would wait for a writer forever; before, a FIFO was left out without a word."""
    import os
    import socket

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "page.md").write_text("# Page\n\nA sentence about rivers.\n", encoding="utf-8")
    os.mkfifo(corpus / "pipe.md")
    (corpus / "link-to-pipe.md").symlink_to(corpus / "pipe.md")
    listener = socket.socket(socket.AF_UNIX)
    try:
        listener.bind(str(corpus / "server.sock"))
        loaded = load_sources([str(corpus)])
    finally:
        listener.close()
    assert [document.id for document in loaded.documents] == ["page.md"]
    assert {Path(item.path).name: item.reason for item in loaded.skipped} == {
        "pipe.md": "a FIFO (named pipe), not a regular file",
        "link-to-pipe.md": "symbolic link to a FIFO (named pipe), not a regular file",
        "server.sock": "a socket, not a regular file",
    }


def test_an_unreadable_sub_folder_is_listed_with_the_reason(tmp_path, monkeypatch):
    import os

    corpus = tmp_path / "corpus"
    (corpus / "locked").mkdir(parents=True)
    (corpus / "locked" / "hidden.md").write_text("# Hidden\n\nText.\n", encoding="utf-8")
    (corpus / "page.md").write_text("# Page\n\nA sentence about rivers.\n", encoding="utf-8")
    scandir = os.scandir

    def refusing(path):  # as chmod 000 does for a user other than root (the tests may run as root)
        if Path(path).name == "locked":
            raise PermissionError(13, "Permission denied", str(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", refusing)
    loaded = load_sources([str(corpus)])
    assert [document.id for document in loaded.documents] == ["page.md"]
    assert [(Path(item.path).name, item.reason) for item in loaded.skipped] == [
        ("locked", "unreadable folder: Permission denied")
    ]


def test_the_ingest_summary_lists_a_fifo_and_an_unreadable_folder_with_their_reasons(tmp_path, monkeypatch):
    import os

    from typer.testing import CliRunner

    from benchsmith.cli import app

    corpus = tmp_path / "corpus"
    (corpus / "locked").mkdir(parents=True)
    (corpus / "page.md").write_text("# Page\n\n" + "A sentence about rivers and their bridges. " * 5, encoding="utf-8")
    os.mkfifo(corpus / "pipe.md")
    scandir = os.scandir
    monkeypatch.setattr(
        os,
        "scandir",
        lambda path: (
            (_ for _ in ()).throw(PermissionError(13, "Permission denied"))
            if Path(path).name == "locked"
            else scandir(path)
        ),
    )
    result = CliRunner(env={"COLUMNS": "400"}).invoke(
        app, ["ingest", str(corpus), "--dry-run", "-w", str(tmp_path / "ws")]
    )
    assert result.exit_code == 0, result.output
    assert f"a FIFO (named pipe), not a regular file: {corpus / 'pipe.md'}" in result.output, result.output
    assert f"unreadable folder: {corpus / 'locked'}" in result.output, result.output


def test_a_file_over_the_limit_of_one_document_is_listed_unread_and_the_rest_ingested(tmp_path, monkeypatch):
    """A 200 MB one-line file took ingest 121 s and 5.4 GB before any progress; it is listed, never read."""
    from benchsmith.tools.defaults import MAX_DOCUMENT_BYTES

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "page.md").write_text("# Page\n\nA sentence about rivers.\n", encoding="utf-8")
    with (corpus / "dump.txt").open("wb") as handle:
        handle.truncate(MAX_DOCUMENT_BYTES * 12)  # sparse: 192 MiB that take no space
    monkeypatch.setattr(
        Path,
        "read_bytes",
        lambda self: (
            (_ for _ in ()).throw(AssertionError(f"read {self}"))
            if self.name == "dump.txt"
            else Path.open(self, "rb").read()
        ),
    )
    loaded = load_sources([str(corpus)])
    assert [document.id for document in loaded.documents] == ["page.md"]
    assert [(Path(item.path).name, item.reason) for item in loaded.skipped] == [
        ("dump.txt", "larger than 16 MiB, the limit of one document (split it): 192.0 MiB")
    ]


def test_ingest_help_states_the_limit_of_one_document():
    from typer.testing import CliRunner

    from benchsmith.cli import app
    from benchsmith.tools.defaults import MAX_DOCUMENT_BYTES

    shown = " ".join(CliRunner(env={"COLUMNS": "200"}).invoke(app, ["ingest", "--help"]).output.split())
    assert f"files over {MAX_DOCUMENT_BYTES / 2**20:g} MiB (the limit of one document" in shown, shown
