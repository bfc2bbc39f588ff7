"""MkDocs include lines (``{!path!}``, ``--8<-- "path"``) are read as a MkDocs build reads them: the
file they name, when the tree being ingested holds it; otherwise the line is left out and named in
the run's warnings, with what to ingest instead. A page never reads a file outside its tree."""

from pathlib import Path

from typer.testing import CliRunner

from benchsmith.cli import app
from benchsmith.graphs.runtime.resources import register_embedder
from benchsmith.tools.corpus.cleaning import clean_documents
from benchsmith.tools.corpus.includes import inline_includes
from benchsmith.tools.corpus.loaders import load_sources
from tests.doc_build_fixtures import mkdocs_page, write
from tests.embedders import HashingEmbedder

runner = CliRunner(env={"COLUMNS": "240"})
EXAMPLE = 'import typer\n\n\ndef main(name: str = "World"):\n    print(f"Hello {name} <3")\n'


def project(root: Path) -> Path:
    """A project as its repository or sdist holds it: MkDocs sources under docs/, their examples under
    docs_src/ (markdown-include's base_path is docs/, so its lines climb out of it), a snippet beside
    the page."""
    write(root / "docs_src" / "first_steps" / "tutorial001.py", EXAMPLE)
    write(root / "docs" / "tutorial" / "snippets" / "run.txt", "$ python main.py Camila\nHello Camila <3\n")
    write(
        root / "docs" / "tutorial" / "first-steps.md",
        "# First Steps\n\nThe simplest program takes one argument and prints a greeting.\n\n"
        "```Python\n{!../docs_src/first_steps/tutorial001.py!}\n```\n\nRun it with a name:\n\n"
        '```console\n--8<-- "snippets/run.txt"\n```\n\nOnly its signature:\n\n'
        "```Python\n--8<-- 'docs_src/first_steps/tutorial001.py:4:4'\n```\n",
    )
    return root


def test_a_projects_sources_read_their_included_files_as_the_build_does(tmp_path):
    root = project(tmp_path / "typer-0.7.0")
    result = load_sources([str(root)], include=["docs/**/*.md"])
    assert [document.id for document in result.documents] == ["docs/tutorial/first-steps.md"]
    text = result.documents[0].text
    assert "```Python\n" + EXAMPLE.rstrip("\n") + "\n```" in text
    assert "```console\n$ python main.py Camila\nHello Camila <3\n```" in text
    assert '```Python\ndef main(name: str = "World"):\n```' in text  # the snippet's line range
    assert "{!" not in text and "--8<--" not in text
    assert result.documents[0].missing_includes == []
    assert result.warnings == []


def test_the_docs_folder_alone_lacks_the_examples_and_the_warning_says_what_to_ingest(tmp_path):
    root = project(tmp_path / "typer-0.7.0")
    result = load_sources([str(root / "docs")])
    document = result.documents[0]
    assert document.missing_includes == [
        "../docs_src/first_steps/tutorial001.py",
        "docs_src/first_steps/tutorial001.py:4:4",
    ]
    assert "$ python main.py Camila" in document.text  # the snippet beside the page is in the tree
    assert "{!" not in document.text and "docs_src" not in document.text
    [warning] = result.warnings
    assert warning.startswith("1 page(s) include 2 file(s) the tree does not hold")
    assert "'../docs_src/first_steps/tutorial001.py' in tutorial/first-steps.md" in warning
    assert "ingest the folder that holds both the pages and the included files" in warning


def test_a_built_page_that_kept_its_include_lines_gets_the_file_escaped_or_loses_the_line(tmp_path):
    # Debian's typer build: the line stands inside the code block that the file should have filled
    site = tmp_path / "site"
    write(tmp_path / "site" / "docs_src" / "tutorial001.py", EXAMPLE)
    body = (
        "<p>The simplest program:</p>\n"
        '<pre><code class="language-Python">{!docs_src/tutorial001.py!}\n</code></pre>\n'
        "<p>And one whose example is lost:</p>\n"
        '<pre><code class="language-Python">{!../docs_src/tutorial002.py!}\n</code></pre>\n'
        "<p>That is all it takes.</p>\n"
    )
    write(site / "tutorial" / "index.html", mkdocs_page("First Steps", body))
    result = load_sources([str(site)])
    [page] = [document for document in result.documents if document.id == "tutorial/index.html"]
    assert "Hello {name} &lt;3" in page.text  # escaped in the page, as the build escapes code
    assert page.missing_includes == ["../docs_src/tutorial002.py"]
    [cleaned] = clean_documents([page])
    assert 'print(f"Hello {name} <3")' in cleaned.text
    assert "{!" not in cleaned.text and "tutorial002" not in cleaned.text
    assert "That is all it takes." in cleaned.text


