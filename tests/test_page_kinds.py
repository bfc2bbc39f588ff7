"""Each page gets a kind (narrative, api, changelog, index) that its chunks carry into Chroma."""

from pathlib import Path

import pytest

from benchsmith.graphs.ingest import IngestContext, builder
from benchsmith.graphs.runtime.resources import register_embedder
from benchsmith.graphs.runtime.runner import run_job
from benchsmith.stores.persistence.vectors import VectorStore, open_client
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.corpus.cleaning import clean_documents
from benchsmith.tools.corpus.documents import Document
from benchsmith.tools.corpus.loaders import load_sources
from benchsmith.tools.corpus.source_corpus import build_source_corpus
from benchsmith.tools.retrieval.embedding import ChromaEmbeddingFunction
from benchsmith.tools.text.page_kinds import chunk_page_kind
from tests.doc_build_fixtures import PROSE, mkdocs_build, sphinx_build, write
from tests.embedders import HashingEmbedder


def kinds_of(root: Path) -> dict[str, str]:
    return {document.id: document.page_kind for document in clean_documents(load_sources([str(root)]).documents)}


def test_page_kinds_of_a_sphinx_build(tmp_path):
    html = sphinx_build(tmp_path / "pkg", tmp_path / "elsewhere")
    assert kinds_of(html) == {
        "api.html": "api",  # py object descriptions: most of the page
        "changes.html": "changelog",  # its title
        "index.html": "index",  # a toctree and a line of prose
        "guide/quickstart.html": "narrative",
        "guide/advanced.html": "narrative",
    }


def test_page_kinds_of_a_mkdocs_build(tmp_path):
    site = mkdocs_build(tmp_path / "site")
    assert kinds_of(site) == {
        "dev-guide/api.html": "api",  # mkdocstrings' doc-object
        "about/release-notes.html": "changelog",
        "index.html": "narrative",
        "user-guide/writing.html": "narrative",
    }


def test_page_kinds_of_sources_by_markup_name_and_headings(tmp_path):
    write(tmp_path / "reference.rst", "Reference\n=========\n\n.. autoclass:: pkg.Session\n   :members:\n")
    write(
        tmp_path / "objects.rst",
        "Objects\n=======\n\n.. function:: get(url)\n\n   Sends a GET request and returns"
        " the response.\n\n.. class:: Session()\n\n   Keeps settings across requests.\n",
    )
    write(tmp_path / "mkdocstrings.md", "# API\n\n::: pkg.session\n")
    write(tmp_path / "HISTORY.txt", f"Things that happened.\n\n{PROSE}\n")  # by its name
    write(tmp_path / "releases.md", "# What's New in 3.12\n\nFaster startup.\n")  # by its name
    write(tmp_path / "notes.md", "# What's New in 3.12\n\nFaster startup.\n")  # by its title
    write(
        tmp_path / "updates.md",
        "# Community updates\n\n## 2.1.0 (2024-01-02)\n\nA fix.\n\n## 2.0.1\n\nAnother."
        "\n\n## v2.0\n\nThe release.\n\n## Thanks\n\nTo all.\n",
    )  # mostly version headings
    write(
        tmp_path / "contents.rst",
        "Contents\n========\n\n.. toctree::\n   :maxdepth: 2\n\n   guide/install\n"
        "   guide/quickstart\n   guide/advanced\n   reference\n   changes\n",
    )
    write(
        tmp_path / "links.md",
        "# Documentation\n\n- [Install](install.md)\n- [Quickstart](quickstart.md)\n"
        "- [Advanced usage](advanced.md)\n- [API reference](api.md)\n",
    )
    write(tmp_path / "guide.md", f"# Guide\n\n{PROSE}\n\nSee [the API](api.md) for the details.\n")
    write(tmp_path / "tool.py", '"""A tool."""\n\ndef run():\n    """Run it."""\n')
    assert kinds_of(tmp_path) == {
        "reference.rst": "api",
        "objects.rst": "api",
        "mkdocstrings.md": "api",
        "tool.py": "api",
        "HISTORY.txt": "changelog",
        "releases.md": "changelog",
        "notes.md": "changelog",
        "updates.md": "changelog",
        "contents.rst": "index",
        "links.md": "index",
        "guide.md": "narrative",
    }


def test_the_stdlib_source_is_api_and_a_chunk_without_a_kind_is_narrative():
    document = Document(
        "json", "json/__init__.py", "json", "stdlib", "JSON encoder and decoder.\n\njson.dumps(obj)\nSerialize obj."
    )
    assert clean_documents([document])[0].page_kind == "api"
    assert chunk_page_kind({"doc_id": "old"}) == chunk_page_kind(None) == "narrative"
    assert chunk_page_kind({"page_kind": "changelog"}) == "changelog"


@pytest.fixture
def ingested(tmp_path):
    html = sphinx_build(tmp_path / "pkg", tmp_path / "elsewhere")
    workspace = Workspace.resolve(tmp_path / "ws")
    embedder = HashingEmbedder()
    context = IngestContext(workspace=str(workspace.root), embedder=register_embedder(embedder), min_chars=20)
    values = run_job(
        builder,
        job="ingest",
        workspace=workspace,
        run_id="kinds",
        inputs={"run_id": "kinds", "sources": [str(html)], "collection": "pkg"},
        context=context,
        settings={},
    ).values
    store = VectorStore(open_client(workspace), "pkg", ChromaEmbeddingFunction(embedder), embedder.name)
    return values, store.collection.get(include=["metadatas"])["metadatas"], html


def test_each_chunk_carries_its_page_kind_into_chroma_and_the_summary_counts_them(ingested):
    values, metadatas, _ = ingested
    kinds = {metadata["doc_id"]: metadata["page_kind"] for metadata in metadatas}
    assert kinds == {
        "api.html": "api",
        "changes.html": "changelog",
        "index.html": "index",
        "guide/quickstart.html": "narrative",
        "guide/advanced.html": "narrative",
    }
    counted = {kind: sum(1 for metadata in metadatas if metadata["page_kind"] == kind) for kind in set(kinds.values())}
    assert values["page_kinds"] == counted


def test_the_corpus_a_nuggets_run_exports_carries_the_page_kind(ingested):
    html = ingested[2]
    exported = {
        chunk.path: chunk.to_beir()["metadata"]["page_kind"]
        for chunk in build_source_corpus([str(html)], min_chars=20).chunks
    }
    assert exported["api.html"] == "api" and exported["changes.html"] == "changelog"
