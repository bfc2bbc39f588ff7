"""Reading a benchmark in the layouts of MTRAG and MTRAG-UN for ``evaluate`` and ``audit``: the
layouts, the enrichments and the mapping of labels are described in stores/formats/mtrag.py, which
writes them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchsmith.history import Exchange, query_text
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.mtrag import (
    ANSWERABILITY_FROM_MTRAG,
    CONVERSATIONS_FILE,
    QRELS_SPLIT,
    QUESTION_TYPE_FROM_MTRAG,
    RETRIEVAL_DIR,
    STANDALONE_TO_MTRAG,
    SWITCH_ENRICHMENT,
    TASK_SEPARATOR,
    TASKS_FILE,
    task_id,
)
from benchsmith.stores.formats.turn_labels import TurnLabels
from benchsmith.stores.persistence.jsonl import read_json, read_jsonl

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

        def qrels_of(name: str) -> Path:
            return _split_file(retrieval / name / "qrels", split)

        naming = f"{retrieval}/<domain>"
    else:
        domains = sorted(file.stem for file in (retrieval / "qrels").glob("*.tsv"))

        def qrels_of(name: str) -> Path:
            return retrieval / "qrels" / f"{name}.tsv"

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
        assert sources.tasks is not None  # the task layout, where there is no conversation file
        queries = _task_queries(sources.tasks, sources.domain)
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
