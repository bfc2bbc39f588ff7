"""Cleaning Markdown, MyST and reStructuredText as a reader of the built Sphinx page sees them."""

import pytest

from benchsmith.tools.corpus.cleaning import clean_document, clean_text, redirect_notice
from benchsmith.tools.corpus.documents import Document
from benchsmith.tools.text.markdown_text import markdown_inline
from benchsmith.tools.text.rst_text import rst_inline


@pytest.mark.parametrize(
    "source, shown",
    [
        ("{ref}`the install guide <install-target>`", "the install guide"),
        ("{ref}`install-target`", "install-target"),
        ("{doc}`Getting started <tutorial/start>`", "Getting started"),
        ("{py:meth}`~benchsmith.tools.corpus.chunking.chunk_document`", "chunk_document"),
        ("{func}`os.path.join`", "os.path.join"),
        ("{pep}`8`", "PEP 8"),
        ("[the docs](https://docs.example.org/a_(b))", "the docs"),
        ("![logo](img/logo.png)", "logo"),
        ("`List<int>` and <https://example.org>", "List<int> and https://example.org"),
        ("[a span]{#anchor .class}", "a span"),
        ("**bold**, *emphasis* and a_snake_case_name", "bold, emphasis and a_snake_case_name"),
        # intersphinx: the inventory's name never shows, nor does a term's target
        ("{term}`version specifiers <pypug:Version Specifier>`", "version specifiers"),
        ("{ref}`pypug:Version Specifier`", "Version Specifier"),
        ("{ref}`<pypug:Version Specifier>`", "Version Specifier"),
        ("see <pypug:Version Specifier> first", "see Version Specifier first"),
        ("<inv:pypug#Version Specifier>", "Version Specifier"),
        ("[](pypug:version-specifiers)", "version-specifiers"),
        ("[the spec](pypug:version-specifiers)", "the spec"),
        ("`Mapping<str:int>` and <https://example.org/a:b>", "Mapping<str:int> and https://example.org/a:b"),
    ],
)
def test_myst_inline_markup_keeps_the_readable_text(source, shown):
    assert markdown_inline(source) == shown


@pytest.mark.parametrize(
    "source, shown",
    [
        (":ref:`the install guide <install-target>`", "the install guide"),
        (":ref:`install-target`", "install-target"),
        (":func:`os.path.join`", "os.path.join"),
        (":doc:`Title <path/to/page>`", "Title"),
        (":py:meth:`~a.b.c`", "c"),
        (":class:`!NotLinked`", "NotLinked"),
        ("`Python <https://python.org>`_ and `Sphinx`_ and docutils_", "Python and Sphinx and docutils"),
        ("``literal <not a link>`` and ``:func:`kept```", "literal <not a link> and :func:`kept`"),
        (":ref:`a title wrapped\n   over two lines <target>`", "a title wrapped over two lines"),
        ("*emphasis* and **strong** and a footnote [#f1]_", "emphasis and strong and a footnote"),
        (":term:`version specifiers <pypug:Version Specifier>`", "version specifiers"),
        (":ref:`pypug:Version Specifier`", "Version Specifier"),
        (":doc:`Sphinx <https://www.sphinx-doc.org>`", "Sphinx"),
        (":kbd:`Ctrl+C` and :file:`C:/temp`", "Ctrl+C and C:/temp"),
    ],
)
def test_rst_inline_markup_keeps_the_readable_text(source, shown):
    assert rst_inline(source, {}) == shown


