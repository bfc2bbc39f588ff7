"""Built documentation trees (Sphinx, MkDocs, AsciiDoc) ingest as their pages, each once, and every
other file is listed with the reason it is not read; ``--include`` / ``--exclude`` choose files."""

from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchsmith.cli import app
from benchsmith.graphs.runtime.resources import register_embedder
from benchsmith.tools.corpus.built_trees import (
    ASCIIDOC_INCLUDE_REASON,
    BUILD_OUTPUT_REASON,
    GENERAL_INDEX_REASON,
    MODULE_INDEX_REASON,
    NOT_FOUND_REASON,
    SEARCH_REASON,
    SOURCE_BESIDE_PAGE_REASON,
    SPHINX_SOURCE_REASON,
    STATIC_ASSET_REASON,
    VIEWCODE_REASON,
)
from benchsmith.tools.corpus.documents import skipped_groups
from benchsmith.tools.corpus.loaders import LINK_TO_READ_REASON, LINK_TO_SKIPPED_REASON, load_sources
from benchsmith.tools.corpus.path_patterns import NOT_INCLUDED_REASON, glob_matches
from benchsmith.tools.corpus.tree_walk import LINK_LOOP_REASON, LINK_OUTSIDE_REASON
from tests.doc_build_fixtures import (
    MKDOCS_PAGES_READ,
    SPHINX_PAGES_READ,
    asciidoc_build,
    mkdocs_build,
    sphinx_build,
    walked_files,
    write,
)
from tests.embedders import HashingEmbedder

runner = CliRunner(env={"COLUMNS": "240"})


def reasons_by_path(result, root: Path) -> dict[str, str]:
    return {str(Path(item.path).relative_to(root)): item.reason for item in result.skipped}


def test_a_sphinx_build_ingests_each_page_once_and_lists_every_other_file(tmp_path):
    package = tmp_path / "python-pkg-doc"
    sphinx_build(package, tmp_path / "elsewhere")
    result = load_sources([str(package)])
    assert sorted(document.id for document in result.documents) == SPHINX_PAGES_READ
    skipped = reasons_by_path(result, package)
    # Nothing is skipped silently: every file of the tree, the rst link's too, is read or listed.
    assert {document.source for document in result.documents} | {item.path for item in result.skipped} == walked_files(
        package
    )
    assert len(result.documents) + len(result.skipped) == len(walked_files(package))
    assert skipped == {
        **{
            f"html/_sources/{name}": SPHINX_SOURCE_REASON
            for name in (
                "index.rst.txt",
                "guide/quickstart.rst.txt",
                "guide/advanced.rst.txt",
                "api.rst.txt",
                "changes.rst.txt",
            )
        },
        **{
            f"rst/{name}": LINK_TO_SKIPPED_REASON
            for name in (
                "index.rst.txt",
                "guide/quickstart.rst.txt",
                "guide/advanced.rst.txt",
                "api.rst.txt",
                "changes.rst.txt",
            )
        },
        "html/_static/basic.css": STATIC_ASSET_REASON,
        "html/_static/doctools.js": STATIC_ASSET_REASON,
        "html/_static/jquery.js": STATIC_ASSET_REASON,
        "html/_images/logo.png": STATIC_ASSET_REASON,
        "html/_modules/index.html": VIEWCODE_REASON,
        "html/_modules/pkg/api.html": VIEWCODE_REASON,
        "html/genindex.html": GENERAL_INDEX_REASON,
        "html/py-modindex.html": MODULE_INDEX_REASON,
        "html/search.html": SEARCH_REASON,
        "html/searchindex.js": SEARCH_REASON,
        "html/objects.inv": BUILD_OUTPUT_REASON,
    }


def test_the_build_folder_itself_reads_the_same_pages(tmp_path):
    html = sphinx_build(tmp_path / "pkg", tmp_path / "elsewhere")
    result = load_sources([str(html)])
    assert sorted(document.id for document in result.documents) == [
        page.removeprefix("html/") for page in SPHINX_PAGES_READ
    ]
    assert reasons_by_path(result, html)["_sources/api.rst.txt"] == SPHINX_SOURCE_REASON


def test_a_mkdocs_build_ingests_its_pages_and_lists_search_assets_and_the_404_page(tmp_path):
    site = mkdocs_build(tmp_path / "site")
    result = load_sources([str(site)])
    assert sorted(document.id for document in result.documents) == MKDOCS_PAGES_READ
    assert reasons_by_path(result, site) == {
        "404.html": NOT_FOUND_REASON,
        "sitemap.xml": BUILD_OUTPUT_REASON,
        "sitemap.xml.gz": BUILD_OUTPUT_REASON,
        "search/search_index.json": SEARCH_REASON,
        "search/main.js": SEARCH_REASON,
        "search/lunr.js": SEARCH_REASON,
        "assets/_mkdocstrings.css": STATIC_ASSET_REASON,
        "css/theme.css": STATIC_ASSET_REASON,
        "js/theme.js": STATIC_ASSET_REASON,
        "img/favicon.ico": STATIC_ASSET_REASON,
    }


