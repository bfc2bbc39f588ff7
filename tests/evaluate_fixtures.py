"""A small conversational BEIR benchmark (eight topics, three kinds of turn), a spoiled copy of it and a system's TREC run file, for the evaluation tests."""

from __future__ import annotations

import json
from pathlib import Path

TOPICS = ["zebra", "glacier", "volcano", "coral", "falcon", "desert", "comet", "tundra"]
ASPECTS = {
    "history": "origins ancient records",
    "predators": "threats danger enemies",
    "climate": "temperature weather rainfall",
}
SWITCHES = ["start", "soft", "hard"]


def write_benchmark(directory: Path) -> Path:
    corpus, queries, qrels = [], [], []
    for topic in TOPICS:
        for aspect, words in ASPECTS.items():
            corpus.append(
                {
                    "_id": f"{topic}-{aspect}",
                    "title": "",
                    "text": f"The {topic} and its {aspect}: {words} of the {topic}, as the notes describe.",
                }
            )
        for turn, aspect in enumerate(ASPECTS):
            first_word = ASPECTS[aspect].split()[0]
            question = (
                f"Tell me about the {topic} {aspect} and {first_word}."
                if turn == 0
                else f"What about its {aspect} and {first_word}?"
            )
            queries.append(
                {
                    "_id": f"{topic}_t{turn}",
                    "text": question,
                    "metadata": {
                        "conversation_id": topic,
                        "turn": turn,
                        "switch": SWITCHES[turn],
                        "question": question,
                        "rewrite": f"What about the {topic} {aspect} and {first_word}?",
                        "response": f"The notes cover the {topic} well.",
                    },
                }
            )
            qrels.append((f"{topic}_t{turn}", f"{topic}-{aspect}"))
    directory.mkdir(parents=True)
    (directory / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in corpus), encoding="utf-8")
    (directory / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in reversed(queries)), encoding="utf-8")
    (directory / "qrels").mkdir()
    (directory / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t1\n" for q, d in qrels), encoding="utf-8"
    )
    return directory


def spoil_benchmark(benchmark: Path) -> None:
    """Judgments for a query and a document the benchmark lacks; a document id used twice."""
    with (benchmark / "qrels" / "test.tsv").open("a", encoding="utf-8") as handle:
        handle.write("ghost_t0\tzebra-history\t1\nzebra_t0\tnowhere-doc\t1\n")
    with (benchmark / "corpus.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"_id": "zebra-history", "title": "", "text": "An impostor about glaciers."}) + "\n")


def write_system_run(path: Path, perfect_turns: tuple[int, ...]) -> Path:
    """A run of 'my system': the gold document first on the given turns, a wrong one elsewhere;
    lines deliberately not sorted by query id."""
    run = {}
    for topic in reversed(TOPICS):
        for turn, aspect in enumerate(ASPECTS):
            wrong = TOPICS[(TOPICS.index(topic) + 1) % len(TOPICS)]
            first = f"{topic}-{aspect}" if turn in perfect_turns else f"{wrong}-{aspect}"
            run[f"{topic}_t{turn}"] = {first: 2.0, f"{wrong}-history": 1.0}
    lines = [
        f"{query} Q0 {doc} {rank} {score} mine\n"
        for query, docs in run.items()
        for rank, (doc, score) in enumerate(docs.items(), start=1)
    ]
    path.write_text("".join(lines), encoding="utf-8")
    return path
