"""A judge agent, a sleep that records instead of waiting, and the OpenAI seam against the loopback
server, for the tests of the model seam."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from benchsmith.agents.seam.backends import ModelSettings, OpenAIBackend
from benchsmith.agents.seam.models import Agent, ModelSeam

SECRET = "sk-test-DO-NOT-PERSIST-4f1c9a"
GOOD = {"rationale": "cites the passage", "score": 4}
# Short enough to keep the suite fast; the client timeout is below the slow fault.
FAST = ModelSettings(timeout_s=0.5, backoff_initial_s=0.01, backoff_max_s=0.05)


class Verdict(BaseModel):
    rationale: str
    score: int = Field(ge=1, le=5)


class Judge(Agent[Verdict]):
    name = "judge"
    schema = Verdict

    def messages(self, question: str) -> list[dict[str, str]]:
        return [
            {"role": "system", "content": "Grade the question from 1 to 5."},
            {"role": "user", "content": f"Question: {question}"},
        ]

    def baseline(self, question: str) -> Verdict:
        return Verdict(rationale=f"baseline for {question}", score=3)


class RecordingSleep:
    """Stands in for ``time.sleep`` in the seam's retry loop: records, never sleeps."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def openai_seam(model: str = "m1", settings: ModelSettings = FAST, **seam_kwargs) -> ModelSeam:
    return ModelSeam(OpenAIBackend(model, settings), settings=settings, **seam_kwargs)


def assert_secret_not_persisted(root: Path) -> None:
    """No file under ``root`` (SQLite main, WAL and SHM files included) holds the key."""
    files = [path for path in root.rglob("*") if path.is_file()]
    assert files, f"expected stores under {root}"
    leaked = [str(path) for path in files if SECRET.encode() in path.read_bytes()]
    assert leaked == []
