"""Load a corpus from directories, single files, BEIR ``corpus.jsonl`` or the ``stdlib``
source (the docstrings of the running Python's standard library).

Unreadable, binary, non-UTF-8 and empty files, and redirect stubs (a page that only says
it has moved and links elsewhere, see ``cleaning.redirect_notice``), are skipped and
listed with the reason. A directory's build configuration files are skipped too (listed as
"build configuration, not documentation"): files named as in :data:`BUILD_CONFIGURATION_FILES`
(Sphinx's ``conf.py``, ``setup.py``, ``noxfile.py``, ``tox.ini``, a ``Makefile`` ...) or matching
:data:`BUILD_CONFIGURATION_PATTERNS` (``requirements*.txt``). They configure how a tree is built
and would otherwise be chunked as documentation and come back as retrieval results. A file
named on its own (not found in a directory walk) is always loaded: the user asked for it.
A file's title is its module path (Python) or its name until
cleaning finds its first heading; its path is the document's id and source. A
missing path, a malformed JSONL line or a corpus with no documents stops with an
:class:`~stores.errors.InputError` that names the file (and line).

A folder is walked by ``tools.corpus.tree_walk`` (symbolic links to folders inside it followed, each
real file read once: another path to a file already read is listed as "symbolic link to a file
already read"). Built documentation trees are read as their pages, once (``tools.corpus.built_trees``):
a Sphinx or MkDocs build's sources, static assets, viewcode listings, search, index and 404 pages,
and a page's source beside its built page (an AsciiDoc ``X.txt`` beside ``X.html``), are listed
with their reasons. ``--include`` / ``--exclude`` globs (``tools.corpus.path_patterns``) choose among a
folder's files; :attr:`LoadResult.warnings` names a pattern that matched nothing. A Markdown or HTML
page's MkDocs include lines are replaced by the files they name from inside the tree
(``tools.corpus.includes``); the warnings name the pages whose included files are not there.
"""

from __future__ import annotations

import ast
import fnmatch
import json
import sysconfig
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.jsonl import json_kind, read_jsonl
from benchsmith.stores.progress import ProgressCallback
from benchsmith.tools.corpus.built_trees import BuiltTrees
from benchsmith.tools.corpus.cleaning import redirect_notice
from benchsmith.tools.corpus.documents import Document, DocumentKind, SkippedFile, note_document_id, skipped_groups
from benchsmith.tools.corpus.includes import IncludeNotes, inline_includes
from benchsmith.tools.corpus.path_patterns import PathPatterns
from benchsmith.tools.corpus.tree_walk import WalkedFile, walk_tree
from benchsmith.tools.defaults import MAX_DOCUMENT_BYTES

STDLIB_SOURCE = "stdlib"
KIND_BY_SUFFIX: dict[str, DocumentKind] = {
    ".txt": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".rst": "rst",
    ".html": "html",
    ".htm": "html",
    ".py": "python",
    ".ipynb": "notebook",
}
INCLUDING_KINDS = frozenset({"markdown", "html"})  # MkDocs sources and built pages hold include lines
# Parts of the standard library that are tests, demos, tooling or vendored copies, not API.
STDLIB_EXCLUDED = {"site-packages", "test", "tests", "idlelib", "lib2to3", "turtledemo", "ensurepip", "__pycache__"}
# Files that configure how a documentation or code tree is built, tested or packaged: never
# documentation, whatever their suffix (matched on the file name, in any folder).
BUILD_CONFIGURATION_FILES = frozenset(
    {
        "conf.py",
        "setup.py",
        "noxfile.py",
        "fabfile.py",
        "dodo.py",
        "conftest.py",
        "Makefile",
        "GNUmakefile",
        "make.bat",
        "tox.ini",
        "setup.cfg",
        "pyproject.toml",
        "MANIFEST.in",
        "Pipfile",
        "Dockerfile",
        ".readthedocs.yaml",
        ".readthedocs.yml",
        "mkdocs.yml",
        "docutils.conf",
        "sphinx.conf",
    }
)
BUILD_CONFIGURATION_PATTERNS = ("requirements*.txt", "constraints*.txt")
BUILD_CONFIGURATION_REASON = "build configuration, not documentation"
BINARY_SNIFF_BYTES = 8192
INDEX_NAMES = {"index", "readme", "__init__"}
LINK_TO_READ_REASON = "symbolic link to a file already read"
LINK_TO_SKIPPED_REASON = "symbolic link to a file already skipped"


