"""Question types (issue 22, after MTRAG): what the questioner is asked for, and how a
question's wording gives its type. The offline questioner's frames declare their own type
(agents/offline/wording.py)."""

from __future__ import annotations

import re

from benchsmith.agents.offline.wording import FRAMES
from benchsmith.language import WAY_TO_OPENING
from benchsmith.words import REQUEST_WORDS, content_words, stems

QUESTION_TYPE_GUIDANCE = {
    "factoid": "Ask for a specific fact (a value, a name, a default, what something returns).",
    "explanation": "Ask why something is so, or how it works.",
    "comparison": "Ask how two things the passages mention differ or compare.",
    "how-to": "Ask how to get a task done.",
    "yes/no": "Ask a question whose answer is yes or no.",
    "summary": "Ask for a short summary or overview.",
    "keyword": "Type a short keyword query, as into a search box: a few words, no question mark.",
}
YES_NO_OPENINGS = re.compile(
    r"^(is|are|was|were|does|do|did|can|could|should|will|would|has|have|must)\b", re.IGNORECASE
)


def _frame_words(template: str) -> list[str]:
    """A template's content words outside its slots."""
    return content_words(re.sub(r"\{\w*\}", " ", template))


# Stems of the words that frame a question rather than name its topic: the offline questioner's
# frames and a user's request words (benchsmith/words.py). A document that answers a question need
# not contain them, so the offline judges do not look for them.
FRAME_STEMS = frozenset(
    stems(
        [
            *REQUEST_WORDS,
            *(word for frames in FRAMES.values() for frame in frames for word in _frame_words(frame.template)),
        ]
    )
)


def question_type_of(question: str) -> str:
    """The type a question's wording gives (the label of a turn no type was asked for)."""
    text = question.strip()
    lowered = text.lower()
    if not text.endswith("?") and not re.match(r"^(what|which|who|when|where|why|how)\b", lowered):
        return "keyword"
    if re.search(r"\b(compare|comparison|differ|difference|versus|vs\.?)\b", lowered):
        return "comparison"
    if re.search(r"\b(summary|summari[sz]e|sum up|overview)\b", lowered):
        return "summary"
    if re.match(
        rf"^(how (do|can|should) (i|we)|how to|{WAY_TO_OPENING}|what (should|can) (i|we) do)\b",
        lowered,
    ) or re.search(r"\bwhat (do|should|can) (i|we) (need to )?do\?$", lowered):
        return "how-to"
    if re.match(r"^(why\b|can you explain|could you explain|how does .+ work)", lowered):
        return "explanation"
    if YES_NO_OPENINGS.match(lowered) and not re.match(r"^(can|could) you (tell|give|show|explain)", lowered):
        return "yes/no"
    return "factoid"
