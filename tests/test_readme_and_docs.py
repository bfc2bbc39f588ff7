"""The README's and the docs pages' examples run as written, in order, each page in a fresh
workspace of its own (issues 20 and 32).

Every fenced ``bash`` or ``python`` block of README.md and of docs/**/*.md carries a marker on the
line right before its fence: ``<!-- example -->`` (runnable here, over files of the repository,
offline) or ``<!-- reference -->`` (placeholders a user fills in: a model, a path to their own
corpus). The slow test runs each page's examples in page order (a later block uses what an earlier
one of the same page made); the fast tests keep every block marked, every `benchsmith …` line of a
block naming an existing command and existing options, every Python reference block naming
existing API functions, every relative link and #anchor resolving, and the Studio page's graph
list equal to langgraph.json.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import typer.main

import benchsmith
from benchsmith.cli import app

REPOSITORY = Path(__file__).resolve().parents[1]
README = REPOSITORY / "README.md"
STUDIO_PAGE = REPOSITORY / "docs" / "jobs" / "studio.md"
PAGES = [README, *sorted((REPOSITORY / "docs").rglob("*.md"))]
EXAMPLE, REFERENCE = "<!-- example -->", "<!-- reference -->"
BASH_LANGUAGES = {"bash", "sh", "shell", "console"}
PYTHON_LANGUAGES = {"python", "py", "pycon"}
CODE_LANGUAGES = BASH_LANGUAGES | PYTHON_LANGUAGES
# What the Makefile exports: the embedder is loaded from its package, no hub is reachable.
OFFLINE_ENVIRONMENT = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "ANONYMIZED_TELEMETRY": "False",
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGGRAPH_NO_VERSION_CHECK": "true",
}
# A developer's own settings must not leak into a newcomer's run.
UNSET_ENVIRONMENT = (
    "BENCHSMITH_DATABASE_URL",
    "BENCHSMITH_EMBEDDINGS_BASE_URL",
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
    "VIRTUAL_ENV",
    "PYTHONPATH",
)
BLOCK_TIMEOUT_S = 600


def page_name(page: Path, root: Path = REPOSITORY) -> str:
    return page.relative_to(root).as_posix()


@dataclass(frozen=True)
class CodeBlock:
    language: str
    marker: str | None  # the HTML comment line right before the fence, if any
    heading: str  # the nearest heading above the block
    first_line: int  # page line number of the block's first code line
    lines: tuple[str, ...]
    page: str = "README.md"

    @property
    def where(self) -> str:
        return f"{self.page}:{self.first_line - 1} ({self.heading!r})"


def code_blocks(text: str, page: str = "README.md") -> list[CodeBlock]:
    """Every fenced block of a Markdown text, with its language, marker and heading."""
    blocks: list[CodeBlock] = []
    lines = text.splitlines()
    heading, fence, start = "(top)", None, 0
    for number, line in enumerate(lines, start=1):
        if fence is None:
            if line.startswith("```"):
                fence, start = line[3:].strip().split(" ")[0].lower(), number + 1
            elif re.match(r"#{1,6} ", line):
                heading = line.lstrip("#").strip()
        elif line.startswith("```"):
            previous = lines[start - 3].strip() if start >= 3 else ""
            marker = previous if previous.startswith("<!--") else None
            blocks.append(CodeBlock(fence, marker, heading, start, tuple(lines[start - 1 : number - 1]), page))
            fence = None
    assert fence is None, f"{page}:{start - 1}: the fence opened here is never closed"
    return blocks


def prose_lines(text: str) -> list[tuple[int, str]]:
    """The lines outside fenced blocks, numbered."""
    prose, in_fence = [], False
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("```"):
            in_fence = not in_fence
        elif not in_fence:
            prose.append((number, line))
    return prose


def section_prose(text: str, wanted: str) -> str:
    """The prose of the section under the heading ``wanted`` (its code blocks left out)."""
    prose, heading = [], None
    for _, line in prose_lines(text):
        if re.match(r"#{1,6} ", line):
            heading = line.lstrip("#").strip()
        elif heading == wanted:
            prose.append(line)
    return "\n".join(prose)


def runnable_blocks(text: str, page: str = "README.md") -> list[CodeBlock]:
    return [block for block in code_blocks(text, page) if block.marker == EXAMPLE]


def pages_with_examples() -> list[Path]:
    return [page for page in PAGES if runnable_blocks(page.read_text(encoding="utf-8"), page_name(page))]


def test_code_blocks_reads_markers_headings_and_lines():
    text = (
        "# Title\n\n<!-- example -->\n```bash\necho one\n# a comment, not a heading\n```\n\n"
        "## Part two\n\n```python\nprint(2)\n```\n<!-- reference -->\n```bash\nmy-tool path/to/x\n```\n"
    )
    blocks = code_blocks(text)
    assert [(b.language, b.marker, b.heading, b.first_line) for b in blocks] == [
        ("bash", EXAMPLE, "Title", 5),
        ("python", None, "Part two", 12),
        ("bash", REFERENCE, "Part two", 16),
    ]
    assert blocks[0].lines == ("echo one", "# a comment, not a heading")
    assert [b.first_line for b in runnable_blocks(text)] == [5]


def test_the_docs_pages_are_found():
    names = {page_name(page) for page in PAGES}
    assert {
        "README.md",
        "docs/getting-started.md",
        "docs/design.md",
        "docs/jobs/synthesize.md",
        "docs/concepts/runs-and-resume.md",
    } <= names, sorted(names)


@pytest.mark.parametrize("page", PAGES, ids=page_name)
def test_every_bash_and_python_block_is_marked(page):
    """A new example cannot be added untested by accident: it is an example or a reference."""
    blocks = [
        block
        for block in code_blocks(page.read_text(encoding="utf-8"), page_name(page))
        if block.language in CODE_LANGUAGES
    ]
    unmarked = [block.where for block in blocks if block.marker not in (EXAMPLE, REFERENCE)]
    assert not unmarked, (
        f"mark each of these blocks with {EXAMPLE} (run by tests/test_readme_and_docs.py) "
        f"or {REFERENCE} (placeholders) on the line before its fence: {unmarked}"
    )


def test_the_readme_has_bash_and_python_examples():
    examples = runnable_blocks(README.read_text(encoding="utf-8"))
    assert {"bash", "python"} <= {block.language for block in examples}


def test_studio_page_lists_every_graph_of_langgraph_json():
    section = section_prose(STUDIO_PAGE.read_text(encoding="utf-8"), "LangGraph Studio")
    listing = re.search(r"Studio shows every graph(.*?)each with", section, re.S)
    assert listing, (
        f"{page_name(STUDIO_PAGE)} no longer lists the graphs under 'LangGraph Studio' "
        "('Studio shows every graph …, each with')"
    )
    listed = re.findall(r"`([a-z_-]+)`", listing.group(1))
    graphs = json.loads((REPOSITORY / "langgraph.json").read_text(encoding="utf-8"))["graphs"]
    assert sorted(listed) == sorted(graphs), (
        f"{page_name(STUDIO_PAGE)} lists {listed}, langgraph.json has {sorted(graphs)}"
    )


# --- Links: every relative link names a file of the repository, every #anchor a heading ---------

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
INLINE_CODE = re.compile(r"`[^`]*`")


def heading_anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces made hyphens."""
    text = INLINE_CODE.sub(lambda match: match.group(0).strip("`"), heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """The anchors of a Markdown text's headings (a repeated heading's get -1, -2, …)."""
    seen: dict[str, int] = {}
    for _, line in prose_lines(text):
        if re.match(r"#{1,6} ", line):
            anchor = heading_anchor(line.lstrip("#"))
            count = seen.get(anchor, 0)
            seen[anchor] = count + 1
            if count:
                seen[f"{anchor}-{count}"] = 1
    return set(seen)


def broken_links(page: Path, root: Path = REPOSITORY) -> list[str]:
    """Relative links of ``page``'s prose whose file or #anchor does not exist (named from ``root``)."""
    broken = []
    for number, line in prose_lines(page.read_text(encoding="utf-8")):
        for target in LINK.findall(INLINE_CODE.sub("", line)):
            if re.match(r"[a-z][a-z+.-]*:", target):  # https:, mailto:: not ours to check offline
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            where = f"{page_name(page, root)}:{number}: {target}"
            if not linked.exists():
                broken.append(f"{where} (no such file)")
            elif anchor and (linked.suffix != ".md" or anchor not in anchors(linked.read_text(encoding="utf-8"))):
                broken.append(f"{where} (no heading with that anchor)")
    return broken


def test_heading_anchors_are_githubs():
    assert heading_anchor(" Scaling out: many workers, one PostgreSQL") == "scaling-out-many-workers-one-postgresql"
    assert heading_anchor(" Validate: does it rank as you do?") == "validate-does-it-rank-as-you-do"
    assert heading_anchor(" The `runs` command, and τ") == "the-runs-command-and-τ"
    assert anchors("# A\n\n```\n# not a heading\n```\n## A\n") == {"a", "a-1"}


def test_a_broken_link_or_anchor_is_found(tmp_path):
    (tmp_path / "other.md").write_text("# Other page\n\n## A section\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\nSee [it](other.md#a-section), [top](#page), [web](https://example.org/x#y),\n"
        "[gone](missing.md), [no anchor](other.md#nothing), `[code](not-a-link.md)`.\n"
        "```\n[in a block](ignored.md)\n```\n",
        encoding="utf-8",
    )
    assert broken_links(page, tmp_path) == [
        "page.md:4: missing.md (no such file)",
        "page.md:4: other.md#nothing (no heading with that anchor)",
    ]


@pytest.mark.parametrize("page", PAGES, ids=page_name)
def test_relative_links_and_anchors_resolve(page):
    assert not broken_links(page), broken_links(page)


# --- Reference blocks: the commands and API functions they name exist --------------------------


def command_lines(block: CodeBlock) -> list[tuple[int, list[str]]]:
    """Each command of a bash block as its words (continuation lines joined, comments dropped),
    with the page line it starts on."""
    commands, pending, start = [], "", None
    for offset, line in enumerate(block.lines):
        start = block.first_line + offset if start is None else start
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        words = shlex.split(pending + line, comments=True)
        if words:
            commands.append((start, words))
        pending, start = "", None
    return commands


def option_names(command) -> set[str]:
    names = {"--help"}
    for parameter in command.params:
        if parameter.param_type_name == "option":
            names.update(parameter.opts, parameter.secondary_opts)
    return names


def unknown_cli_words(words: list[str]) -> list[str]:
    """What in a `benchsmith …` command line is not a command or an option of the CLI."""
    command = typer.main.get_command(app)  # typer's own click: a group is a command with subcommands
    arguments = words[1:]
    while hasattr(command, "commands") and arguments and not arguments[0].startswith("-"):
        subcommand = command.commands.get(arguments[0])
        if subcommand is None:
            return [f"no command {arguments[0]!r}"]
        command, arguments = subcommand, arguments[1:]
    known = option_names(command)
    return [
        f"no option {word.split('=')[0]!r} of `{command.name}`"
        for word in arguments
        if re.match(r"--?[a-zA-Z]", word) and word.split("=")[0] not in known
    ]


def unknown_programs(words: list[str]) -> list[str]:
    """A benchmark script or make target a command line names, when it does not exist."""
    if words[0] == "make":
        targets = re.findall(r"^([\w-]+):", (REPOSITORY / "Makefile").read_text(encoding="utf-8"), re.M)
        return [f"no make target {word!r}" for word in words[1:] if not word.startswith("-") and word not in targets]
    if words[0].endswith("python") and len(words) > 1 and words[1].endswith(".py"):
        return [] if (REPOSITORY / words[1]).is_file() else [f"no script {words[1]!r}"]
    return []


def command_problems(block: CodeBlock) -> list[str]:
    problems = []
    for line, words in command_lines(block):
        found = unknown_cli_words(words) if Path(words[0]).name == "benchsmith" else unknown_programs(words)
        problems += [f"{block.page}:{line}: {problem}" for problem in found]
    return problems


def python_problems(block: CodeBlock) -> list[str]:
    """A Python block that does not parse, or names a `benchsmith.X` the package lacks."""
    try:
        tree = ast.parse("\n".join(block.lines))
    except SyntaxError as error:
        return [f"{block.page}:{block.first_line + (error.lineno or 1) - 1}: {error.msg}"]
    return [
        f"{block.page}:{block.first_line + node.lineno - 1}: no benchsmith.{node.attr}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "benchsmith"
        and not hasattr(benchsmith, node.attr)
    ]


def test_command_lines_join_continuations_and_drop_comments():
    block = CodeBlock(
        "bash",
        REFERENCE,
        "Use",
        10,
        (
            "# a comment line",
            "benchsmith evaluate run --retriever bm25 \\",
            "    --history full   # note",
            "export X=1",
            "benchsmith audit 'a b' --judge baseline",
        ),
    )
    assert command_lines(block) == [
        (11, ["benchsmith", "evaluate", "run", "--retriever", "bm25", "--history", "full"]),
        (13, ["export", "X=1"]),
        (14, ["benchsmith", "audit", "a b", "--judge", "baseline"]),
    ]


def test_unknown_commands_options_scripts_and_api_names_are_found():
    assert unknown_cli_words(["benchsmith", "hardneg", "score", "x", "--retriever", "bm25", "--json=out.json"]) == []
    assert unknown_cli_words(["benchsmith", "--help"]) == []
    assert unknown_cli_words(["benchsmith", "synthesise", "--collection", "x"]) == ["no command 'synthesise'"]
    assert unknown_cli_words(["benchsmith", "evaluate", "x", "--retreiver", "bm25"]) == [
        "no option '--retreiver' of `evaluate`"
    ]
    assert unknown_programs(["make", "test"]) == []
    assert unknown_programs(["make", "tests"]) == ["no make target 'tests'"]
    assert unknown_programs([".venv/bin/python", "benchmarks/nothing.py"]) == ["no script 'benchmarks/nothing.py'"]
    block = CodeBlock(
        "python", REFERENCE, "Use", 5, ("import benchsmith", "benchsmith.synthesize('c')", "benchsmith.synthesise('c')")
    )
    assert python_problems(block) == ["README.md:7: no benchsmith.synthesise"]


@pytest.mark.parametrize("page", PAGES, ids=page_name)
def test_every_block_names_existing_commands_options_and_functions(page):
    """Reference blocks are not run: the commands, options, scripts and API functions they name
    exist at least (examples are checked the same way, before they run)."""
    blocks = [
        block
        for block in code_blocks(page.read_text(encoding="utf-8"), page_name(page))
        if block.marker in (EXAMPLE, REFERENCE)
    ]
    problems = [problem for block in blocks if block.language in BASH_LANGUAGES for problem in command_problems(block)]
    problems += [
        problem for block in blocks if block.language in PYTHON_LANGUAGES for problem in python_problems(block)
    ]
    assert not problems, problems


# --- Running the examples ----------------------------------------------------------------------


def _environment(workspace: Path) -> dict[str, str]:
    environment = {key: value for key, value in os.environ.items() if key not in UNSET_ENVIRONMENT}
    environment.update(OFFLINE_ENVIRONMENT)
    environment["BENCHSMITH_WORKSPACE"] = str(workspace)
    # The venv running the tests provides `benchsmith` and `python`.
    environment["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{environment.get('PATH', '')}"
    return environment


def _output_tail(completed: subprocess.CompletedProcess) -> str:
    return f"stdout:\n{completed.stdout[-2500:]}\nstderr:\n{completed.stderr[-4000:]}"


def _run_bash(block: CodeBlock, environment: dict[str, str], scratch: Path) -> None:
    """The block's lines in order through `bash -e`; a failing line names itself."""
    failed_line = scratch / f"failed-line-{block.first_line}"
    header = f"trap 'echo $LINENO > {str(failed_line)!r}' ERR\n"
    completed = subprocess.run(
        ["bash", "-e", "-c", header + "\n".join(block.lines) + "\n"],
        cwd=REPOSITORY,
        env=environment,
        capture_output=True,
        text=True,
        timeout=BLOCK_TIMEOUT_S,
    )
    if completed.returncode != 0:
        line = block.first_line
        if failed_line.exists():
            line = block.first_line + int(failed_line.read_text().strip()) - 2  # the trap is line 1
        command = block.lines[line - block.first_line]
        pytest.fail(f"{block.where}: line {line} exited {completed.returncode}: {command}\n{_output_tail(completed)}")


def _run_python(block: CodeBlock, environment: dict[str, str]) -> str:
    """The block through `python -c` in a process of its own (what a user pastes runs alone);
    its standard output."""
    completed = subprocess.run(
        [sys.executable, "-c", "\n".join(block.lines)],
        cwd=REPOSITORY,
        env=environment,
        capture_output=True,
        text=True,
        timeout=BLOCK_TIMEOUT_S,
    )
    if completed.returncode != 0:
        frames = re.findall(r'File "<string>", line (\d+)', completed.stderr)
        line = block.first_line + int(frames[-1]) - 1 if frames else block.first_line
        code = block.lines[line - block.first_line]
        pytest.fail(
            f"{block.where}: line {line} raised (exit {completed.returncode}): {code.strip()}\n"
            f"{_output_tail(completed)}"
        )
    return completed.stdout


def runs_every_job_from_python(block: CodeBlock) -> bool:
    """The README's "Use from Python" example that calls ingest, synthesize, evaluate and audit."""
    return (
        block.page == "README.md"
        and block.heading == "Use from Python"
        and any("benchsmith.ingest(" in line for line in block.lines)
    )


def check_every_job_from_python(block: CodeBlock, stdout: str, new_runs: list[str]) -> None:
    """What that example prints, and the runs it adds to the workspace: one of each job it calls."""
    lines = stdout.splitlines()
    assert lines and re.fullmatch(r"\d+ chunks indexed", lines[0]), f"{block.where}: {stdout}"
    assert len(lines) > 1 and lines[1].split("|")[0].strip() == "start", f"{block.where}: {stdout}"  # turn 0's switch
    assert "'bm25@oracle'" in stdout and "'dense@full'" in stdout, f"{block.where}: {stdout}"
    assert re.search(r"^(reliable|usable with caveats|unreliable) \{'alignment'", lines[-1]), f"{block.where}: {stdout}"
    assert sorted(run.split("-")[0] for run in new_runs) == ["audit", "evaluate", "ingest", "synthesize"], new_runs


def test_a_failing_bash_line_stops_the_block_and_is_named(tmp_path):
    marker = tmp_path / "ran-after-the-failure"
    block = CodeBlock(
        "bash", EXAMPLE, "Using it", 100, ("true", "ls no-such-file-here", f"touch {marker}"), "docs/page.md"
    )
    with pytest.raises(pytest.fail.Exception, match=r"docs/page.md:99 \('Using it'\): line 101 exited 2: ls no-such"):
        _run_bash(block, _environment(tmp_path), tmp_path)
    assert not marker.exists()


def test_a_failing_python_line_is_named(tmp_path):
    block = CodeBlock("python", EXAMPLE, "Use from Python", 40, ("x = 1", "", "raise SystemExit(x / 0)"))
    with pytest.raises(pytest.fail.Exception, match=r"line 42 raised \(exit 1\): raise SystemExit\(x / 0\)"):
        _run_python(block, _environment(tmp_path))


def test_the_python_api_example_check_refuses_a_wrong_output_or_runs():
    block = CodeBlock("python", EXAMPLE, "Use from Python", 10, ('corpus = benchsmith.ingest(["docs"])',))
    assert runs_every_job_from_python(block)
    assert not runs_every_job_from_python(
        CodeBlock("python", EXAMPLE, "Use from Python", 10, block.lines, "docs/python-api.md")
    )
    printed = (
        "12 chunks indexed\n    start | What is it?\nfollow-up | And then?\n"
        "{'bm25@oracle': 0.5, 'dense@full': 0.4}\nreliable {'alignment': 4.0}\n"
    )
    runs = ["audit-1", "evaluate-1", "ingest-1", "synthesize-1"]
    check_every_job_from_python(block, printed, runs)
    for wrong_output, wrong_runs in (
        (printed.replace("'dense@full'", "'dense@oracle'"), runs),
        (printed.replace("    start", "     soft"), runs),
        (printed.replace("reliable {", "reliable: {"), runs),
        (printed, runs[:3]),
        (printed, [*runs, "ingest-2"]),
    ):
        with pytest.raises(AssertionError):
            check_every_job_from_python(block, wrong_output, wrong_runs)


def test_the_readme_runs_every_job_from_python():
    assert any(runs_every_job_from_python(block) for block in runnable_blocks(README.read_text(encoding="utf-8"))), (
        "README.md's Use from Python section no longer has the example calling benchsmith.ingest(...)"
    )


@pytest.mark.slow
@pytest.mark.parametrize("page", pages_with_examples(), ids=page_name)
def test_examples_run_as_written_in_order(page, tmp_path):
    """Every `<!-- example -->` block of a page, in page order, in one fresh empty workspace: a later
    block uses what an earlier one of the same page made (the collection, the benchmark)."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    environment = _environment(workspace)
    blocks = runnable_blocks(page.read_text(encoding="utf-8"), page_name(page))
    for block in blocks:
        if block.language in {"bash", "sh", "shell"}:
            _run_bash(block, environment, tmp_path)
        elif block.language in {"python", "py"}:
            runs_before = _run_names(workspace)
            stdout = _run_python(block, environment)
            if runs_every_job_from_python(block):
                check_every_job_from_python(block, stdout, sorted(_run_names(workspace) - runs_before))
        else:
            pytest.fail(f"{block.where}: an example must be a bash or python block, not {block.language!r}")


def _run_names(workspace: Path) -> set[str]:
    runs = workspace / "runs"
    return {path.name for path in runs.iterdir()} if runs.is_dir() else set()
