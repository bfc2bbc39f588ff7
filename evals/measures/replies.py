"""What an assistant's reply does on a turn the corpus cannot answer (``unanswerable``) or the user
left open (``underspecified``): abstain, ask back, or answer anyway.

No library has these; they are read from the reply's words, without a model:

* **abstained**: the reply says it cannot answer or that the sources do not say (phrases as
  "I don't know", "cannot find", "no information", "not mentioned/covered in the documents");
* **asked back**: the reply's last sentence is a question to the user (it ends with ``?``), or it
  asks to clarify or specify.

The rate of either on those turns is the assistant's handling of them (MTRAG's
unanswerable/underspecified turns, Katsis et al. 2025, count an answer there as a failure).
"""

from __future__ import annotations

import re

ABSTAINING = re.compile(
    r"\b(i (do not|don't|cannot|can't|could not|couldn't) (know|say|tell|find|answer)|"
    r"(can ?not|can't|unable to|not able to) (find|answer|determine|tell)|"
    r"no (information|answer|mention)|"
    r"(is|are) not (mentioned|covered|described|stated|given)|"
    r"(the|these|my) (documents|passages|sources|notes) do(es)? not (say|mention|cover))\b",
    re.IGNORECASE,
)
ASKING = re.compile(r"\b(could|can|would) you (clarify|specify|tell me (which|what|more))|which one do you mean", re.I)
LAST_SENTENCE = re.compile(r"[^.!?]*[.!?]?\s*$")


def abstained(reply: str) -> bool:
    return bool(ABSTAINING.search(reply))


def asked_back(reply: str) -> bool:
    text = reply.strip()
    return bool(text) and (text.endswith("?") or bool(ASKING.search(text)))


def handled_without_gold(reply: str) -> bool:
    """Abstained or asked back: what a turn without an answer in the corpus asks for."""
    return abstained(reply) or asked_back(reply)
