"""A reading sheet: random turns of a synthesized benchmark, laid out for a reader with the rubric.

Generated text is judged by reading (issue 30): a reader who did not write the generator gets
only the rubric (``data/readings/RUBRIC.md``) and this sheet, and marks each turn ``ok`` or
``broken`` with one rubric class. The readings are kept in ``data/readings/`` as labelled data:
the offline quality gate (evals/quality_gate/) is calibrated on the development half's and
measured on the test half's.

Each item shows the turn as a benchmark user would see it: the two previous turns, the question,
the reply, the passages it is judged on (the gold passages; for an unanswerable turn the passage
held out of the corpus and the three passages of what remains that BM25 and dense retrieval rank
first, so the reader can tell whether the corpus answers it anyway; for an underspecified turn its
candidates). Turns are drawn with a fixed seed, so the same command gives the same sheet::

    .venv/bin/python benchmarks/reading_sheet.py --workspace WS --run RUN --corpus flask --half test \\
        [--turns 50] [--seed 0] --out sheets/flask

writes ``sheets/flask/sheet.md`` (for the reader) and ``sheets/flask/readings.jsonl`` (one line per
turn with the verdict to fill in). A tree too small for one benchmark to hold the turns wanted is read
over several runs (other ``--seed`` values of synthesize): ``--run`` given again pools their turns, each
question on its gold once, and ``--not-in`` leaves out the turns of readings already made::

    .venv/bin/python benchmarks/reading_sheet.py --workspace WS --run markdown-s1 --run markdown-s2 \
        --not-in data/readings/test/markdown-offline-final-16.jsonl --turns 20 ... --out sheets/markdown-more

The quality gate's verdicts are never on the sheet (the reader must not see them):
``benchmarks/gate_agreement.py`` sets them beside the filled readings.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

from benchsmith.tools.offline import offline_environment

offline_environment()

from benchsmith.graphs.runtime.resources import chroma_client  # noqa: E402
from benchsmith.stores.persistence.jsonl import load_jsonl  # noqa: E402
from benchsmith.stores.persistence.vectors import VectorStore  # noqa: E402
from benchsmith.stores.persistence.workspace import Workspace  # noqa: E402
from benchsmith.tools.retrieval.bm25 import BM25Index, top_scored  # noqa: E402
from benchsmith.tools.retrieval.embedding import ChromaEmbeddingFunction  # noqa: E402

PASSAGE_CHARS = 1600
REMAINING_SHOWN = 3


def draw(
    dialogues: list[dict[str, Any]], turns: int, seed: int, read: frozenset[tuple[str, tuple[str, ...]]] = frozenset()
) -> list[tuple[dict[str, Any], int]]:
    """``turns`` turns drawn with ``seed``: each question on its gold once (runs pooled), none of ``read``."""
    every: dict[tuple[str, tuple[str, ...]], tuple[dict[str, Any], int]] = {}
    for dialogue in dialogues:
        for index, turn in enumerate(dialogue["turns"]):
            every.setdefault(turn_key(turn), (dialogue, index))
    unread = [item for key, item in every.items() if key not in read]
    return sorted(
        random.Random(seed).sample(unread, min(turns, len(unread))),
        key=lambda item: (item[0].get("run", ""), item[0]["conversation_id"], item[1]),
    )


def turn_key(turn: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
    """A turn as a benchmark asks it: its question on its gold."""
    return turn["question"], tuple(turn.get("gold_ids", []))


def _quoted(text: str, limit: int = PASSAGE_CHARS) -> str:
    text = text if len(text) <= limit else text[:limit] + " […]"
    return "\n".join(f"    {line}" for line in text.splitlines())


class Corpus:
    """The run's collection: texts by id, BM25 over what the benchmark's corpus keeps, dense search."""

    def __init__(self, workspace: Workspace, run_dir: Path, collection: str):
        client = chroma_client(workspace, None)
        self.store = VectorStore.open_existing(client, collection, lambda spec: ChromaEmbeddingFunction(spec=spec))
        kept = load_jsonl(run_dir / "beir" / "corpus.jsonl")
        self.kept = {row["_id"] for row in kept}
        self.bm25 = BM25Index([row["_id"] for row in kept], [f"{row.get('title', '')} {row['text']}" for row in kept])

    def passages(self, ids: list[str]) -> list[dict[str, Any]]:
        found = self.store.fetch(ids)
        return [
            {
                "id": chunk_id,
                "title": found.get(chunk_id, {}).get("title", ""),
                "text": found.get(chunk_id, {}).get("text", "(missing)"),
            }
            for chunk_id in ids
        ]

    def remaining(self, question: str, leave_out: set[str], depth: int = REMAINING_SHOWN) -> list[str]:
        """BM25's and dense retrieval's top ``depth`` chunks of what the benchmark's corpus keeps."""
        lexical = top_scored(self.bm25.doc_ids, self.bm25.scores(question), depth, leave_out=leave_out)
        found = self.store.collection.query(query_texts=[question], n_results=depth + len(leave_out) + 10)
        dense = [chunk_id for chunk_id in found["ids"][0] if chunk_id in self.kept and chunk_id not in leave_out]
        return list(dict.fromkeys([*lexical, *dense[:depth]]))


