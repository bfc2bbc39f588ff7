"""Benchmarks in the layout of MTRAG and MTRAG-UN (github.com/IBM/mt-rag-benchmark): writing a
synthesized benchmark in it, and reading one for ``evaluate`` and ``audit``.

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

from benchsmith.history import Exchange, query_text
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.turn_labels import TurnLabels
from benchsmith.stores.persistence.files import atomic_writer, write_json_atomic
from benchsmith.stores.persistence.jsonl import read_json, read_jsonl, write_jsonl_atomic

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
    questions, last_turn, rewrites, qrels = [], [], [], []
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


# ---------------------------------------------------------------------------------------
# Reading (stores/formats/beir.py makes the Benchmark: this module sits below it).


@dataclass
class MtragTurn:
    """One user turn, with the fields of stores.formats.beir.BenchmarkQuery."""

    id: str
    text: str
    question: str
    conversation_id: str
    turn: int
    response: str
    history: list[Exchange]
    answerability: str | None
    question_type: str | None
    standalone: bool | None
    rewrite: str | None = None
    switch: str | None = None


@dataclass(frozen=True)
class MtragBenchmark:
    name: str
    root: Path
    turns: list[MtragTurn]
    qrels_file: Path  # BEIR TSV
    corpus_file: Path  # BEIR corpus.jsonl
    queries_file: Path


@dataclass(frozen=True)
class MtragSources:
    root: Path  # the folder holding conversations/ (or generation_tasks/)
    domain: str
    qrels: Path
    conversations: Path | None  # the conversation layout...
    tasks: Path | None  # ...or the task layout


def is_mtrag_layout(path: Path) -> bool:
    return _root_of(path) is not None


def _root_of(path: Path) -> tuple[Path, str | None] | None:
    """The layout's root folder, and the domain the path names (None: the root's only one)."""
    if path.is_dir() and ((path / CONVERSATIONS_FILE).is_file() or (path / TASKS_FILE).is_file()):
        return path, None
    if path.is_dir() and path.parent.name == RETRIEVAL_DIR and (path.parent.parent / CONVERSATIONS_FILE).is_file():
        return path.parent.parent, path.name
    if (
        path.is_file()
        and path.suffix == ".tsv"
        and path.parent.name == "qrels"
        and path.parent.parent.name == RETRIEVAL_DIR
        and (path.parent.parent.parent / TASKS_FILE).is_file()
    ):
        return path.parent.parent.parent, path.stem
    return None


def mtrag_sources(path: Path, split: str = QRELS_SPLIT) -> MtragSources:
    found = _root_of(path)
    if found is None:
        raise InputError(f"{path}: not an MTRAG-layout benchmark (no {CONVERSATIONS_FILE} or {TASKS_FILE})")
    root, domain = found
    retrieval = root / RETRIEVAL_DIR
    if (root / CONVERSATIONS_FILE).is_file():
        domains = sorted(folder.name for folder in retrieval.glob("*") if (folder / "qrels").is_dir())
        qrels_of = lambda name: _split_file(retrieval / name / "qrels", split)  # noqa: E731
        naming = f"{retrieval}/<domain>"
    else:
        domains = sorted(file.stem for file in (retrieval / "qrels").glob("*.tsv"))
        qrels_of = lambda name: retrieval / "qrels" / f"{name}.tsv"  # noqa: E731
        naming = f"{retrieval}/qrels/<domain>.tsv"
    if domain is None:
        if len(domains) != 1:
            listed = ", ".join(domains) or "none"
            raise InputError(f"{root}: an MTRAG benchmark of {len(domains)} domains ({listed}); name one: {naming}")
        domain = domains[0]
    conversations = root / CONVERSATIONS_FILE
    return MtragSources(
        root=root,
        domain=domain,
        qrels=qrels_of(domain),
        conversations=conversations if conversations.is_file() else None,
        tasks=None if conversations.is_file() else root / TASKS_FILE,
    )


def _split_file(qrels_dir: Path, split: str) -> Path:
    """``<split>.tsv``, else the folder's only qrels file (MTRAG's dev.tsv)."""
    if (qrels_dir / f"{split}.tsv").is_file():
        return qrels_dir / f"{split}.tsv"
    files = sorted(qrels_dir.glob("*.tsv"))
    return files[0] if len(files) == 1 else qrels_dir / f"{split}.tsv"  # a missing file is named when read


def mtrag_corpus(sources: MtragSources, corpus: Path | None) -> Path:
    if corpus is not None:
        if not corpus.is_file():
            raise InputError(f"{corpus}: corpus file not found")
        return corpus
    candidates = [
        folder / "corpora" / sub / f"{sources.domain}.jsonl"
        for folder in (sources.root, sources.root.parent)
        for sub in ("passage_level", ".")
    ]
    if found := next((candidate for candidate in candidates if candidate.is_file()), None):
        return found
    zipped = next(
        (
            candidate.with_name(candidate.name + ".zip")
            for candidate in candidates
            if candidate.with_name(candidate.name + ".zip").is_file()
        ),
        None,
    )
    if zipped is not None:
        raise InputError(
            f"{zipped}: unzip it first (MTRAG ships its corpora zipped): unzip {zipped} -d {zipped.parent}"
        )
    raise InputError(
        f"{sources.root}: no corpus for domain {sources.domain!r}: looked for "
        f"{', '.join(str(candidate) for candidate in candidates[:2])}; pass --corpus"
    )


def read_mtrag(path: Path, split: str = QRELS_SPLIT, corpus: Path | None = None) -> MtragBenchmark:
    sources = mtrag_sources(path, split)
    corpus_file = mtrag_corpus(sources, corpus)
    if sources.conversations is not None:
        rewrites = _rewrites(sources.root / RETRIEVAL_DIR / sources.domain / f"{sources.domain}_rewrite.jsonl")
        queries = _conversation_queries(
            sources.conversations,
            sources.domain,
            rewrites,
            _last_turn_ids(sources.root / RETRIEVAL_DIR / sources.domain / f"{sources.domain}_lastturn.jsonl"),
        )
        queries_file = sources.conversations
    else:
        queries = _task_queries(sources.tasks, sources.domain)  # type: ignore[arg-type]
        queries_file = sources.tasks
    if not queries:
        raise InputError(f"{queries_file}: no user turns of domain {sources.domain!r}")
    return MtragBenchmark(
        name=f"{sources.root.name}-{sources.domain}",
        root=sources.root,
        turns=queries,
        qrels_file=sources.qrels,
        corpus_file=corpus_file,
        queries_file=queries_file,
    )


def mtrag_labels(enrichments: Mapping[str, Any], where: str) -> TurnLabels:
    """benchsmith's labels of MTRAG's enrichments (``Answerability`` or ``answerability``,
    ``Question Type``, ``Standalone``: lists of strings)."""

    def first(*keys: str) -> str | None:
        for key in keys:
            value = enrichments.get(key)
            if value is None:
                continue
            values = value if isinstance(value, list) else [value]
            if not all(isinstance(item, str) for item in values):
                raise InputError(f"{where}: enrichment {key!r} must be a list of strings, not {value!r}")
            return next((item.strip() for item in values if item.strip()), None)
        return None

    answerability, question_type, standalone = (
        first("Answerability", "answerability"),
        first("Question Type"),
        first("Standalone"),
    )
    if standalone not in (None, *STANDALONE_TO_MTRAG.values()):
        raise InputError(f"{where}: enrichment 'Standalone' must be STANDALONE or NON-STANDALONE, not {standalone!r}")
    return TurnLabels(
        ANSWERABILITY_FROM_MTRAG.get(answerability.upper(), answerability.lower()) if answerability else None,
        QUESTION_TYPE_FROM_MTRAG.get(question_type.lower(), question_type.lower()) if question_type else None,
        None if standalone is None else standalone == STANDALONE_TO_MTRAG[True],
    )


def _conversation_queries(
    path: Path, domain: str, rewrites: Mapping[str, str], last_turns: Mapping[str, str]
) -> list[MtragTurn]:
    conversations = read_json(path)
    if not isinstance(conversations, list):
        raise InputError(f"{path}: expected a JSON array of conversations")
    queries: list[MtragTurn] = []
    seen: set[str] = set()
    for position, conversation in enumerate(conversations):
        if not isinstance(conversation, dict) or not isinstance(conversation.get("messages"), list):
            raise InputError(f"{path}: conversation at index {position}: needs a 'messages' list")
        named = conversation.get("conversation_id") or _id_from_tasks(conversation["messages"], last_turns)
        # Named by its id (the one a reader finds in the file or the task files), its index only when it has none.
        where = (
            f"{path}: conversation {str(named)!r}"
            if named
            else f"{path}: conversation at index {position} (no conversation_id)"
        )
        if not _in_domain(
            str(
                ((conversation.get("retriever") or {}).get("collection") or {}).get("name")
                or conversation.get("domain")
                or ""
            ),
            domain,
        ):
            continue
        turns = _turns(conversation["messages"], where)
        conversation_id = named or f"c{position}"
        if str(conversation_id) in seen:
            raise InputError(f"{where}: conversation_id {conversation_id!r} repeats")
        seen.add(str(conversation_id))
        history: list[Exchange] = []
        for number, (question, response, labels, switch) in enumerate(turns, start=1):
            identifier = task_id(str(conversation_id), number)
            queries.append(
                MtragTurn(
                    id=identifier,
                    text=query_text(history, question),
                    question=question,
                    rewrite=rewrites.get(identifier),
                    conversation_id=str(conversation_id),
                    turn=number,
                    response=response,
                    history=list(history),
                    answerability=labels.answerability,
                    question_type=labels.question_type,
                    standalone=labels.standalone,
                    switch=switch,
                )
            )
            history.append((question, response))
    return queries


def _switch(enrichments: Mapping[str, Any]) -> str | None:
    """benchsmith's ``Topic Switch`` enrichment, where an export of ours wrote it."""
    values = enrichments.get(SWITCH_ENRICHMENT) or []
    return next((str(value) for value in (values if isinstance(values, list) else [values]) if value), None)


