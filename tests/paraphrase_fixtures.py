"""Small TREC CAsT-format and ECAsT-format files, and scripted paraphrasing agents, for the
paraphrase and robustness tests."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel

# Two 2019-style topics (raw turns; rewrites in the resolved TSV) and one 2020-style topic.
TOPICS_2019 = [
    {
        "number": 31,
        "title": "throat cancer",
        "turn": [
            {"number": 1, "raw_utterance": "What is throat cancer?"},
            {"number": 2, "raw_utterance": "Is it treatable?"},
            {"number": 3, "raw_utterance": "What are its early symptoms?"},
        ],
    },
    {
        "number": 32,
        "title": "bees",
        "turn": [
            {"number": 1, "raw_utterance": "How do honey bees make honey?"},
            {"number": 2, "raw_utterance": "How long does that take?"},
        ],
    },
]
RESOLVED_2019 = {
    "31_1": "What is throat cancer?",
    "31_2": "Is throat cancer treatable?",
    "31_3": "What are the early symptoms of throat cancer?",
    "32_1": "How do honey bees make honey?",
    "32_2": "How long does it take honey bees to make honey?",
}
TOPICS_2020 = [
    {
        "number": 81,
        "turn": [
            {
                "number": 1,
                "raw_utterance": "How do garage door openers work?",
                "manual_rewritten_utterance": "How do garage door openers work?",
                "automatic_rewritten_utterance": "How do garage door openers work?",
                "manual_canonical_result_id": "M_1",
            },
            {
                "number": 2,
                "raw_utterance": "Why did mine stop working?",
                "manual_rewritten_utterance": "Why did my garage door opener stop working?",
                "automatic_rewritten_utterance": "Why did garage door opener stop working?",
                "manual_canonical_result_id": "M_2",
            },
        ],
    },
]
# ECAsT rows: 31_2 twice, 81_2 once, and two rows of a turn no file has (99_1).
ECAST_ROWS = [
    ("31_2", "Can throat cancer be treated?", "Can it be treated?"),
    ("31_2", "Is there a cure for throat cancer?", "Is there a cure for it?"),
    ("81_2", "For what reason did my garage door opener stop working?", "For what reason did it stop?"),
    ("99_1", "What is a physician assistant?", "What is a physician assistant?"),
    ("99_1", "What does a physician assistant do?", "What does a physician assistant do?"),
]


def write_cast_files(directory: Path) -> dict[str, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    files = {
        "2019": directory / "2019_evaluation_topics.json",
        "resolved": directory / "2019_evaluation_topics_resolved.tsv",
        "2020": directory / "2020_manual_evaluation_topics.json",
        "ecast": directory / "ECAsT.csv",
    }
    files["2019"].write_text(json.dumps(TOPICS_2019, indent=1), encoding="utf-8")
    files["resolved"].write_text("".join(f"{turn}\t{text}\n" for turn, text in RESOLVED_2019.items()), encoding="utf-8")
    files["2020"].write_text(json.dumps(TOPICS_2020, indent=1), encoding="utf-8")
    with files["ecast"].open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\r\n")  # ECAsT.csv has Windows line ends
        writer.writerow(["TURN_ID", "MANUAL PARAPHRASE", "RAW PARAPHRASE"])
        writer.writerows(ECAST_ROWS)
    return files


def write_topics(path: Path, topics: int, turns: int) -> Path:
    """CAsT 2019-style topics (no resolved rewrites: every later turn is rewritten by the model)."""
    subjects = ["honey bees", "throat cancer", "solar panels", "sourdough bread", "the Roman army", "tidal energy"]
    path.write_text(
        json.dumps(
            [
                {
                    "number": 100 + number,
                    "title": subjects[number % len(subjects)],
                    "turn": [
                        {
                            "number": turn + 1,
                            "raw_utterance": f"What is question {turn + 1} about {subjects[number % len(subjects)]}?"
                            if turn == 0
                            else f"And how does it relate to point {turn + 1}?",
                        }
                        for turn in range(turns)
                    ],
                }
                for number in range(topics)
            ]
        ),
        encoding="utf-8",
    )
    return path


def section(messages: list[dict[str, str]], tag: str) -> list[str]:
    return re.findall(rf"<{tag}[^>]*>\n(.*?)\n</{tag}>", messages[-1]["content"], re.S)


def scripted_paraphrases(query: str, count: int) -> list[str]:
    """A near-duplicate of the query, then a meaning change, then rewordings (at most three):
    the filters must drop exactly the first two."""
    body = query.rstrip("?")
    lowered = body[0].lower() + body[1:]
    planted = [f"{body} ?", "Cheapest flights to Lisbon tomorrow?"]
    rewordings = [f"Could you explain {lowered}?", f"I would like to know: {lowered}?", f"Tell me, {lowered}?"]
    return (planted + rewordings)[:count]


def scripted_reply(messages: list[dict[str, str]], schema: type[BaseModel]) -> BaseModel:
    """Replies derived from the prompt, as a model would give them."""
    name = schema.__name__
    if name == "Paraphrases":
        count = int(re.search(r"Write (\d+) paraphrases", messages[0]["content"]).group(1))
        return schema(paraphrases=scripted_paraphrases(section(messages, "query")[0], count))
    if name == "RestoredTurns":
        queries = section(messages, "query")
        return schema(turns=[f"And {query[0].lower()}{query[1:]}" for query in queries])
    if name == "RewrittenQuery":
        return schema(reasoning="scripted", query=section(messages, "latest_question")[0] + " (resolved)")
    if name == "VariantVerdict":
        return schema(rationale="scripted", equivalence=5, fit=5)
    raise AssertionError(f"unexpected schema {name}")


def server_replier(request: dict[str, Any]) -> dict[str, Any]:
    """The same scripted agents behind the loopback OpenAI-compatible server."""
    from benchsmith.agents.paraphraser import VariantVerdict, paraphrase_schema, restored_schema
    from benchsmith.agents.rewriter import RewrittenQuery

    messages = [{"role": m["role"], "content": m["content"]} for m in request["messages"]]
    name = request["response_format"]["json_schema"]["name"]
    if name == "Paraphrases":
        count = int(re.search(r"Write (\d+) paraphrases", messages[0]["content"]).group(1))
        return scripted_reply(messages, paraphrase_schema(count)).model_dump()
    if name == "RestoredTurns":
        return scripted_reply(messages, restored_schema(len(section(messages, "query")))).model_dump()
    schema = {"RewrittenQuery": RewrittenQuery, "VariantVerdict": VariantVerdict}[name]
    return scripted_reply(messages, schema).model_dump()
