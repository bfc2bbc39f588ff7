"""A small repository and real-feeling questions about it, and scripted agents that read their
prompts as a model would, for the tests of the nuggets graph.

The repository documents an invented library: each fact is a sentence with its own code word
(``zorbNN``). Question i's accepted answer states three facts; the corpus holds:

* q1..q4: all three facts;
* q5: two of its three facts (one nugget no chunk supports);
* q6: none of its facts (every nugget unsupported: the question is dropped).

The scripted support judge says a chunk supports a nugget when the nugget's code word occurs in
the chunk, so the expected support follows from the files.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from benchsmith.agents.nuggets import ClosedBookAnswer, SubQuestions, SupportJudgmentsBase

QUESTIONS = 6
FACTS_PER_QUESTION = 3
CODE_WORD = re.compile(r"zorb\d+")
TOPICS = ["widgets", "gadgets", "sprockets", "flanges", "gizmos", "doohickeys"]


def fact(question: int, number: int) -> str:
    topic = TOPICS[question - 1]
    return f"The {topic} helper zorb{question}{number} configures {topic} option number {number} for the frobnicator."


def in_corpus(question: int, number: int) -> bool:
    return question <= 4 or (question == 5 and number < 3)


def write_repository(root: Path) -> Path:
    """A package with one module and one Markdown page per topic (facts spread between them)."""
    (root / "src").mkdir(parents=True)
    (root / "docs").mkdir()
    for question in range(1, QUESTIONS + 1):
        topic = TOPICS[question - 1]
        present = [fact(question, n) for n in range(1, FACTS_PER_QUESTION + 1) if in_corpus(question, n)]
        filler = f"This page explains the {topic} module of the frobnicator in general terms, with its history."
        sections = "\n\n".join(f"## Part {n}\n\n{text}" for n, text in enumerate(present, start=1))
        (root / "docs" / f"{topic}.md").write_text(f"# {topic.title()}\n\n{filler}\n\n{sections}\n", encoding="utf-8")
        (root / "src" / f"{topic}.py").write_text(
            f'"""The {topic} module: general helpers of the frobnicator, no option facts here."""\n\n\n'
            f'def make_{topic}(count):\n    """Build count {topic} for the frobnicator, one after another."""\n'
            f"    return [object() for _ in range(count)]\n",
            encoding="utf-8",
        )
    return root


def write_questions(path: Path) -> Path:
    lines = []
    for question in range(1, QUESTIONS + 1):
        topic = TOPICS[question - 1]
        answer = " ".join(fact(question, n) for n in range(1, FACTS_PER_QUESTION + 1))
        lines.append(
            {
                "id": f"q{question}",
                "question": f"How do I configure {topic} in the frobnicator?\n\n"
                f"I need every option of the {topic} helper. What does each do?",
                "answer": f"{answer}\n\n```python\nfrob.configure('{topic}')\n```",
                "tags": ["frob", topic],
            }
        )
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def section(content: str, tag: str) -> str:
    match = re.search(rf"<{tag}[^>]*>\n(.*?)\n</{tag}>", content, re.S)
    assert match, f"no <{tag}> section in the prompt"
    return match.group(1)


def scripted_reply(messages: list[dict[str, str]], schema: type[BaseModel]) -> BaseModel:
    """What a careful model would answer, read from the prompt."""
    content = messages[-1]["content"]
    if schema.__name__ == "Nuggets":
        answer = section(content, "accepted_answer")
        return schema(nuggets=[sentence for sentence in re.split(r"(?<=\.)\s+", answer) if CODE_WORD.search(sentence)])
    if schema is SubQuestions:
        question = section(content, "question")
        return SubQuestions(sub_questions=[f"What options does {word} have?" for word in question.split()[4:6]])
    if schema is ClosedBookAnswer:
        return ClosedBookAnswer(answer="You configure it with the frobnicator's configure() call.")
    if issubclass(schema, SupportJudgmentsBase):
        return support_reply(content, schema)
    raise AssertionError(f"unexpected schema {schema}")


def support_reply(content: str, schema: type[SupportJudgmentsBase]) -> SupportJudgmentsBase:
    nuggets = [line.split(". ", 1)[1] for line in section(content, "nuggets").splitlines()]
    chunks = re.findall(r'<chunk number="(\d+)">\n(.*?)\n</chunk>', section(content, "chunks"), re.S)
    judgments = []
    for number, text in chunks:
        supported = [
            index + 1
            for index, nugget in enumerate(nuggets)
            if (words := CODE_WORD.findall(nugget)) and all(word in text for word in words)
        ]
        judgments.append(
            {
                "chunk": int(number),
                "reason": f"names {len(supported)} nugget code word(s)",
                "supported_nuggets": supported,
            }
        )
    return schema(judgments=judgments)


SCHEMAS = {"Nuggets", "SubQuestions", "ClosedBookAnswer", "SupportJudgments"}


def server_replier(request: dict[str, Any]) -> dict[str, Any]:
    """The same scripted agents behind the loopback OpenAI-compatible server."""
    from benchsmith.agents.nuggets import nugget_schema, support_schema

    name = request["response_format"]["json_schema"]["name"]
    messages = [{"role": m["role"], "content": m["content"]} for m in request["messages"]]
    content = messages[-1]["content"]
    if name == "Nuggets":
        return scripted_reply(messages, nugget_schema(10)).model_dump()
    if name == "SupportJudgments":
        chunk_count = len(re.findall(r'<chunk number="\d+">', content))
        nugget_count = len(section(content, "nuggets").splitlines())
        return support_reply(content, support_schema(chunk_count, nugget_count)).model_dump()
    return scripted_reply(
        messages, {"SubQuestions": SubQuestions, "ClosedBookAnswer": ClosedBookAnswer}[name]
    ).model_dump()