@dataclass
class LoadResult:
    documents: list[Document] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)
    files_read: int = 0
    # an --include / --exclude pattern that matched nothing; pages whose include lines name files not found
    warnings: list[str] = field(default_factory=list)


def load_sources(
    sources: Sequence[str],
    on_progress: ProgressCallback | None = None,
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
) -> LoadResult:
    """Read every source in order; raise :class:`InputError` if none yields a document."""
    result, patterns, includes = LoadResult(), PathPatterns(include, exclude), IncludeNotes()
    for item in iter_sources(sources, on_progress, patterns):
        if isinstance(item, SkippedFile):
            result.skipped.append(item)
        else:
            result.documents.append(item)
            result.files_read += 1
            includes.note(item.id, tuple(item.missing_includes))
    result.warnings = [*patterns.unmatched(), *includes.warnings()]
    if not result.documents:
        raise empty_corpus(sources, result.skipped)
    return result


def iter_sources(
    sources: Sequence[str], on_progress: ProgressCallback | None = None, patterns: PathPatterns | None = None
) -> Iterator[Document | SkippedFile]:
    """Every source's documents and skipped files in order, one at a time (a corpus of any size);
    the caller raises :func:`empty_corpus` when no document came; a document id an earlier document
    has is an InputError where it comes (only ids are held). ``patterns`` choose among the
    files of source folders (``patterns.unmatched()`` afterwards names those that matched none)."""
    seen = 0
    document_sources: dict[str, str] = {}  # document id → its source: a repeated id stops the read (chunk ids name it)
    for source in sources:
        for item in _iter_source(source, patterns or PathPatterns()):
            if isinstance(item, Document):
                note_document_id(item, document_sources)
            yield item
            seen += 1
            if on_progress:
                on_progress(seen, None)


def empty_corpus(sources: Sequence[str], skipped: Sequence[SkippedFile]) -> InputError:
    """The error of sources without a document, saying why their files were skipped (grouped by reason)."""
    reasons = "; ".join(
        f"{group.count} {group.reason} ({', '.join(group.paths)}{', …' if group.count > 1 else ''})"
        for group in skipped_groups(skipped, examples=1)
    )
    listed = f"; skipped {len(skipped)} file(s): {reasons}" if skipped else ""
    return InputError(f"empty corpus: no readable document in {', '.join(sources)}{listed}")


def _iter_source(source: str, patterns: PathPatterns) -> Iterator[Document | SkippedFile]:
    if source == STDLIB_SOURCE:
        yield from iter_stdlib_documents()
        return
    path = Path(source)
    if not path.exists():
        raise InputError(f"{source}: no such file or directory")
    if path.is_dir() and (path / "corpus.jsonl").is_file():
        yield from _iter_beir_source(path / "corpus.jsonl")
    elif path.is_dir():
        yield from _iter_directory(path, patterns)
    elif path.suffix == ".jsonl":
        yield from _iter_beir_source(path)
    else:
        yield _load_file(path, root=path.parent)


def _iter_directory(root: Path, patterns: PathPatterns) -> Iterator[Document | SkippedFile]:
    """The folder's files (``tools.corpus.tree_walk``): those reached without a symbolic link first, then
    those reached through one, so a real file is read under its own path and a link to it is listed."""
    walked = walk_tree(root)
    yield from walked.skipped
    trees = BuiltTrees(root)
    read: dict[str, bool] = {}  # real path → was the file read (else skipped)
    for entry in [entry for entry in walked.files if not entry.linked] + [
        entry for entry in walked.files if entry.linked
    ]:
        if reason := patterns.skip_reason(entry.relative.as_posix()):
            yield SkippedFile(str(entry.path), reason)  # not claimed: another path to it may be included
            continue
        item = _walked_file(entry, root, trees, read)
        read.setdefault(entry.real, isinstance(item, Document))
        yield item


