"""Benchmarks in the layout of MTRAG and MTRAG-UN (github.com/IBM/mt-rag-benchmark): writing a
synthesized benchmark in it (reading one for ``evaluate`` and ``audit``: stores/formats/mtrag_reader.py).

The conversation layout (MTRAG, ``mtrag-human/``), which the exporter writes::

    conversations/conversations.json      a JSON array of conversations
    retrieval_tasks/<domain>/<domain>_questions.jsonl, _lastturn.jsonl, _rewrite.jsonl
    retrieval_tasks/<domain>/qrels/dev.tsv
    corpora/passage_level/<domain>.jsonl  (MTRAG keeps its corpora beside mtrag-human/, zipped)

A conversation is ``{"conversation_id", "author", "domain", "retriever": {"collection":
{"name"}}, "messages": [...]}``; a user message ``{"speaker": "user", "text", "enrichments":
{"Answerability": [...], "Question Type": [...], "Multi-Turn": [...]}}``, an agent message
``{"speaker": "agent", "text", "contexts": [{"document_id", "title", "text", "feedback":
{"relevant": {<author>: {"value": "yes"}}}}]}``. A task (a turn) is ``<conversation_id><::><n>``,
``n`` counting user messages from 1; the retrieval task files (BEIR queries whose text is
``|user|: ...`` lines) and the qrels (``query-id corpus-id score`` with a header) hold the
answerable and partial turns only. The exporter adds two enrichments MTRAG has not:
``Standalone`` (``STANDALONE``/``NON-STANDALONE``) and ``Topic Switch`` (benchsmith's switch
label: start, follow-up, soft, hard), read back when present so ``evaluate`` breaks a
re-imported benchmark down by switch as it does the original.

The task layout (MTRAG-UN, ``mtragun-human/``), which is read too::

    generation_tasks/reference.jsonl      one task a line: task_id, conversation_id, turn,
                                          input (the messages up to the question), targets,
                                          contexts, answerability, Question Type, Multi-Turn, Collection
    retrieval_tasks/qrels/<domain>.tsv

Reading: a directory is recognized by those files. Its domain is the only one it has, or the
one named by the path given (``.../retrieval_tasks/<domain>`` or
``.../retrieval_tasks/qrels/<domain>.tsv``). Every user turn becomes a query (the unanswerable
and underspecified ones too, without qrels); labels are mapped to benchsmith's
(stores/formats/turn_labels.py; values benchsmith has no name for, such as ``CONVERSATIONAL``, are kept
lower-cased; of several question types the first). The passages are the ``corpus`` given, or
``corpora/passage_level/<domain>.jsonl`` (or ``corpora/<domain>.jsonl``) in the directory or the
one above it, in BEIR form (``_id``, ``title``, ``text``).
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.files import atomic_writer, write_json_atomic
from benchsmith.stores.persistence.jsonl import write_jsonl_atomic

TASK_SEPARATOR = "<::>"
CONVERSATIONS_FILE = Path("conversations") / "conversations.json"
TASKS_FILE = Path("generation_tasks") / "reference.jsonl"
RETRIEVAL_DIR = "retrieval_tasks"
QRELS_SPLIT = "dev"  # MTRAG's qrels are dev.tsv
AUTHOR = "benchsmith"

ANSWERABILITY_TO_MTRAG = {
    "answerable": "ANSWERABLE",
    "partial": "PARTIAL",
    "unanswerable": "UNANSWERABLE",
    "underspecified": "UNDERSPECIFIED",
}
QUESTION_TYPE_TO_MTRAG = {
    "factoid": "Factoid",
    "explanation": "Explanation",
    "comparison": "Comparative",
    "how-to": "How-To",
    "yes/no": "Yes/No",
    "summary": "Summarization",
    "keyword": "Keyword",
}
ANSWERABILITY_FROM_MTRAG = {value: key for key, value in ANSWERABILITY_TO_MTRAG.items()}
QUESTION_TYPE_FROM_MTRAG = {value.lower(): key for key, value in QUESTION_TYPE_TO_MTRAG.items()}
STANDALONE_TO_MTRAG = {True: "STANDALONE", False: "NON-STANDALONE"}
SWITCH_ENRICHMENT = "Topic Switch"


def task_id(conversation_id: str, turn_number: int) -> str:
    """MTRAG's id of a turn: ``turn_number`` counts the user's messages from 1."""
    return f"{conversation_id}{TASK_SEPARATOR}{turn_number}"


# ---------------------------------------------------------------------------------------
# Writing.


@dataclass(frozen=True)
class MtragExport:
    conversations: int
    turns: int
    retrieval_tasks: int  # turns with qrels
    documents: int


def write_mtrag(
    directory: Path, dialogues: Sequence[Mapping[str, Any]], corpus: Iterable[Mapping[str, Any]], domain: str
) -> MtragExport:
    """A synthesized benchmark (dialogues records, stores/formats/benchmark_files.py, and its exported BEIR
    corpus) in the conversation layout, under ``directory``."""
    gold_ids = {gold for dialogue in dialogues for turn in dialogue["turns"] for gold in turn["gold_ids"]}
    passages: dict[str, Mapping[str, Any]] = {}

    def kept(documents: Iterable[Mapping[str, Any]]) -> Iterator[dict[str, Any]]:
        for document in documents:
            if document["_id"] in gold_ids:
                passages[document["_id"]] = document
            yield {"_id": document["_id"], "title": document.get("title", ""), "text": document["text"]}

    documents = write_jsonl_atomic(directory / "corpora" / "passage_level" / f"{domain}.jsonl", kept(corpus))
    if missing := sorted(gold_ids - passages.keys()):
        raise InputError(f"gold chunks missing from the benchmark's corpus: {missing[:3]}")
    conversations = [_conversation(dialogue, domain, passages) for dialogue in dialogues]
    write_json_atomic(directory / CONVERSATIONS_FILE, conversations)
    tasks = directory / RETRIEVAL_DIR / domain
    questions: list[dict[str, str]] = []
    last_turn: list[dict[str, str]] = []
    rewrites: list[dict[str, str]] = []
    qrels: list[tuple[str, str, int]] = []
    for dialogue in dialogues:
        asked: list[str] = []
        for number, turn in enumerate(dialogue["turns"], start=1):
            asked.append(f"|user|: {turn['question']}")
            if not turn["gold_ids"]:  # MTRAG's retrieval tasks are its answerable and partial turns
                continue
            identifier = task_id(dialogue["conversation_id"], number)
            questions.append({"_id": identifier, "text": "\n".join(asked)})
            last_turn.append({"_id": identifier, "text": asked[-1]})
            rewrites.append({"_id": identifier, "text": f"|user|: {turn['rewrite']}"})
            qrels.extend((identifier, gold, 1) for gold in turn["gold_ids"])
    for suffix, records in (("questions", questions), ("lastturn", last_turn), ("rewrite", rewrites)):
        write_jsonl_atomic(tasks / f"{domain}_{suffix}.jsonl", records)
    with atomic_writer(tasks / "qrels" / f"{QRELS_SPLIT}.tsv", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(["query-id", "corpus-id", "score"])
        writer.writerows(qrels)
    return MtragExport(
        conversations=len(conversations),
        turns=sum(len(dialogue["turns"]) for dialogue in dialogues),
        retrieval_tasks=len(questions),
        documents=documents,
    )


def _conversation(
    dialogue: Mapping[str, Any], domain: str, passages: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    previous: Mapping[str, Any] | None = None
    for turn in dialogue["turns"]:
        messages.append({"speaker": "user", "text": turn["question"], "enrichments": _enrichments(turn, previous)})
        messages.append(
            {
                "speaker": "agent",
                "text": turn["response"],
                "contexts": [
                    {
                        "document_id": gold,
                        "title": passages[gold].get("title", ""),
                        "text": passages[gold]["text"],
                        "feedback": {"relevant": {AUTHOR: {"value": "yes"}}},
                    }
                    for gold in turn["gold_ids"]
                ],
            }
        )
        previous = turn
    return {
        "conversation_id": dialogue["conversation_id"],
        "author": AUTHOR,
        "domain": domain,
        "retriever": {"collection": {"name": domain}},
        "messages": messages,
    }


def _enrichments(turn: Mapping[str, Any], previous: Mapping[str, Any] | None) -> dict[str, list[str]]:
    """MTRAG's labels of a user message. Multi-Turn: N/A on the first turn, Clarification for
    the user's answer to a clarifying question (after an underspecified turn), else Follow-up."""
    if previous is None:
        multi_turn = "N/A"
    else:
        multi_turn = "Clarification" if previous.get("answerability") == "underspecified" else "Follow-up"
    enrichments = {
        "Answerability": [ANSWERABILITY_TO_MTRAG[turn.get("answerability", "answerable")]],
        "Question Type": [QUESTION_TYPE_TO_MTRAG[turn["question_type"]]] if turn.get("question_type") else [],
        "Multi-Turn": [multi_turn],
    }
    if turn.get("standalone") is not None:
        enrichments["Standalone"] = [STANDALONE_TO_MTRAG[turn["standalone"]]]
    if turn.get("switch"):
        enrichments[SWITCH_ENRICHMENT] = [turn["switch"]]
    return enrichments
