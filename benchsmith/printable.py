"""Control characters in user text made visible: the one helper for every place user text is shown.

File names, document text and model replies may hold terminal control sequences (ESC ``[2J``
clears a screen, an OSC sequence sets a window title or plants a link) or line breaks that
forge a line of output. Shown raw on a terminal they act; kept raw in a Markdown or HTML report
they act again in whichever terminal later shows the file. :func:`printable` writes each control
character as its Python escape (``\\x1b``, ``\\n``): the text stays readable and nothing acts.

The console (benchsmith/cli/console.shown) and the report renderers (evals/reports/document.py) call
it. It sits at the bottom with words.py and imports nothing of benchsmith's.
"""

from __future__ import annotations

import re

# C0 controls but the tab, DEL and the C1 controls (0x9b is a one-byte CSI on some terminals).
_CONTROLS = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")
_CONTROLS_BUT_LINE_BREAKS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # a lone \r too: it overwrites
_NAMED = {"\n": "\\n", "\r": "\\r"}


def printable(text: str, *, keep_line_breaks: bool = False) -> str:
    """``text`` with each control character (a tab excepted) written as its escape, ``\\x1b`` for
    ESC; ``keep_line_breaks`` keeps line breaks (``\\n``, and ``\\r\\n`` as ``\\n``) for text shown on
    several lines (a report's quote), while a name or a one-line message shows them escaped."""
    if keep_line_breaks:
        text = text.replace("\r\n", "\n")
    pattern = _CONTROLS_BUT_LINE_BREAKS if keep_line_breaks else _CONTROLS
    return pattern.sub(lambda match: _NAMED.get(match.group(), f"\\x{ord(match.group()):02x}"), text)