def _walked_file(entry: WalkedFile, root: Path, trees: BuiltTrees, read: dict[str, bool]) -> Document | SkippedFile:
    path = entry.path
    if entry.real in read:
        return SkippedFile(str(path), LINK_TO_READ_REASON if read[entry.real] else LINK_TO_SKIPPED_REASON)
    if reason := trees.skip_reason(entry.relative):
        return SkippedFile(str(path), reason)
    if is_build_configuration(path.name):
        return SkippedFile(str(path), BUILD_CONFIGURATION_REASON)
    if path.suffix.lower() not in KIND_BY_SUFFIX:
        return SkippedFile(str(path), f"unsupported file type {path.suffix or '(none)'}")
    return _load_file(path, root)


def is_build_configuration(name: str) -> bool:
    """Is a file of this name build configuration (see the module docstring)?"""
    return name in BUILD_CONFIGURATION_FILES or any(
        fnmatch.fnmatchcase(name, pattern) for pattern in BUILD_CONFIGURATION_PATTERNS
    )


def _load_file(path: Path, root: Path) -> Document | SkippedFile:
    kind = KIND_BY_SUFFIX.get(path.suffix.lower())
    if kind is None:
        return SkippedFile(str(path), f"unsupported file type {path.suffix or '(none)'}")
    text_or_reason = read_text_file(path)
    if isinstance(text_or_reason, SkippedFile):
        return text_or_reason
    text = text_or_reason
    if kind == "notebook":
        try:
            text = notebook_to_text(text)
        except ValueError as error:
            return SkippedFile(str(path), f"malformed notebook: {error}")
        if not text.strip():
            return SkippedFile(str(path), "empty notebook")
    if notice := redirect_notice(text, kind):
        return SkippedFile(str(path), notice)
    missing: tuple[str, ...] = ()
    if kind in INCLUDING_KINDS:
        included = inline_includes(text, path, root, escape=kind == "html")
        text, missing = included.text, included.missing
    relative = path.relative_to(root)
    return Document(
        id=str(relative),
        source=str(path),
        title=file_title(relative, kind),
        kind=kind,
        text=text,
        missing_includes=list(missing),
    )


def file_title(relative: Path, kind: DocumentKind) -> str:
    """A file's title until cleaning finds its first heading: the module path for Python
    (``pkg/mod.py`` → ``pkg.mod``), else the file's name without its suffix (the folder's
    name for an ``index`` or ``README`` page). The path itself stays in ``source``."""
    if kind == "python":
        parts = relative.with_suffix("").parts
        return ".".join(parts[:-1] if parts[-1] == "__init__" and len(parts) > 1 else parts)
    if relative.stem.lower() in INDEX_NAMES and len(relative.parts) > 1:
        return relative.parent.name
    return relative.stem