def _turns(messages: list[Any], where: str) -> list[tuple[str, str, TurnLabels, str | None]]:
    """(question, the agent's reply, labels, switch) of each user message."""
    turns: list[tuple[str, str, TurnLabels, str | None]] = []
    for number, message in enumerate(messages):
        if (
            not isinstance(message, dict)
            or message.get("speaker") not in ("user", "agent")
            or not isinstance(message.get("text"), str)
        ):
            raise InputError(f"{where}, message {number}: needs 'speaker' (user or agent) and 'text'")
        if message["speaker"] == "user":
            enrichments = message.get("enrichments") or {}
            if not isinstance(enrichments, dict):
                raise InputError(f"{where}, message {number}: 'enrichments' must be an object")
            turns.append(
                (message["text"], "", mtrag_labels(enrichments, f"{where}, message {number}"), _switch(enrichments))
            )
        elif turns and not turns[-1][1]:
            turns[-1] = (turns[-1][0], message["text"], turns[-1][2], turns[-1][3])
    return turns


def _in_domain(collection: str, domain: str) -> bool:
    """MTRAG names collections ``mt-rag-<domain>-elser-...`` (cloud: ``ibmcloud``); a
    conversation naming none belongs to every domain."""
    return not collection or domain.lower() in collection.lower()