def test_an_asciidoc_source_beside_its_page_and_its_includes_are_not_read_again(tmp_path):
    doc = asciidoc_build(tmp_path / "git-doc")
    result = load_sources([str(doc)])
    assert sorted(document.id for document in result.documents) == [
        "git-add.html",
        "git-log.html",
        "technical/notes.txt",
    ]
    assert reasons_by_path(result, doc) == {
        "git-add.txt": SOURCE_BESIDE_PAGE_REASON,
        "git-log.txt": SOURCE_BESIDE_PAGE_REASON,
        "diff-options.txt": ASCIIDOC_INCLUDE_REASON,  # include::{build_dir}/diff-options.txt[] too
        "technical/log-format.txt": ASCIIDOC_INCLUDE_REASON,  # included from the folder above
        "index.html": LINK_TO_READ_REASON,
        "docbook-xsl.css": "unsupported file type .css",
    }


def test_a_text_file_beside_a_page_that_asciidoc_did_not_make_is_its_source_and_others_are_read(tmp_path):
    write(tmp_path / "notes.html", "<html><body><p>Notes about the release of the tool.</p></body></html>")
    write(tmp_path / "notes.txt", "Notes about the release of the tool.")
    write(tmp_path / "todo.txt", "Things to do before the release of the tool.")  # no page: read
    result = load_sources([str(tmp_path)])
    assert sorted(document.id for document in result.documents) == ["notes.html", "todo.txt"]
    assert reasons_by_path(result, tmp_path) == {"notes.txt": SOURCE_BESIDE_PAGE_REASON}


def test_a_file_reached_through_a_link_is_read_under_its_own_path_once(tmp_path):
    root = tmp_path / "docs"
    write(root / "z-guide.md", "# Guide\n\nHow to use the tool, in a few steps.\n")
    (root / "a-link.md").symlink_to("z-guide.md")  # sorts first: still the file is read as itself
    (root / "loop").symlink_to(".")
    (root / "outside").symlink_to(write(tmp_path / "other" / "page.md", "# Other\n\nAnother tree.\n").parent)
    (root / "broken.md").symlink_to("nowhere.md")
    result = load_sources([str(root)])
    assert [document.id for document in result.documents] == ["z-guide.md"]
    assert reasons_by_path(result, root) == {
        "a-link.md": LINK_TO_READ_REASON,
        "loop": LINK_LOOP_REASON,
        "outside": LINK_OUTSIDE_REASON,
        "broken.md": "broken symbolic link",
    }


def test_include_and_exclude_globs_choose_files_and_a_pattern_matching_nothing_is_a_warning(tmp_path):
    package = tmp_path / "pkg"
    sphinx_build(package, tmp_path / "elsewhere")
    result = load_sources([str(package)], include=["html", "nothing/**"], exclude=["**/changes.html", "html/guide/*"])
    assert [document.id for document in result.documents] == ["html/api.html", "html/index.html"]
    skipped = reasons_by_path(result, package)
    assert skipped["html/changes.html"] == "excluded by --exclude **/changes.html"
    assert skipped["html/guide/quickstart.html"] == "excluded by --exclude html/guide/*"
    assert skipped["rst/api.rst.txt"] == NOT_INCLUDED_REASON
    assert result.warnings == ["--include nothing/** matched no file"]


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("*.html", "guide/a.html", True),  # fnmatch: * crosses folders
        ("**/changes.html", "changes.html", True),  # **/ matches no folder too
        ("**/changes.html", "a/b/changes.html", True),
        ("guide", "guide/a/b.html", True),  # a folder's pattern matches the files under it
        ("guide", "guides/a.html", False),
        ("api.html", "html/api.html", False),  # matched against the whole relative path
        ("html/*/index.html", "html/user/index.html", True),
    ],
)
def test_glob_matching(pattern, path, matches):
    assert glob_matches(pattern, path) is matches


def test_skipped_files_are_grouped_by_reason_without_their_details():
    groups = skipped_groups(
        [
            {"path": "a.txt", "reason": "not UTF-8 (invalid byte at offset 3)"},
            {"path": "b.txt", "reason": "not UTF-8 (invalid byte at offset 9)"},
            {"path": "c.html", "reason": "redirect page: moved to x"},
            {"path": "d.txt", "reason": "not UTF-8 (invalid byte at offset 1)"},
        ],
        examples=2,
    )
    assert [(group.reason, group.count, group.paths) for group in groups] == [
        ("not UTF-8", 3, ["a.txt", "b.txt"]),
        ("redirect page", 1, ["c.html"]),
    ]


def test_the_cli_ingests_a_built_tree_with_globs_and_names_what_it_skipped(tmp_path):
    package = tmp_path / "pkg"
    sphinx_build(package, tmp_path / "elsewhere")
    embedder = register_embedder(HashingEmbedder())
    arguments = [
        "ingest",
        str(package),
        "-w",
        str(tmp_path / "ws"),
        "--embedder",
        embedder,
        "--min-chars",
        "20",
        "--exclude",
        "html/guide/advanced.html",
        "--exclude",
        "**/*.pdf",
        "--include",
        "html/**",
    ]
    dry = runner.invoke(app, [*arguments, "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "4 files read" in dry.output
    run = runner.invoke(app, [*arguments, "--collection", "pkg", "--run-id", "pkg"])
    assert run.exit_code == 0, run.output
    for output in (dry.output, run.output):
        assert "5  Sphinx page source (the built page is read): " in output
        assert "1  excluded by --exclude html/guide/advanced.html: " in output
        assert "5  not matched by any --include pattern: " in output  # the rst link's files
        assert "warning: --exclude **/*.pdf matched no file" in output
        assert "html/_sources/api.rst.txt" in output
    assert "4 files read" in run.output and "chunks indexed per page kind: " in run.output
