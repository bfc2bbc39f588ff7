"""Small built documentation trees, written in a test's folder, laid out as Debian's ``-doc``
packages ship them: a Sphinx build (pages, ``_sources/*.rst.txt``, ``_static/``, ``_modules/``,
index and search pages, and a sibling ``rst -> html/_sources`` link), a MkDocs build, and an
AsciiDoc build (git-doc: each ``X.txt`` beside its ``X.html``, includes, an ``index.html`` link)."""

from __future__ import annotations

import os
from pathlib import Path

PROSE = (
    "The session object keeps settings across requests, pools connections to each host and "
    "sends cookies back to the server that set them. Reuse one session for many calls to the same "
    "service: the connection stays open and the handshake is paid once."
)


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def sphinx_page(title: str, body: str) -> str:
    """A page as Sphinx's basic theme writes it: navigation, sidebar and footer around the body."""
    return (
        f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{title} — Pkg 2.0</title>'
        '<link rel="stylesheet" href="_static/basic.css"><script src="_static/doctools.js"></script></head>'
        '<body><div class="related" role="navigation"><ul><li><a href="genindex.html">index</a></li>'
        '<li><a href="py-modindex.html">modules</a></li></ul></div>'
        f'<div class="document"><div class="body" role="main">{body}</div></div>'
        '<div class="sphinxsidebar" role="navigation"><div class="sphinxsidebarwrapper"><h3>Navigation</h3>'
        '<ul><li><a href="guide/quickstart.html">Quickstart</a></li><li><a href="api.html">API</a></li></ul>'
        '<div id="searchbox" role="search"><form action="search.html"><input name="q"></form></div>'
        '</div></div><div class="footer">&copy; 2024 The Pkg team.</div></body></html>'
    )


def api_entry(name: str, summary: str) -> str:
    return (
        f'<dl class="py function"><dt class="sig sig-object py" id="pkg.{name}"><span class="sig-name">'
        f'{name}</span>(<em>url</em>, <em>**kwargs</em>)<a class="headerlink" href="#pkg.{name}">¶</a></dt>'
        f"<dd><p>{summary} It returns a response object whose status, headers and body the caller reads.</p>"
        '<dl class="field-list simple"><dt>Parameters</dt><dd><p><strong>url</strong> – the address to '
        "call, with its scheme and host.</p></dd></dl></dd></dl>"
    )


