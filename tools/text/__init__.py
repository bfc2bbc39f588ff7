"""Markup and page text to the text a reader sees: Markdown, MyST, reStructuredText with Sphinx
markup, HTML, Stack Exchange posts; headings marked; the kind of page a text is."""