def test_a_page_never_reads_a_file_outside_the_tree_it_is_ingested_from(tmp_path):
    secret = write(tmp_path / "secret.txt", "a key that is not documentation\n")
    write(tmp_path / "docs" / "inside.txt", "inside the tree\n")
    page = tmp_path / "docs" / "guide" / "page.md"
    text = f'# Guide\n\n{{!../../secret.txt!}}\n{{!{secret}!}}\n--8<-- "../secret.txt"\n{{!inside.txt!}}\n'
    write(page, text)
    included = inline_includes(text, page, tmp_path / "docs")
    assert "a key" not in included.text
    assert included.missing == ("../../secret.txt", str(secret), "../secret.txt")
    assert "inside the tree" in included.text  # found from the folder above the page, inside the tree
    outside_link = tmp_path / "docs" / "guide" / "link.txt"
    outside_link.symlink_to(secret)  # a link inside the tree to a file outside it is outside too
    assert inline_includes("{!link.txt!}\n", page, tmp_path / "docs").missing == ("link.txt",)


def test_lines_that_only_mention_the_syntax_are_left_as_they_are(tmp_path):
    page = tmp_path / "docs" / "page.md"
    text = 'Write `{!file.py!}` on a line of its own, or --8<-- "file.py" in a snippet.\n'
    assert inline_includes(text, page, tmp_path / "docs").text == text


def test_the_cli_warns_in_the_dry_run_and_the_summary_of_the_run(tmp_path):
    root = project(tmp_path / "typer-0.7.0")
    embedder = register_embedder(HashingEmbedder())
    arguments = ["ingest", str(root / "docs"), "-w", str(tmp_path / "ws"), "--embedder", embedder, "--min-chars", "20"]
    dry = runner.invoke(app, [*arguments, "--dry-run"])
    run = runner.invoke(app, [*arguments, "--collection", "typer-docs", "--run-id", "typer-docs"])
    assert dry.exit_code == 0 and run.exit_code == 0, dry.output + run.output
    for output in (dry.output, run.output):
        assert "warning: 1 page(s) include 2 file(s) the tree does not hold" in output
    resumed = runner.invoke(app, [*arguments, "--collection", "typer-docs", "--run-id", "typer-docs"])
    assert "warning: 1 page(s) include 2 file(s) the tree does not hold" in resumed.output  # kept with the run


def test_line_ranges_are_read_as_each_extension_writes_them(tmp_path):
    root = tmp_path / "project"
    write(root / "docs_src" / "app.py", "".join(f"line {number}\n" for number in range(1, 11)))
    page = root / "docs" / "page.md"
    text = (
        "```\n{!../docs_src/app.py[ln:2-3]!}\n```\n```\n{!../docs_src/app.py[ln:9-]!}\n```\n"
        '```\n{!../docs_src/app.py[ln:1,5-6]!}\n```\n```\n--8<-- "docs_src/app.py:7:"\n```\n'
    )
    included = inline_includes(text, page, root)
    assert included.missing == ()
    blocks = included.text.split("```\n")[1::2]
    assert blocks == [
        "line 2\nline 3\n",
        "line 9\nline 10\n",
        "line 1\nline 5\nline 6\n",
        "line 7\nline 8\nline 9\nline 10\n",
    ]
    mdx = inline_includes("```\n{!> ../docs_src/app.py !}\n```\n", page, root)
    built = inline_includes("<pre><code>{!&gt; ../docs_src/app.py !}\n</code></pre>\n", page, root, escape=True)
    assert mdx.text.startswith("```\nline 1\n") and built.text.startswith("<pre><code>line 1\n")
    assert mdx.missing == built.missing == ()