def test_rst_directives_go_and_their_reader_text_stays():
    rst = """:orphan:
:tocdepth: 2

.. _guide-label:

Guide
=====

.. toctree::
   :maxdepth: 2
   :caption: Contents

   install
   usage

.. meta::
   :description: hidden metadata

.. currentmodule:: benchsmith.tools

.. highlight:: python

.. |project| replace:: benchsmith

Welcome to |project|.

.. code-block:: python
   :caption: example.py
   :linenos:

   def add(a, b):
       return a + b

Run it from a shell::

    $ python example.py
      indented output

.. note:: Notes keep
   their text.

.. tab:: Linux

   Install with apt.

.. image:: diagram.png
   :alt: diagram

.. figure:: chart.png
   :width: 50%

   The caption stays.

.. function:: add(a, b)

   Sum two numbers.

.. versionadded:: 2.1 The b argument.

.. a comment that nobody reads
"""
    text = clean_text(rst, "rst")
    assert text.startswith("Guide\n\nWelcome to benchsmith.")
    for gone in (
        ":orphan:",
        "tocdepth",
        "guide-label",
        "toctree",
        "maxdepth",
        "Contents",
        "install\nusage",
        "meta",
        "hidden metadata",
        "currentmodule",
        "highlight",
        "replace::",
        "code-block",
        ":caption:",
        ":linenos:",
        "tab::",
        "image",
        "diagram",
        "chart.png",
        ":width:",
        "comment",
        ".. ",
        "::",
    ):
        assert gone not in text, gone
    assert "```python\ndef add(a, b):\n    return a + b\n```" in text  # code keeps its indentation
    assert "Run it from a shell:\n\n```python\n$ python example.py\n  indented output\n```" in text
    for kept in (
        "Notes keep\ntheir text.",
        "Linux\n\nInstall with apt.",
        "The caption stays.",
        "add(a, b)\n\nSum two numbers.",
        "Added in version 2.1: The b argument.",
    ):
        assert kept in text, kept


def test_myst_directives_go_and_their_reader_text_stays():
    myst = """---
myst:
  html_meta:
    description: hidden
---
(guide-label)=
# Guide

% a MyST comment

```{toctree}
:maxdepth: 2
:hidden:

install
usage
```

```{code-block} python
:caption: example.py
:emphasize-lines: 2

def add(a, b):
    return a + b
```

::::{tab-set}
:::{tab-item} Linux
Install with apt.
:::
::::

```{note}
Notes keep their text.
```

```{image} diagram.png
:alt: diagram
```

```{eval-rst}
.. warning:: RST inside MyST: :func:`os.getcwd`.
```

<!-- an HTML comment -->
"""
    text = clean_text(myst, "markdown")
    for gone in (
        "myst:",
        "html_meta",
        "hidden",
        "guide-label",
        "MyST comment",
        "toctree",
        "maxdepth",
        "install",
        "{",
        ":caption:",
        "emphasize",
        "tab-set",
        "tab-item",
        ":::",
        "diagram",
        "eval-rst",
        "<!--",
        ".. ",
    ):
        assert gone not in text, gone
    assert "```python\ndef add(a, b):\n    return a + b\n```" in text
    for kept in ("Guide", "Linux\n\nInstall with apt.", "Notes keep their text.", "RST inside MyST: os.getcwd."):
        assert kept in text, kept


def test_an_mkdocs_admonitions_title_is_a_label_of_its_own_not_the_first_words_of_its_text():
    # FastAPI's sources (development): "Technical Details You could also use ..." was read as one sentence
    markdown = (
        "# Cookies\n\n"
        '!!! note "Technical Details"\n'
        "    You could also use `from starlette.responses import Response`.\n\n"
        "    FastAPI provides the same responses as a convenience.\n\n"
        "!!! tip\n    An admonition without a title keeps its text.\n\n"
        '??? info "Collapsed"\n    Folded text stays too.\n\n'
        '=== "Python 3.10+"\n\n    ```Python\n    print("tabbed")\n    ```\n'
    )
    text = clean_text(markdown, "markdown")
    paragraphs = [" ".join(paragraph.split()) for paragraph in text.split("\n\n") if paragraph.strip()]
    assert "Technical Details" in paragraphs
    assert "You could also use from starlette.responses import Response." in paragraphs
    assert "An admonition without a title keeps its text." in paragraphs
    assert "Collapsed" in paragraphs and "Folded text stays too." in paragraphs
    assert "!!!" not in text and "???" not in text and "tip" not in text
    assert "Python 3.10+" in paragraphs and "===" not in text  # a content tab's title, then its code
    assert '```Python\nprint("tabbed")\n```' in text


