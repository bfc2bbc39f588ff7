"""The README's examples run as written, in order, in one fresh workspace (issue 20).

Every fenced ``bash`` or ``python`` block of README.md carries a marker on the line right before
its fence: ``<!-- example -->`` (runnable here, over files of the repository, offline) or
``<!-- reference -->`` (placeholders a user fills in: a model, a path to their own corpus). The
slow test runs the examples, the fast tests keep every block marked and the Studio section's
graph list equal to langgraph.json.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[1]
README = REPOSITORY / "README.md"
EXAMPLE, REFERENCE = "<!-- example -->", "<!-- reference -->"
CODE_LANGUAGES = {"bash", "sh", "shell", "console", "python", "py", "pycon"}
# What the Makefile exports: the embedder is loaded from its package, no hub is reachable.
OFFLINE_ENVIRONMENT = {
    "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TOKENIZERS_PARALLELISM": "false", "ANONYMIZED_TELEMETRY": "False",
    "LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGGRAPH_NO_VERSION_CHECK": "true",
}
# A developer's own settings must not leak into a newcomer's run.
UNSET_ENVIRONMENT = ("BENCHSMITH_DATABASE_URL", "BENCHSMITH_EMBEDDINGS_BASE_URL", "OPENAI_BASE_URL",
                     "OPENAI_API_KEY", "VIRTUAL_ENV", "PYTHONPATH")
BLOCK_TIMEOUT_S = 600


@dataclass(frozen=True)
class CodeBlock:
    language: str
    marker: str | None  # the HTML comment line right before the fence, if any
    heading: str        # the nearest heading above the block
    first_line: int     # README line number of the block's first code line
    lines: tuple[str, ...]

    @property
    def where(self) -> str:
        return f"README.md:{self.first_line - 1} ({self.heading!r})"


def code_blocks(text: str) -> list[CodeBlock]:
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
            blocks.append(CodeBlock(fence, marker, heading, start, tuple(lines[start - 1:number - 1])))
            fence = None
    assert fence is None, f"README.md:{start - 1}: the fence opened here is never closed"
    return blocks


def section_prose(text: str, wanted: str) -> str:
    """The prose of the section under the heading ``wanted`` (its code blocks left out)."""
    prose, heading, in_fence = [], None, False
    for line in text.splitlines():
        if line.startswith("```"):
            in_fence = not in_fence
        elif not in_fence and re.match(r"#{1,6} ", line):
            heading = line.lstrip("#").strip()
        elif not in_fence and heading == wanted:
            prose.append(line)
    return "\n".join(prose)


def runnable_blocks(text: str) -> list[CodeBlock]:
    return [block for block in code_blocks(text) if block.marker == EXAMPLE]


def test_code_blocks_reads_markers_headings_and_lines():
    text = ("# Title\n\n<!-- example -->\n```bash\necho one\n# a comment, not a heading\n```\n\n"
            "## Part two\n\n```python\nprint(2)\n```\n<!-- reference -->\n```bash\nmy-tool path/to/x\n```\n")
    blocks = code_blocks(text)
    assert [(b.language, b.marker, b.heading, b.first_line) for b in blocks] == [
        ("bash", EXAMPLE, "Title", 5), ("python", None, "Part two", 12), ("bash", REFERENCE, "Part two", 16)]
    assert blocks[0].lines == ("echo one", "# a comment, not a heading")
    assert [b.first_line for b in runnable_blocks(text)] == [5]


def test_every_bash_and_python_block_is_marked():
    """A new example cannot be added untested by accident: it is an example or a reference."""
    blocks = [block for block in code_blocks(README.read_text(encoding="utf-8")) if block.language in CODE_LANGUAGES]
    unmarked = [block.where for block in blocks if block.marker not in (EXAMPLE, REFERENCE)]
    assert not unmarked, (f"mark each of these README blocks with {EXAMPLE} (run by tests/test_readme.py) "
                          f"or {REFERENCE} (placeholders) on the line before its fence: {unmarked}")
    examples = [block for block in blocks if block.marker == EXAMPLE]
    assert {"bash", "python"} <= {block.language for block in examples}


def test_studio_section_lists_every_graph_of_langgraph_json():
    text = README.read_text(encoding="utf-8")
    section = section_prose(text, "LangGraph Studio")
    listing = re.search(r"Studio shows every graph(.*?)each with", section, re.S)
    assert listing, "the LangGraph Studio section no longer lists the graphs ('Studio shows every graph …, each with')"
    listed = re.findall(r"`([a-z_-]+)`", listing.group(1))
    graphs = json.loads((REPOSITORY / "langgraph.json").read_text(encoding="utf-8"))["graphs"]
    assert sorted(listed) == sorted(graphs), f"README lists {listed}, langgraph.json has {sorted(graphs)}"


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
    completed = subprocess.run(["bash", "-e", "-c", header + "\n".join(block.lines) + "\n"], cwd=REPOSITORY,
                               env=environment, capture_output=True, text=True, timeout=BLOCK_TIMEOUT_S)
    if completed.returncode != 0:
        line = block.first_line
        if failed_line.exists():
            line = block.first_line + int(failed_line.read_text().strip()) - 2  # the trap is line 1
        command = block.lines[line - block.first_line]
        pytest.fail(f"{block.where}: line {line} exited {completed.returncode}: {command}\n"
                    f"{_output_tail(completed)}")


def _run_python(block: CodeBlock, environment: dict[str, str]) -> str:
    """The block through `python -c` in a process of its own (what a user pastes runs alone);
    its standard output."""
    completed = subprocess.run([sys.executable, "-c", "\n".join(block.lines)], cwd=REPOSITORY, env=environment,
                               capture_output=True, text=True, timeout=BLOCK_TIMEOUT_S)
    if completed.returncode != 0:
        frames = re.findall(r'File "<string>", line (\d+)', completed.stderr)
        line = block.first_line + int(frames[-1]) - 1 if frames else block.first_line
        code = block.lines[line - block.first_line]
        pytest.fail(f"{block.where}: line {line} raised (exit {completed.returncode}): {code.strip()}\n"
                    f"{_output_tail(completed)}")
    return completed.stdout


def runs_every_job_from_python(block: CodeBlock) -> bool:
    """The "Use from Python" example that calls ingest, synthesize, evaluate and audit."""
    return block.heading == "Use from Python" and any("benchsmith.ingest(" in line for line in block.lines)


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
    block = CodeBlock("bash", EXAMPLE, "Using it", 100, ("true", "ls no-such-file-here", f"touch {marker}"))
    with pytest.raises(pytest.fail.Exception, match=r"README.md:99 \('Using it'\): line 101 exited 2: ls no-such"):
        _run_bash(block, _environment(tmp_path), tmp_path)
    assert not marker.exists()


def test_a_failing_python_line_is_named(tmp_path):
    block = CodeBlock("python", EXAMPLE, "Use from Python", 40, ("x = 1", "", "raise SystemExit(x / 0)"))
    with pytest.raises(pytest.fail.Exception, match=r"line 42 raised \(exit 1\): raise SystemExit\(x / 0\)"):
        _run_python(block, _environment(tmp_path))


def test_the_python_api_example_check_refuses_a_wrong_output_or_runs():
    block = CodeBlock("python", EXAMPLE, "Use from Python", 10, ("corpus = benchsmith.ingest([\"docs\"])",))
    assert runs_every_job_from_python(block)
    printed = ("12 chunks indexed\n    start | What is it?\nfollow-up | And then?\n"
               "{'bm25@oracle': 0.5, 'dense@full': 0.4}\nreliable {'alignment': 4.0}\n")
    runs = ["audit-1", "evaluate-1", "ingest-1", "synthesize-1"]
    check_every_job_from_python(block, printed, runs)
    for wrong_output, wrong_runs in ((printed.replace("'dense@full'", "'dense@oracle'"), runs),
                                     (printed.replace("    start", "     soft"), runs),
                                     (printed.replace("reliable {", "reliable: {"), runs),
                                     (printed, runs[:3]), (printed, [*runs, "ingest-2"])):
        with pytest.raises(AssertionError):
            check_every_job_from_python(block, wrong_output, wrong_runs)


@pytest.mark.slow
def test_readme_examples_run_as_written_in_order(tmp_path):
    """Every `<!-- example -->` block, in README order, in one fresh empty workspace: a later block
    uses what an earlier one made (the collection, the benchmark)."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    environment = _environment(workspace)
    blocks = runnable_blocks(README.read_text(encoding="utf-8"))
    assert blocks, "README.md has no <!-- example --> block"
    assert any(runs_every_job_from_python(block) for block in blocks), \
        "README.md's Use from Python section no longer has the example calling benchsmith.ingest(...)"
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
    assert (workspace / "runs").is_dir(), "the examples wrote no run into the test's workspace"


def _run_names(workspace: Path) -> set[str]:
    runs = workspace / "runs"
    return {path.name for path in runs.iterdir()} if runs.is_dir() else set()