def sheet_item(number: int, dialogue: dict[str, Any], index: int, corpus: Corpus, *, pooled: bool = False) -> str:
    """One item of the sheet; ``pooled``: runs share conversation ids, so the item names its run too."""
    turn = dialogue["turns"][index]
    kind = turn.get("turn_type", "answerable")
    turn_id = f"{dialogue['conversation_id']}:{index}"
    lines = [f"## Item {number} · {dialogue['run'] + ' ' if pooled else ''}{turn_id} · {kind} turn"]
    earlier = dialogue["turns"][max(0, index - 2) : index]
    if earlier:
        lines.append("\nEarlier in the conversation:")
        for previous in earlier:
            lines += [f"- **User:** {previous['question']}", f"- **Assistant:** {previous['response']}"]
    else:
        lines.append("\n(This is the first turn of the conversation.)")
    lines += [f"\n**Question:** {turn['question']}", f"\n**Reply:** {turn['response']}"]
    if turn.get("gold_ids"):
        lines.append("\nThe passages the reply must come from (gold):")
        for passage in corpus.passages(turn["gold_ids"]):
            lines += [f"\n  [{passage['title']}]", _quoted(passage["text"])]
    if turn.get("held_out_ids"):
        held = turn["held_out_ids"]
        lines.append("\nHeld out: this passage was removed from the corpus (the turn claims nothing left answers it):")
        for passage in corpus.passages(held):
            lines += [f"\n  [{passage['title']}]", _quoted(passage["text"])]
        if kind == "unanswerable":
            lines.append("\nWhat remains in the corpus: the passages a retriever finds first for this question:")
            for passage in corpus.passages(corpus.remaining(turn["question"], set(held))):
                lines += [f"\n  [{passage['title']}]", _quoted(passage["text"], 900)]
    if turn.get("candidate_ids") and kind == "underspecified":
        lines.append("\nThe passages the question could mean (candidates):")
        for passage in corpus.passages(turn["candidate_ids"]):
            lines += [f"\n  [{passage['title']}]", _quoted(passage["text"], 900)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workspace", required=True)
    parser.add_argument(
        "--run", required=True, action="append", help="the synthesis run id (again: pool several runs' turns)"
    )
    parser.add_argument(
        "--not-in", nargs="*", type=Path, default=[], help="readings (JSONL) whose turns are not drawn again"
    )
    parser.add_argument("--corpus", required=True, help="the corpus's name (benchmarks/doc_corpora.py)")
    parser.add_argument("--half", required=True, choices=["development", "test"])
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--generator", default="offline", help="what wrote the turns: offline, or a model spec")
    parser.add_argument("--out", required=True, type=Path)
    arguments = parser.parse_args(argv)
    workspace = Workspace.resolve(arguments.workspace)
    corpora: dict[str, Corpus] = {}  # by run: each run holds out its own chunks
    dialogues: list[dict[str, Any]] = []
    for run in dict.fromkeys(arguments.run):
        run_dir = workspace.run_dir(run)
        config = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
        corpora[run] = Corpus(workspace, run_dir, config["config"]["collection"])
        dialogues += [{**dialogue, "run": run} for dialogue in load_jsonl(run_dir / "dialogues.jsonl")]
    read = frozenset(turn_key(row) for path in arguments.not_in for row in load_jsonl(path))
    drawn = draw(dialogues, arguments.turns, arguments.seed, read)
    arguments.out.mkdir(parents=True, exist_ok=True)
    header = (
        f"# Reading sheet: {arguments.corpus} ({arguments.half} half), {len(drawn)} turns drawn with seed "
        f"{arguments.seed}\n\nRead each item with the rubric and give it a verdict.\n"
    )
    items = [
        sheet_item(number, dialogue, index, corpora[dialogue["run"]], pooled=len(corpora) > 1)
        for number, (dialogue, index) in enumerate(drawn, start=1)
    ]
    (arguments.out / "sheet.md").write_text(header + "\n\n".join(items) + "\n", encoding="utf-8")
    with (arguments.out / "readings.jsonl").open("w", encoding="utf-8") as out:
        for number, (dialogue, index) in enumerate(drawn, start=1):
            turn = dialogue["turns"][index]
            earlier = [[previous["question"], previous["response"]] for previous in dialogue["turns"][:index]]
            out.write(
                json.dumps(
                    {
                        "item": number,
                        "corpus": arguments.corpus,
                        "half": arguments.half,
                        "seed": arguments.seed,
                        "run": dialogue["run"],
                        "generator": arguments.generator,
                        "turn_id": f"{dialogue['conversation_id']}:{index}",
                        "turn_type": turn.get("turn_type", "answerable"),
                        "question": turn["question"],
                        "reply": turn["response"],
                        "previous": earlier,
                        "gold_ids": turn.get("gold_ids", []),
                        "held_out_ids": turn.get("held_out_ids", []),
                        "candidate_ids": turn.get("candidate_ids", []),
                        "verdict": None,
                        "class": None,
                        "note": None,
                    },
                    ensure_ascii=False,
                )
                + "\n"
            )
    print(f"{len(drawn)} turns: {arguments.out / 'sheet.md'}, {arguments.out / 'readings.jsonl'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