def test_lists_made_only_of_links_go_and_lists_with_words_stay():
    markdown = (
        "Intro paragraph.\n\n- [Install](install.md)\n- {doc}`usage`\n- <https://example.org>\n\n"
        "Next paragraph.\n\n- [Install](install.md): how to set it up\n- plain item\n"
    )
    assert clean_text(markdown, "markdown") == (
        "Intro paragraph.\n\nNext paragraph.\n\n- Install: how to set it up\n- plain item"
    )
    rst = "Intro.\n\n* :doc:`install`\n* `Home <index.html>`_\n\nMore.\n\n* :func:`os.path.join` joins paths\n"
    assert clean_text(rst, "rst") == "Intro.\n\nMore.\n\n* os.path.join joins paths"


def test_headings_are_recorded_with_their_levels_and_offsets():
    rst = "=====\nGuide\n=====\n\nIntro.\n\nInstall\n=======\n\nSteps.\n\nFrom source\n-----------\n\nBuild it.\n"
    document = clean_document(Document("guide.rst", "/docs/guide.rst", "guide", "rst", rst))
    assert document.title == "Guide"
    assert [(level, title) for _, level, title in document.headings] == [
        (1, "Guide"),
        (2, "Install"),
        (3, "From source"),
    ]
    for offset, _, title in document.headings:  # each offset points at its heading's line
        assert document.text[offset : offset + len(title)] == title
    markdown = "# Guide\n\nIntro.\n\n## Install\n\nSteps.\n\nSetext section\n--------------\n\nText.\n"
    document = clean_document(Document("guide.md", "/docs/guide.md", "guide", "markdown", markdown))
    assert [(level, title) for _, level, title in document.headings] == [
        (1, "Guide"),
        (2, "Install"),
        (2, "Setext section"),
    ]
    assert "#" not in document.text and "---" not in document.text


def test_html_headings_code_and_navigation():
    html = (
        "<html><head><title>t</title></head><body><div class='sphinxsidebar'>Menu entry</div>"
        "<h1>Guide<a class='headerlink' href='#guide'>¶</a></h1><p>Some <em>text</em>.</p><h2>Install</h2>"
        "<div class='highlight-python'><pre>def f():\n    return 1\n</pre></div></body></html>"
    )
    document = clean_document(Document("g.html", "/g.html", "g", "html", html))
    assert document.text == "Guide\n\nSome text.\n\nInstall\n\n```python\ndef f():\n    return 1\n```"
    assert [(level, title) for _, level, title in document.headings] == [(1, "Guide"), (2, "Install")]


def test_a_numbered_toctrees_section_numbers_are_left_out_of_headings_and_references():
    # Python's own manual numbers its sections (<span class="section-number">8.6.4.7. </span>): a question asked
    # "Can you explain 8.6.4.7. group patterns?" (python-docs, development, thirty-first session)
    html = (
        "<html><body><h1><span class='section-number'>8.6. </span>The match statement</h1>"
        "<h2><span class='section-number'>8.6.4.7. </span>Group Patterns</h2><p>A group pattern adds parentheses; "
        "see <a href='#x'><span class='section-number'>8.6.4. </span>Patterns</a>. Python 3.10 added it.</p>"
        "</body></html>"
    )
    document = clean_document(Document("m.html", "/m.html", "m", "html", html))
    assert [title for _, _, title in document.headings] == ["The match statement", "Group Patterns"]
    assert "see Patterns." in document.text and "Python 3.10 added it." in document.text
    assert "8.6" not in document.text


def test_a_page_the_build_left_as_markdown_is_read_by_its_markdown_headings():
    # Debian's python-black-doc: MyST sources built without the MyST parser, so the headings are paragraphs, the
    # only <h1> is a stray ")" and emphasis shows its marks
    html = (
        "<html><head><title>&lt;no title&gt;</title></head><body><div class='body'>"
        "<p># The basics</p><p>Configure _Black_ with a **pyproject.toml** file.</p>"
        "<p>## What on Earth is a pyproject.toml file?</p><p>A file read from src/_black_version.py.</p>"
        "<p>## Where _Black_ looks for the file</p>"
        "<p># Unit tests\n(.venv)$ tox -e py</p><h1>)<a class='headerlink' href='#id13'>¶</a></h1>"
        "<p>Options such as --line-length.</p></div></body></html>"
    )
    document = clean_document(Document("b.html", "/b.html", "b", "html", html))
    assert [(level, title) for _, level, title in document.headings] == [
        (1, "The basics"),
        (2, "What on Earth is a pyproject.toml file?"),
        (2, "Where Black looks for the file"),
    ]
    assert "Configure Black with a pyproject.toml file." in document.text
    assert "src/_black_version.py" in document.text  # an underscore of a name is no emphasis
    assert "# Unit tests (.venv)$ tox -e py" in document.text  # a shell comment over its command is no heading
    assert ")" not in [title for _, _, title in document.headings]


