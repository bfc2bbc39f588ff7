"""mypy --strict over the package as it installs, with messages naming the repository's files.

The package ``benchsmith`` is folders mapped by setuptools' ``package-dir`` (pyproject.toml:
``benchsmith.graphs`` is graphs/, ...). mypy finds modules by folder and cannot follow the import
hook of an editable install, so this lays the package out as links under .mypy_cache/layout
(benchsmith/graphs -> graphs/, ...), runs mypy there with pyproject.toml's [tool.mypy], and
rewrites each message's path back to the repository's (benchsmith/graphs/x.py -> graphs/x.py).

Every folder is checked strictly and any error fails (issue 32: the 228 errors the code had when the
checker came in were listed in a baseline, then fixed; the baseline is gone).

    .venv/bin/python .ci/typecheck.py [mypy options]
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".mypy_cache"  # mypy keeps it out of git (it writes a .gitignore there); ruff skips it
LAYOUT = CACHE / "layout"  # a fixed place: mypy's cache stays valid between runs


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
    mapping = package_dirs()
    lay_out(mapping)
    status, lines = run_mypy(options, mapping)
    for line in lines:
        print(line)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