SPHINX_PAGES = {
    "index.html": sphinx_page(
        "Pkg",
        (
            '<section id="pkg"><h1>Pkg: HTTP for people<a class="headerlink" href="#pkg">¶</a></h1>'
            '<p>Release v2.0. Pkg is an HTTP library for people.</p><div class="toctree-wrapper compound"><ul>'
            '<li class="toctree-l1"><a class="reference internal" href="guide/quickstart.html">Quickstart</a><ul>'
            '<li class="toctree-l2"><a class="reference internal" href="guide/quickstart.html#sessions">Sessions</a>'
            '</li></ul></li><li class="toctree-l1"><a class="reference internal" href="guide/advanced.html">Advanced '
            'usage</a><ul><li class="toctree-l2"><a class="reference internal" href="guide/advanced.html#timeouts">'
            'Timeouts</a></li><li class="toctree-l2"><a class="reference internal" href="guide/advanced.html#retries">'
            "Retries</a></li></ul></li>"
            '<li class="toctree-l1"><a class="reference internal" href="api.html">Developer interface</a></li>'
            '<li class="toctree-l1"><a class="reference internal" href="changes.html">Release history</a></li>'
            "</ul></div></section>"
        ),
    ),
    "guide/quickstart.html": sphinx_page(
        "Quickstart",
        (
            f'<section id="quickstart"><h1>Quickstart</h1><p>{PROSE}</p><section id="sessions"><h2>Sessions</h2>'
            f"<p>{PROSE} Close it when you are done, or use it as a context manager.</p></section></section>"
        ),
    ),
    "guide/advanced.html": sphinx_page(
        "Advanced usage",
        (
            f'<section id="advanced"><h1>Advanced usage</h1><p>Timeouts: {PROSE}</p>'
            "<p>Retries are not made by default; mount an adapter with a retry policy to get them.</p></section>"
        ),
    ),
    "api.html": sphinx_page(
        "Developer interface",
        (
            '<section id="api"><h1>Developer interface</h1><p>The main interface.</p>'
            + api_entry("get", "Sends a GET request.")
            + api_entry("post", "Sends a POST request with a body.")
            + api_entry("request", "Constructs and sends a request of any method.")
            + "</section>"
        ),
    ),
    "changes.html": sphinx_page(
        "Release history",
        (
            '<section id="release-history"><h1>Release history</h1>'
            '<section id="id1"><h2>2.0.0 (2024-03-01)</h2><p>Sessions pool connections per host.</p></section>'
            '<section id="id2"><h2>1.9.2 (2023-11-20)</h2><p>Fixed a leak of sockets on redirects.</p></section>'
            '<section id="id3"><h2>1.9.1 (2023-10-02)</h2><p>Timeouts apply to the connect phase too.</p></section>'
            "</section>"
        ),
    ),
    "genindex.html": sphinx_page("Index", '<h1 id="index">Index</h1><a href="api.html#pkg.get">get()</a>'),
    "py-modindex.html": sphinx_page("Python Module Index", '<h1>Python Module Index</h1><a href="api.html">pkg</a>'),
    "search.html": sphinx_page(
        "Search",
        '<h1 id="search-documentation">Search</h1><p>Searching for multiple words '
        "only shows matches that contain all words.</p>",
    ),
    "_modules/index.html": sphinx_page(
        "Overview: module code",
        '<h1>All modules for which code is available</h1><ul><li><a href="pkg/api.html">pkg.api</a></li></ul>',
    ),
    "_modules/pkg/api.html": sphinx_page(
        "pkg.api",
        '<h1>Source code for pkg.api</h1><div class="highlight"><pre>'
        'def get(url, **kwargs):\n    return request("get", url)</pre></div>',
    ),
}
SPHINX_SOURCES = {
    "index.rst.txt": "Pkg: HTTP for people\n====================\n\n.. toctree::\n\n   guide/quickstart\n   api\n",
    "guide/quickstart.rst.txt": f"Quickstart\n==========\n\n{PROSE}\n",
    "guide/advanced.rst.txt": f"Advanced usage\n==============\n\nTimeouts: {PROSE}\n",
    "api.rst.txt": "Developer interface\n===================\n\n.. autofunction:: pkg.get\n",
    "changes.rst.txt": "Release history\n===============\n\n2.0.0 (2024-03-01)\n------------------\n\nPooling.\n",
}
SPHINX_PAGES_READ = [
    "html/api.html",
    "html/changes.html",
    "html/guide/advanced.html",
    "html/guide/quickstart.html",
    "html/index.html",
]


def sphinx_build(package: Path, outside: Path) -> Path:
    """``package/html`` a Sphinx build and ``package/rst -> html/_sources`` (as python-flask-doc ships
    them); a ``_static`` script is a link to a file outside the tree (Debian links its libjs copies)."""
    html = package / "html"
    for name, text in SPHINX_PAGES.items():
        write(html / name, text)
    for name, text in SPHINX_SOURCES.items():
        write(html / "_sources" / name, text)
    write(html / "_static" / "basic.css", "div.body { margin: 0 }\n")
    write(html / "_static" / "doctools.js", "var Documentation = {};\n")
    (html / "_static" / "jquery.js").symlink_to(write(outside / "javascript" / "jquery.js", "/* jQuery */\n"))
    write(html / "_images" / "logo.png", b"\x89PNG\r\n\x1a\n\0\0")
    write(html / "searchindex.js", 'Search.setIndex({"docnames": ["index"]})\n')
    write(html / "objects.inv", b"# Sphinx inventory version 2\n\x78\x9c\x03\x00")
    (package / "rst").symlink_to("html/_sources")
    return html


def mkdocs_page(title: str, body: str) -> str:
    return (
        f'<!DOCTYPE html><html><head><title>{title} - Site</title><link href="../css/theme.css" rel="stylesheet">'
        '</head><body><div class="navbar" role="navigation"><a href="../index.html">Site</a>'
        '<a href="../user-guide/writing.html">Writing</a></div><div class="container"><div role="main">'
        f"{body}</div></div><footer><p>Documentation built with MkDocs.</p></footer>"
        '<script src="../search/main.js"></script></body></html>'
    )