def read_text_file(path: Path) -> str | SkippedFile:
    """The file's text, or the reason it is skipped (binary, not UTF-8, empty, unreadable, larger than
    :data:`~benchsmith.tools.defaults.MAX_DOCUMENT_BYTES`: split it)."""
    try:
        if (size := path.stat().st_size) > MAX_DOCUMENT_BYTES:
            return SkippedFile(
                str(path),
                f"larger than {MAX_DOCUMENT_BYTES / 2**20:g} MiB, the limit of one "
                f"document (split it): {size / 2**20:.1f} MiB",
            )
        data = path.read_bytes()
    except OSError as error:
        return SkippedFile(str(path), f"unreadable: {error.strerror or error}")
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        return SkippedFile(str(path), "binary file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        return SkippedFile(str(path), f"not UTF-8 (invalid byte at offset {error.start})")
    if not text.strip():
        return SkippedFile(str(path), "empty file")
    return text


def notebook_to_text(raw: str) -> str:
    """Markdown cells as prose, code cells fenced, outputs dropped."""
    try:
        cells = json.loads(raw)["cells"]
    except (json.JSONDecodeError, KeyError, TypeError) as error:
        raise ValueError(str(error)) from None
    parts = []
    for cell in cells:
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        if not source.strip():
            continue
        parts.append(f"```python\n{source}\n```" if cell.get("cell_type") == "code" else source)
    return "\n\n".join(parts)


def iter_beir_corpus(path: Path) -> Iterator[Document]:
    """BEIR ``corpus.jsonl``: one ``{"_id", "title", "text"}`` object per line."""
    for _, _, document in beir_documents(read_jsonl(path), path):
        yield document


def _iter_beir_source(path: Path) -> Iterator[Document]:
    """A BEIR corpus ingested: as :func:`iter_beir_corpus`, a document id an earlier line has
    stopping the read naming both lines (chunk ids name their document)."""
    first_line: dict[str, int] = {}
    for _, line_number, document in beir_documents(read_jsonl(path, MAX_DOCUMENT_BYTES), path):
        if (earlier := first_line.setdefault(document.id, line_number)) != line_number:
            raise InputError(f"{path}:{line_number}: document id {document.id!r} repeats line {earlier}")
        yield document


def beir_documents(records: Iterable[tuple[int, dict[str, Any]]], path: Path) -> Iterator[tuple[int, int, Document]]:
    """``(row, line number, document)`` of BEIR records given as ``(line number, record)``: row
    counts the records (0-based), so a reader that notes rows (stores.persistence.jsonl.JsonlRows) can read one
    back. A document of blank text is skipped; a record without ``_id`` or ``text`` is an InputError."""
    for row, (line_number, record) in enumerate(records):
        doc_id, text = record.get("_id"), record.get("text")
        if not isinstance(doc_id, str | int) or doc_id == "":
            raise InputError(f"{path}:{line_number}: missing '_id'")
        if text is None:
            raise InputError(f"{path}:{line_number}: missing 'text' for document {doc_id!r}")
        if not isinstance(text, str):
            raise InputError(
                f"{path}:{line_number}: 'text' of document {doc_id!r} is {json_kind(text)}, expected a string"
            )
        if text.strip():
            yield row, line_number, beir_document(record, path)


def beir_document(record: dict[str, Any], path: Path) -> Document:
    """The document of a BEIR record that :func:`beir_documents` accepted."""
    return Document(
        id=str(record["_id"]), source=str(path), title=str(record.get("title") or ""), kind="beir", text=record["text"]
    )


def iter_stdlib_documents() -> Iterator[Document | SkippedFile]:
    """One document per public module of the running Python's standard library.

    The text is the module docstring followed by each public class, function and method
    with its signature and docstring; the title is the module path (``json.decoder``).
    Sources are parsed with :mod:`ast`, never imported, so no module side effect runs.
    """
    root = Path(sysconfig.get_paths()["stdlib"])
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if any(part in STDLIB_EXCLUDED or part.startswith("_") for part in relative.parts[:-1]):
            continue
        module = ".".join(relative.with_suffix("").parts).removesuffix(".__init__")
        if module.rpartition(".")[2].startswith("_") and path.name != "__init__.py":
            continue
        text_or_reason = read_text_file(path)
        if isinstance(text_or_reason, SkippedFile):
            yield text_or_reason
            continue
        try:
            text = module_documentation(module, ast.parse(text_or_reason))
        except SyntaxError as error:
            yield SkippedFile(str(path), f"not parseable: {error.msg}")
            continue
        if text:
            yield Document(id=module, source=str(path), title=module, kind="stdlib", text=text)


def module_documentation(module: str, tree: ast.Module) -> str:
    """Docstrings of a parsed module in reading order, each object under its dotted name."""
    sections = []
    if docstring := ast.get_docstring(tree):
        sections.append(docstring)

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if not isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            if node.name.startswith("_") and node.name != "__init__":
                continue
            name = f"{prefix}.{node.name}"
            if docstring := ast.get_docstring(node):
                signature = "" if isinstance(node, ast.ClassDef) else f"({ast.unparse(node.args)})"
                sections.append(f"{name}{signature}\n{docstring}")
            if isinstance(node, ast.ClassDef):
                visit(node.body, name)

    visit(tree.body, module)
    return "\n\n".join(sections)
