"""What the offline questioner asks of a passage, for the tests of its rounds."""

from __future__ import annotations

from benchsmith.agents.questioner import Questioner


def asked(text: str, title: str, count: int = 6) -> list[str]:
    """The questions the offline questioner asks of a passage, one after another (each refused in turn)."""
    questions: list[str] = []
    for _ in range(count):
        draft = Questioner().baseline(gold={"text": text, "title": title}, history=[], refused=questions)
        if draft.subject is None:  # nothing left: a question about the page as a whole
            break
        questions.append(draft.question)
    return questions
