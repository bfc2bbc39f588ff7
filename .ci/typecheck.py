"""mypy over the package as it installs, with messages naming the repository's files, held to a baseline.

The package ``benchsmith`` is folders mapped by setuptools' ``package-dir`` (pyproject.toml:
``benchsmith.graphs`` is graphs/, ...). mypy finds modules by folder and cannot follow the import
hook of an editable install, so this lays the package out as links under .mypy_cache/layout
(benchsmith/graphs -> graphs/, ...), runs mypy there with pyproject.toml's [tool.mypy], and
rewrites each message's path back to the repository's (benchsmith/graphs/x.py -> graphs/x.py).

The errors the code had when the checker came in (issue 32) are listed in .ci/mypy-baseline.txt
(file, message and code; no line numbers, which move): an error not in it fails the check, so new
code is checked in full while the old errors are fixed. A fixed one is announced; drop it with
``--update-baseline``, which writes the list anew (after a move of files too). The baseline holds
only the folders pyproject.toml checks leniently (tools/, stores/, evals/): in the package face, the
graphs and the agents, checked strictly, every error fails.

    .venv/bin/python .ci/typecheck.py [--update-baseline] [mypy options]
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".mypy_cache"  # mypy keeps it out of git (it writes a .gitignore there); ruff skips it
LAYOUT = CACHE / "layout"  # a fixed place: mypy's cache stays valid between runs
BASELINE = ROOT / ".ci" / "mypy-baseline.txt"
ERROR = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+): error: (?P<message>.*)$")


def package_dirs() -> dict[str, str]:
    """Each package of the distribution and its folder in the repository (pyproject.toml)."""
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return dict(settings["tool"]["setuptools"]["package-dir"])


def lay_out(mapping: dict[str, str]) -> None:
    """The package tree under LAYOUT: the top package's own files, then each mapped folder, as links."""
    shutil.rmtree(LAYOUT, ignore_errors=True)
    for package, folder in sorted(mapping.items()):  # a package before the ones mapped inside it
        target = LAYOUT / package.replace(".", "/")
        if "." not in package:
            target.mkdir(parents=True)
            for entry in (ROOT / folder).iterdir():
                if entry.name != "__pycache__" and not (target / entry.name).exists():
                    (target / entry.name).symlink_to(entry)
        else:
            target.unlink(missing_ok=True)
            target.symlink_to(ROOT / folder, target_is_directory=True)


def repository_path(line: str, mapping: dict[str, str]) -> str:
    """A message of mypy with the laid-out path of its file replaced by the repository's."""
    for package, folder in sorted(mapping.items(), key=lambda item: -len(item[0])):  # the deepest mapping first
        prefix = package.replace(".", "/") + "/"
        if line.startswith(prefix):
            return folder.rstrip("/") + "/" + line[len(prefix) :]
    return line


def lenient_folders(mapping: dict[str, str]) -> tuple[str, ...]:
    """The folders of the modules [[tool.mypy.overrides]] checks leniently ("benchsmith.agents.*" → "agents/")."""
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = [
        module
        for override in settings["tool"]["mypy"].get("overrides", [])
        if override.get("disallow_untyped_defs") is False
        for module in override["module"]
    ]
    return tuple(mapping[pattern.removesuffix(".*")].rstrip("/") + "/" for pattern in patterns)


def known_error(line: str) -> str | None:
    """An error line as the baseline lists it (no line number), or None for a note or a summary."""
    matched = ERROR.match(line)
    if not matched:
        return None
    message = re.sub(r"\bline \d+", "line N", matched["message"])  # "already defined on line 115" moves too
    return f"{matched['path']}: {message}"


def run_mypy(options: list[str], mapping: dict[str, str]) -> tuple[int, list[str]]:
    """mypy's exit status and its output lines, each naming the repository's file."""
    command = [
        sys.executable,
        "-m",
        "mypy",
        "--config-file",
        str(ROOT / "pyproject.toml"),
        "--cache-dir",
        str(CACHE),
        *options,
    ]
    checked = subprocess.run(command, cwd=LAYOUT, capture_output=True, text=True, check=False)
    sys.stderr.write(checked.stderr)
    if checked.returncode not in (0, 1):  # 2: mypy itself failed (a bad option, a syntax error)
        print(checked.stdout)
    return checked.returncode, [repository_path(line, mapping) for line in checked.stdout.splitlines()]


def main(options: list[str]) -> int:
    update = "--update-baseline" in options
    options = [option for option in options if option != "--update-baseline"]
    mapping = package_dirs()
    lay_out(mapping)
    lenient = lenient_folders(mapping)
    listed = BASELINE.read_text(encoding="utf-8").splitlines() if BASELINE.exists() else []
    baseline = Counter(error for error in listed if error.startswith(lenient))  # a strict folder's is new
    # The baseline holds what a fresh run says (as CI's is). From a cache left by other code, mypy can
    # word an error another way (an overloaded call's "No overload variant" for "Argument 2 ... has
    # incompatible type"): an update, and a run that finds new errors, check again without the cache.
    status, lines = run_mypy([*options, "--no-incremental"] if update else options, mapping)
    errors = Counter(error for error in map(known_error, lines) if error)
    if status in (0, 1) and not update and errors - baseline and "--no-incremental" not in options:
        status, lines = run_mypy([*options, "--no-incremental"], mapping)
        errors = Counter(error for error in map(known_error, lines) if error)
    if status not in (0, 1):
        return status
    if update:
        kept = Counter(error for error in errors.elements() if error.startswith(lenient))
        BASELINE.write_text("".join(f"{error}\n" for error in sorted(kept.elements())), encoding="utf-8")
        print(f"{BASELINE.relative_to(ROOT)}: {sum(kept.values())} errors")
        if kept != errors:
            print(f"not listed, fix them: {sum((errors - kept).values())} errors of the strictly checked folders")
            return 1
        return 0
    new, fixed = errors - baseline, baseline - errors
    for line in lines:  # each new error with its line number and notes, as mypy gave them
        error = known_error(line)
        if error and new[error]:
            print(line)
    if fixed:
        print(
            f"{sum(fixed.values())} errors of {BASELINE.relative_to(ROOT)} are fixed: drop them with "
            f"`.venv/bin/python .ci/typecheck.py --update-baseline`"
        )
    print(
        f"mypy: {sum(new.values())} new errors, {sum((errors & baseline).values())} known ones left "
        f"({BASELINE.relative_to(ROOT)})"
    )
    return 1 if new else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
