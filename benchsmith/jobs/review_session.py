"""What the review page asks of a review run: each turn of a synthesized benchmark with its history,
reply, gold (or held-out, or candidate) passages, turn type and the quality gate's flags; a verdict
per turn (accept, reject with a rubric class, or an edited question kept beside the original) saved
as it is made; and the exports: the verdicts in the readings format (data/readings/README.md) the
quality gate is calibrated on, and the benchmark's BEIR folder without the rejected turns."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchsmith.evals.quality_gate.evidence import GATE_CLASSES
from benchsmith.evals.quality_gate.reader_agreement import reader_agreement
from benchsmith.stores.formats.benchmark_files import benchmark_records, turn_query_id, write_beir
from benchsmith.stores.persistence.files import write_json_atomic
from benchsmith.stores.persistence.jsonl import read_jsonl, write_jsonl_atomic
from benchsmith.stores.persistence.judgments import VERDICTS_FILE, Verdict, VerdictLog

READINGS_FILE = "readings.jsonl"
REVIEWED_BEIR_DIR = "beir"
VERDICTS = ("accept", "reject", "edit")


def reviewed_dialogues(
    dialogues: Sequence[dict[str, Any]], verdicts: Mapping[str, Verdict]
) -> tuple[list[dict[str, Any]], int]:
    """The dialogues without their rejected turns, edited questions in place of the synthesized ones
    (kept under ``question_synthesized``), and how many turns were rejected. ``verdicts`` are by turn
    query id (stores/formats/benchmark_files.turn_query_id)."""
    kept_dialogues, rejected = [], 0
    for dialogue in dialogues:
        turns = []
        for turn in dialogue["turns"]:
            verdict = verdicts.get(turn_query_id(dialogue["conversation_id"], turn["index"]))
            if verdict is not None and verdict.verdict == "reject":
                rejected += 1
                continue
            if verdict is not None and verdict.verdict == "edit" and verdict.edited_question:
                turn = {**turn, "question": verdict.edited_question, "question_synthesized": turn["question"]}
            turns.append(turn)
        kept_dialogues.append({**dialogue, "turns": turns})
    return kept_dialogues, rejected


def iter_jsonl_records(path: Path) -> Any:
    return (record for _, record in read_jsonl(path))


class ReviewSession:
    """One reviewer's page over a synthesized benchmark."""

    page = "review"

    def __init__(
        self,
        run_dir: Path,
        benchmark_run: str,
        dialogues: Sequence[dict[str, Any]],
        passages: Mapping[str, tuple[str, str]],
        corpus_path: Path,
        *,
        reviewer: str,
        collection: str,
        history_window: int | None = None,
    ):
        self.run_dir = run_dir
        self.benchmark_run = benchmark_run
        self.dialogues = list(dialogues)
        self.passages = passages  # {chunk id: (title, text)}: the corpus's and the held-out ones
        self.corpus_path = corpus_path  # the benchmark's BEIR corpus.jsonl
        self.reviewer = reviewer
        self.collection = collection
        self.history_window = history_window
        self.log = VerdictLog(run_dir / VERDICTS_FILE)
        self.turns = [(dialogue, turn) for dialogue in self.dialogues for turn in dialogue["turns"]]

    def _turn_id(self, index: int) -> str:
        dialogue, turn = self.turns[index]
        return turn_query_id(dialogue["conversation_id"], turn["index"])

    def answer(self, method: str, route: str, query: dict[str, str], body: dict[str, Any] | None) -> Any:
        if (method, route) == ("GET", "state"):
            return self.state()
        if (method, route) == ("GET", "item"):
            return self.item(int(query.get("index", "0")))
        if (method, route) == ("GET", "find"):
            return {"index": self.position(query.get("turn", ""))}
        if (method, route) == ("POST", "verdict") and body is not None:
            return self.judge(
                int(body["index"]),
                str(body.get("verdict")),
                body.get("rubric_class"),
                body.get("edited_question"),
                str(body.get("note") or "")[:2000],
                float(body.get("seconds") or 0.0),
            )
        raise LookupError(route)

    def position(self, turn_id: str) -> int:
        """Where the turn of query id ``turn_id`` (``c0003_t2``, as reports and the BEIR export name it) is."""
        for index in range(len(self.turns)):
            if self._turn_id(index) == turn_id:
                return index
        raise LookupError(turn_id)

    def state(self) -> dict[str, Any]:
        verdicts = [self.log.get(self._turn_id(index)) for index in range(len(self.turns))]
        done = sum(verdict is not None for verdict in verdicts)
        times = [verdict.seconds for verdict in verdicts if verdict is not None]
        counts = {name: sum(1 for v in verdicts if v is not None and v.verdict == name) for name in VERDICTS}
        return {
            "reviewer": self.reviewer,
            "benchmark": self.benchmark_run,
            "total": len(self.turns),
            "done": done,
            "left": len(self.turns) - done,
            "mean_seconds": round(sum(times) / len(times), 2) if times else None,
            "counts": counts,
            "rubric_classes": list(GATE_CLASSES),
            "next": next((index for index, verdict in enumerate(verdicts) if verdict is None), len(self.turns)),
        }

    def item(self, index: int) -> dict[str, Any]:
        if not 0 <= index < len(self.turns):
            raise IndexError(index)
        dialogue, turn = self.turns[index]
        verdict = self.log.get(self._turn_id(index))
        previous = [(earlier["question"], earlier["response"]) for earlier in dialogue["turns"][: turn["index"]]]
        return {
            "index": index,
            "total": len(self.turns),
            "turn_id": self._turn_id(index),
            "conversation_id": dialogue["conversation_id"],
            "turn": turn["index"],
            "turn_type": turn.get("turn_type") or turn.get("answerability", "answerable"),
            "switch": turn["switch"],
            "question": turn["question"],
            "reply": turn["response"],
            "previous": previous,
            "passages": [
                {"role": role, "id": chunk_id, "title": self.passages.get(chunk_id, ("", ""))[0], "text": text}
                for role, key in (("gold", "gold_ids"), ("held out", "held_out_ids"), ("candidate", "candidate_ids"))
                for chunk_id in turn.get(key, [])
                for text in [self.passages.get(chunk_id, ("", "(not in the collection any more)"))[1]]
            ],
            "gate_flags": turn.get("gate_flags") or {},
            "gate_rejections": turn.get("gate_rejections") or {},
            "verdict": verdict.verdict if verdict else None,
            "rubric_class": verdict.rubric_class if verdict else None,
            "edited_question": verdict.edited_question if verdict else None,
            "note": verdict.note if verdict else "",
        }

    def judge(
        self,
        index: int,
        verdict: str,
        rubric_class: str | None = None,
        edited_question: str | None = None,
        note: str = "",
        seconds: float = 0.0,
    ) -> dict[str, Any]:
        if verdict not in VERDICTS:
            raise ValueError(f"verdict {verdict!r}: use {', '.join(VERDICTS)}")
        if verdict == "reject" and rubric_class not in GATE_CLASSES:
            raise ValueError(f"a rejection names a rubric class: {', '.join(GATE_CLASSES)}")
        if verdict == "edit" and not (isinstance(edited_question, str) and edited_question.strip()):
            raise ValueError("an edit gives the question as it should read")
        _, turn = self.turns[index]
        self.log.record(
            Verdict(
                turn=self._turn_id(index),
                reviewer=self.reviewer,
                verdict=verdict,
                rubric_class=rubric_class if verdict == "reject" else None,
                question=turn["question"],
                edited_question=edited_question.strip() if verdict == "edit" and edited_question else None,
                note=note,
                seconds=round(seconds, 3),
            )
        )
        return self.state()

    def export(self) -> dict[str, Any]:
        """The verdicts as readings (one line per reviewed turn), the BEIR folder without rejected
        turns (edited questions in place), and the summary: counts and the gate's agreement with the
        reviewer (a turn the gate flagged against a turn the reviewer rejected)."""
        verdicts = self.log.latest()
        readings = []
        gate, reviewer = [], []
        for index, (dialogue, turn) in enumerate(self.turns):
            verdict = verdicts.get(self._turn_id(index))
            if verdict is None:
                continue
            readings.append(
                {
                    "item": index + 1,
                    "corpus": self.collection,
                    "half": None,
                    "run": self.benchmark_run,
                    "seed": dialogue.get("seed"),
                    "generator": "review",
                    "turn_id": f"{dialogue['conversation_id']}:{turn['index']}",
                    "turn_type": turn.get("turn_type") or turn.get("answerability", "answerable"),
                    "question": turn["question"],
                    "reply": turn["response"],
                    "previous": [[t["question"], t["response"]] for t in dialogue["turns"][: turn["index"]]],
                    "gold_ids": turn.get("gold_ids", []),
                    "held_out_ids": turn.get("held_out_ids", []),
                    "candidate_ids": turn.get("candidate_ids", []),
                    "verdict": "broken" if verdict.verdict == "reject" else "ok",
                    "class": verdict.rubric_class,
                    "note": verdict.note or None,
                    "edited_question": verdict.edited_question,
                    "reviewer": verdict.reviewer,
                    "seconds": verdict.seconds,
                }
            )
            gate.append(bool(turn.get("gate_flags")))
            reviewer.append(verdict.verdict == "reject")
        write_jsonl_atomic(self.run_dir / READINGS_FILE, readings)
        kept, rejected = reviewed_dialogues(self.dialogues, verdicts)
        queries, qrels, _ = benchmark_records(kept, self.history_window)
        # The benchmark's corpus as it is (held-out chunks already out), its queries and qrels without the rejected turns.
        write_beir(self.run_dir / REVIEWED_BEIR_DIR, iter_jsonl_records(self.corpus_path), queries, qrels)
        counts = {name: sum(1 for v in verdicts.values() if v.verdict == name) for name in VERDICTS}
        agreement = reader_agreement(list(zip(reviewer, gate)))
        summary = {
            "benchmark": self.benchmark_run,
            "turns": len(self.turns),
            "reviewed": len(readings),
            **counts,
            "rejected_left_out": rejected,
            "gate_agreement": agreement,
            "readings": str(self.run_dir / READINGS_FILE),
            "beir": str(self.run_dir / REVIEWED_BEIR_DIR),
        }
        write_json_atomic(self.run_dir / "review.json", summary)
        return summary