def _rewrites(path: Path) -> dict[str, str]:
    return (
        {
            str(record["_id"]): str(record.get("text", "")).removeprefix("|user|:").strip()
            for _, record in read_jsonl(path)
            if "_id" in record
        }
        if path.is_file()
        else {}
    )


def _last_turn_ids(path: Path) -> dict[str, str]:
    """``{last question: task id}`` of the retrieval tasks: MTRAG's conversations.json names no
    conversation id, its task files do."""
    return (
        {
            str(record.get("text", "")).removeprefix("|user|:").strip(): str(record["_id"])
            for _, record in read_jsonl(path)
            if "_id" in record
        }
        if path.is_file()
        else {}
    )


def _id_from_tasks(messages: list[Any], last_turns: Mapping[str, str]) -> str | None:
    """The conversation id MTRAG's task files give a conversation's user turns (its conversations.json names none)."""
    questions = [
        message["text"]
        for message in messages
        if isinstance(message, dict) and message.get("speaker") == "user" and isinstance(message.get("text"), str)
    ]
    for number, question in enumerate(questions, start=1):
        identifier = last_turns.get(question.strip())
        if identifier and identifier.endswith(f"{TASK_SEPARATOR}{number}"):
            return identifier.rsplit(TASK_SEPARATOR, 1)[0]
    return None


def _task_queries(path: Path, domain: str) -> list[MtragTurn]:
    queries: list[MtragTurn] = []
    seen: dict[str, int] = {}
    for line_number, record in read_jsonl(path):
        where = f"{path}:{line_number}"
        if not _in_domain(str(record.get("Collection") or record.get("collection") or ""), domain):
            continue
        identifier, messages = record.get("task_id"), record.get("input")
        if not isinstance(identifier, str) or not identifier:
            raise InputError(f"{where}: missing 'task_id'")
        if identifier in seen:
            raise InputError(f"{where}: task id {identifier!r} repeats line {seen[identifier]}")
        seen[identifier] = line_number
        if not isinstance(messages, list) or not messages:
            raise InputError(f"{where}: task {identifier!r} needs a non-empty 'input' list of messages")
        turns = _turns(messages, where)
        if not turns or turns[-1][1]:
            raise InputError(f"{where}: task {identifier!r}: its input must end with the user's question")
        targets = record.get("targets") or []
        response = next((str(target.get("text", "")) for target in targets if isinstance(target, dict)), "")
        labels = mtrag_labels(record, where)  # the task's labels are top-level keys
        question = turns[-1][0]
        history = [(asked, answered) for asked, answered, *_ in turns[:-1]]
        conversation_id = str(record.get("conversation_id") or identifier.rsplit(TASK_SEPARATOR, 1)[0])
        queries.append(
            MtragTurn(
                id=identifier,
                text=query_text(history, question),
                question=question,
                conversation_id=conversation_id,
                turn=int(record.get("turn") or len(turns)),
                response=response,
                history=history,
                answerability=labels.answerability,
                question_type=labels.question_type,
                standalone=labels.standalone,
            )
        )
    return queries
