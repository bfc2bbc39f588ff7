"""A reply that runs on past the asked entry into the next one's description.

"What is WWWAuthenticate.set_basic meant for?" answered "Clear the auth info and enable basic auth. Clear the
auth info and enable digest auth.": the second sentence sits under the next signature line of the passage
(``set_digest(realm, nonce, qop=('auth',), ...)``), so the reply describes two entries as one. Readers call it
a reply that answers about another entry. The scan looks at the passage's lines between the reply's
sentences, not at benchsmith.entries' reading of the passage, because the lines that reading does not take
for an entry (a signature with a quoted default, a custom domain's "class jinja-jinja-globals.joiner(...)")
are the ones whose descriptions get run together. Development readings: 4 turns flagged (jinja2 rounds 12
and 14, werkzeug round 14), all read broken; none read ok.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from benchsmith.entries import ENTRY_KINDS
from benchsmith.passages import FENCED_BLOCK, split_sentences

# A documented object's line: optional kind words, a dotted name (a custom domain's hyphenated qualifier
# allowed), an optional argument list, nothing after it on the line.
SIGNATURE_LINE = re.compile(
    rf"(?m)^[ \t]*(?:(?:{'|'.join(ENTRY_KINDS)})\s+)*"
    r"(?P<name>[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)+)(?:\(.*\))?[ \t]*$"
)


def entry_crossed(reply: str, gold: Iterable[tuple[str, str]], asked: Sequence[str]) -> str | None:
    """The name on a signature line of the gold that lies between two of the reply's sentences and is not
    one of the ``asked`` names (compared by their last part), or None."""
    sentences = split_sentences(reply.strip())
    if len(sentences) < 2:
        return None
    asked_last = {name.rsplit(".", 1)[-1] for name in asked}
    for _, text in gold:
        text = FENCED_BLOCK.sub(lambda found: " " * len(found[0]), text)  # an example's lines are no entries
        start = text.find(sentences[0])
        if start < 0:
            continue
        end = start + len(sentences[0])
        for sentence in sentences[1:]:
            following = text.find(sentence, end)
            if following < 0:
                break
            for line in SIGNATURE_LINE.finditer(text[end:following]):
                if line["name"].rsplit(".", 1)[-1] not in asked_last:
                    return line["name"]
            end = following + len(sentence)
    return None