def test_a_page_with_headings_keeps_a_markdown_like_paragraph_as_text():
    # valgrind's Callgrind format page: a file format's first line, on a page the build rendered
    html = "<html><body><h1>Callgrind Format</h1><p># callgrind format</p><p>Some _emphasis_ stays.</p></body></html>"
    document = clean_document(Document("c.html", "/c.html", "c", "html", html))
    assert [title for _, _, title in document.headings] == ["Callgrind Format"]
    assert "# callgrind format" in document.text and "_emphasis_" in document.text


def test_a_heading_of_a_lone_option_marker_stays():
    # nodejs's command-line page heads the sections of the "-" and "--" options with them
    html = "<html><body><h1>CLI</h1><h2>-</h2><p>Alias for stdin.</p><h2>--</h2><p>Ends the options.</p></body></html>"
    document = clean_document(Document("n.html", "/n.html", "n", "html", html))
    assert [title for _, _, title in document.headings] == ["CLI", "-", "--"]


@pytest.mark.parametrize(
    "kind, source",
    [
        ("markdown", "# Old page\n\nThis page has moved to [the new guide](new/guide.md).\n"),
        ("rst", "Old page\n========\n\nThis page has been moved to :doc:`new/guide`.\n"),
        ("markdown", "---\nredirect: x\n---\nThis content now lives at https://docs.example.org/guide/ .\n"),
        (
            "html",
            "<html><head><meta http-equiv='refresh' content='0; url=new.html'></head>"
            "<body><p>Redirecting to <a href='new.html'>new.html</a></p></body></html>",
        ),
        (
            "markdown",
            "(version-specifiers)=\n\n# Version specifiers\n\nThis is now covered in {ref}`pypug:Version Specifier`.\n",
        ),
        ("rst", "Platform tags\n=============\n\nThis is now covered in :doc:`pypug:specifications/platform-tags`.\n"),
    ],
)
def test_redirect_stubs_are_recognized(kind, source):
    assert redirect_notice(source, kind).startswith("redirect page")


@pytest.mark.parametrize(
    "kind, source",
    [
        # moved, but a real page around it
        (
            "markdown",
            "# Configuration\n\nThe cache moved to the workspace folder in 2.0. "
            + "It keeps responses. " * 30
            + "See [the cache](cache.md).",
        ),
        # short, but no notice
        ("markdown", "# Install\n\nRun pip install benchsmith, then see [the quickstart](start.md).\n"),
        # a notice without anywhere to go
        ("text", "The office has moved to the third floor."),
    ],
)
def test_pages_that_are_not_redirect_stubs(kind, source):
    assert redirect_notice(source, kind) is None


def test_myst_labels_go_whatever_their_name():
    source = "(install-guide)=\n# Install\n\n(pypug labels:Version Specifier)=\nInstall it with pip, then run it.\n"
    text = clean_text(source, "markdown")
    assert ")=" not in text and "pypug" not in text
    assert "Install it with pip, then run it." in text
    # Only a line that is a label goes: prose with a parenthesis and "=" stays.
    assert clean_text("Set (width)= 3 in the file.\n", "markdown") == "Set (width)= 3 in the file."


def test_repeated_headings_stay_while_repeated_footer_lines_go():
    from benchsmith.tools.corpus.cleaning import clean_documents

    pages = [
        Document(
            f"p{i}.md",
            f"/p{i}.md",
            f"p{i}",
            "markdown",
            f"# Function {i}\n\nWhat function {i} does.\n\n## Parameters and returns\n\nx: an input.\n\n"
            "Built with love by the docs team.",
        )
        for i in range(6)
    ]
    cleaned = clean_documents(pages)
    assert cleaned
    assert all("Built with love" not in document.text for document in cleaned)
    assert all(
        [title for _, _, title in document.headings] == [document.title, "Parameters and returns"]
        for document in cleaned
    )
