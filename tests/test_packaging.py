"""benchsmith as users install it: one top-level package beside other distributions. (The
README's Python example runs in tests/test_readme_and_docs.py, in the README's order.)"""

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run(command: list[str], **options) -> subprocess.CompletedProcess:
    result = subprocess.run(command, capture_output=True, text=True, **options)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


@pytest.mark.slow
def test_the_wheel_installs_one_top_level_package_beside_a_distribution_that_ships_tools(tmp_path):
    """A chat app's own `tools` package and benchsmith, installed from wheels into one fresh
    environment: both import and work, and benchsmith names only `benchsmith` as top level."""
    wheels = tmp_path / "wheels"
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(wheels),
            str(ROOT),
        ]
    )
    app = tmp_path / "chat-app"
    (app / "tools").mkdir(parents=True)
    (app / "tools" / "__init__.py").write_text("def search(query):\n    return f'app search: {query}'\n")
    (app / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=77"]\n'
        'build-backend = "setuptools.build_meta"\n\n'
        '[project]\nname = "chat-app-tools"\nversion = "1.0"\n\n'
        '[tool.setuptools]\npackages = ["tools"]\n'
    )
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(wheels),
            str(app),
        ]
    )

    # A fresh environment: both wheels installed into it; the dependencies (torch and the rest)
    # are borrowed from this test's environment, after its own site-packages.
    environment = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(environment)])
    site_packages = Path(
        run(
            [str(environment / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]
        ).stdout.strip()
    )
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            "--target",
            str(site_packages),
            *map(str, sorted(wheels.glob("*.whl"))),
        ]
    )
    (site_packages / "zz-borrowed-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")

    installed = {path.name for path in site_packages.iterdir()}
    assert {"benchsmith", "tools"} <= installed
    assert not {"graphs", "agents", "stores", "evals"} & installed
    top_level = next(site_packages.glob("benchsmith-*.dist-info")) / "top_level.txt"
    assert top_level.read_text().split() == ["benchsmith"]

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        '{"_id": "d1", "title": "Tides", "text": "High water comes twice a day at the harbour."}\n'
        '{"_id": "d2", "title": "Bread", "text": "Sourdough rises overnight in a cool kitchen."}\n'
    )
    script = f"""
import tools, benchsmith
from benchsmith.tools.retrieval.bm25 import BM25Index
from benchsmith.cli import app
assert tools.search("x") == "app search: x", tools.__file__
assert benchsmith.__file__.startswith({str(site_packages)!r}), benchsmith.__file__
preview = benchsmith.preview_ingest([{str(corpus)!r}])
assert preview.documents == 2, preview
index = BM25Index(["d1", "d2"], ["High water comes twice a day", "Sourdough rises overnight"])
assert list(index.search({{"q": "when is high water"}}, 1)["q"]) == ["d1"]
print("ok")
"""
    result = run(
        [str(environment / "bin" / "python"), "-c", script],
        cwd=tmp_path,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": ""},
    )
    assert result.stdout.strip().endswith("ok")