MKDOCS_PAGES = {
    "index.html": mkdocs_page("Site", f'<h1 id="site">Site</h1><p>{PROSE}</p>'),
    "user-guide/writing.html": mkdocs_page("Writing", f'<h1 id="writing">Writing your docs</h1><p>{PROSE}</p>'),
    "about/release-notes.html": mkdocs_page(
        "Release Notes",
        (
            '<h1 id="release-notes">Release Notes</h1><h2>Version 1.4.2 (2022-11-01)</h2><p>Fixed the search.</p>'
            "<h2>Version 1.4.1 (2022-10-15)</h2><p>Themes load their translations.</p>"
        ),
    ),
    "dev-guide/api.html": mkdocs_page(
        "API reference",
        (
            '<h1 id="api-reference">API reference</h1><div class="doc doc-object doc-function">'
            '<h2 id="site.build" class="doc doc-heading"><code>build(config, live_server=False, dirty=False)</code></h2>'
            '<div class="doc doc-contents first"><p>Performs a full build of the site from its configuration, '
            "writing every page, theme file and the search index into the site folder.</p></div></div>"
        ),
    ),
    "404.html": mkdocs_page("Not found", "<h1>404</h1><p>Page not found</p>"),
}
MKDOCS_OTHER_FILES = {
    "sitemap.xml": '<?xml version="1.0"?><urlset><url><loc>None</loc></url></urlset>\n',
    "sitemap.xml.gz": b"\x1f\x8b\x08\x00\x00",
    "search/search_index.json": '{"docs": [{"location": "", "text": "Site", "title": "Site"}]}\n',
    "search/main.js": "function doSearch() {}\n",
    "search/lunr.js": "var lunr = {};\n",
    "assets/_mkdocstrings.css": ".doc { margin: 0 }\n",
    "css/theme.css": "body { margin: 0 }\n",
    "js/theme.js": "$(function () {});\n",
    "img/favicon.ico": b"\0\0\1\0",
}
MKDOCS_PAGES_READ = ["about/release-notes.html", "dev-guide/api.html", "index.html", "user-guide/writing.html"]


def mkdocs_build(site: Path) -> Path:
    for name, text in {**MKDOCS_PAGES, **MKDOCS_OTHER_FILES}.items():
        write(site / name, text)
    return site


def asciidoc_page(title: str, body: str) -> str:
    return (
        f'<?xml version="1.0" encoding="UTF-8"?><html><head><meta name="generator" content="AsciiDoc 10.2.0" />'
        f'<title>{title}</title></head><body class="manpage"><div id="header"><h1>{title}</h1></div>'
        f'<div id="content"><div class="sect1"><h2 id="_description">DESCRIPTION</h2><div class="sectionbody">'
        f'<div class="paragraph"><p>{body}</p></div></div></div></div>'
        '<div id="footer"><div id="footer-text">Last updated 2025-10-07</div></div></body></html>'
    )


def asciidoc_build(doc: Path) -> Path:
    """git-doc's layout: ``git-add.txt`` beside ``git-add.html``, an include with no page of its own,
    a technical note with no page that nothing includes (a page to read), ``index.html -> git-add.html``."""
    write(
        doc / "git-add.html",
        asciidoc_page(
            "git-add(1)", "This command updates the index using the current content found in the working tree. " + PROSE
        ),
    )
    write(
        doc / "git-add.txt",
        "git-add(1)\n==========\n\nDESCRIPTION\n-----------\nThis command updates the index.\n"
        "\ninclude::diff-options.txt[]\n",
    )
    write(doc / "git-log.html", asciidoc_page("git-log(1)", "Shows the commit logs. " + PROSE))
    write(
        doc / "git-log.txt",
        "git-log(1)\n==========\n\nShows the commit logs.\n\ninclude::{build_dir}/"
        "diff-options.txt[]\ninclude::technical/log-format.txt[]\n",
    )
    write(doc / "diff-options.txt", "--patch::\n\tGenerate patch.\n")
    write(doc / "technical" / "log-format.txt", "--format::\n\tThe format of each commit.\n")
    write(doc / "technical" / "notes.txt", f"Sparse index design notes\n=========================\n\n{PROSE}\n")
    write(doc / "docbook-xsl.css", "body { margin: 0 }\n")
    (doc / "index.html").symlink_to("git-add.html")
    return doc


def walked_files(root: Path) -> set[str]:
    """Every file under ``root``, symbolic links to folders followed (what a loader must account for)."""
    return {os.path.join(folder, name) for folder, _, names in os.walk(root, followlinks=True) for name in names}
