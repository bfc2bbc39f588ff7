"""How a benchmark's questions spread over their frames: the way each asks, with what it asks about left out
(benchsmith/language.py ``question_frame``: "What is the role of the come back?" → "what is role of …").

Questions of one frame read alike to a reader whatever their topic, so a benchmark whose questions share one
is a template, not a set of users' questions: on a web framework's documentation an offline questioner asked
87 of 180 questions in "What is the role of …?" (issue 30). No frame above a fifth of the questions
(``FRAME_CAP``) is the bound the synthesizer keeps (graphs/synthesis/frames.py) and the audit reports
(``frame_concentration``); a benchmark of a handful of questions may hold one question per frame.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from typing import Any

from benchsmith.language import question_frame

FRAME_CAP = 0.2  # the largest share of a benchmark's questions one frame may have (issue 30)
EXAMPLES_PER_FRAME = 3


def share_limit(share: float, questions: int) -> int:
    """The most questions one kind may have among ``questions`` where it may hold ``share`` of them: at least one."""
    return max(1, math.floor(share * questions + 1e-9))


def frame_limit(questions: int) -> int:
    """The most questions one frame may have among ``questions``: a fifth, and at least one."""
    return share_limit(FRAME_CAP, questions)


def frame_concentration(questions: Mapping[str, str], examples: int = EXAMPLES_PER_FRAME) -> dict[str, Any]:
    """``{"questions", "frames", "top_frame", "top_share", "cap", "above_cap"}`` of ``{turn id: question}``;
    ``above_cap`` lists each frame with more than :func:`frame_limit` questions, most first, with its count,
    share and its first ``examples`` turns."""
    frames = {turn: question_frame(question) for turn, question in questions.items()}
    counts = Counter(frames.values())
    total = len(frames)
    top, most = counts.most_common(1)[0] if counts else (None, 0)
    allowed = frame_limit(total)
    return {
        "questions": total,
        "frames": len(counts),
        "top_frame": top,
        "top_share": round(most / total, 4) if total else 0.0,
        "cap": FRAME_CAP,
        "above_cap": [
            {
                "frame": frame,
                "questions": count,
                "share": round(count / total, 4),
                "examples": [
                    {"turn": turn, "question": questions[turn]}
                    for turn in [t for t, f in frames.items() if f == frame][:examples]
                ],
            }
            for frame, count in counts.most_common()
            if count > allowed
        ],
    }


def frame_note(concentration: Mapping[str, Any] | None) -> str | None:
    """What a verdict says of the frames: None when none is above the cap."""
    if not concentration or not concentration.get("above_cap"):
        return None
    worst = concentration["above_cap"][0]
    more = len(concentration["above_cap"]) - 1
    return (
        f"One frame of question, '{worst['frame']}', holds {worst['questions']:,} of {concentration['questions']:,} "
        f"questions ({worst['share']:.0%}; a benchmark of users' questions keeps each under "
        f"{concentration['cap']:.0%})"
        + (f", and {more} more frame{'s' if more > 1 else ''} over it" if more else "")
        + "."
    )
