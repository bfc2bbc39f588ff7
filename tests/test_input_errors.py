"""Bad input never crashes and never passes silently: every reader of user files, through the
CLI command that takes the file, meets each way a file goes wrong (bytes that are not UTF-8, a
last line cut off, an extra or a missing field, a repeated id, a directory, an empty file) and
answers with exit status 2, a message naming the file and the line or id, no traceback, and
no run record left in the workspace.

Each reader's valid input is written first and read back by its store function (so the one
spoiling is what the command refuses), then spoiled one way per case."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchsmith.cli import app
from benchsmith.cli.runs import ITEMS_OF_JOB
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.beir import load_turn_jsonl, read_beir_queries, read_qrels
from benchsmith.stores.formats.cast import read_cast_topics, read_resolved_tsv
from benchsmith.stores.formats.ecast import read_ecast
from benchsmith.stores.formats.labelled_questions import read_labelled_questions
from benchsmith.stores.formats.multiconir import read_dataset, read_task1_scores
from benchsmith.stores.formats.nugget_qrels import read_nugget_qrels
from benchsmith.stores.formats.qa_pairs import read_qa_jsonl
from benchsmith.stores.formats.query_files import read_user_queries
from benchsmith.stores.formats.space_files import read_space_file
from benchsmith.stores.formats.stackexchange import read_posts_xml
from benchsmith.stores.formats.trec import read_trec_run
from benchsmith.stores.persistence.jsonl import read_json, read_json_object, read_jsonl
from benchsmith.tools.corpus.loaders import iter_beir_corpus, load_sources
from benchsmith.tools.defaults import MAX_DOCUMENT_BYTES

runner = CliRunner(env={"COLUMNS": "400"})  # long paths on one line

CASES = ("non-utf8", "truncated", "extra field", "missing field", "duplicate id", "directory", "empty")


def lines(*rows: object) -> bytes:
    """JSON Lines of the rows (dicts) or the rows as given (strings), each ending with a newline."""
    return "".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows).encode()


@dataclass
class Reader:
    """A file format: its valid content, the store function that reads it, the command that
    takes it (given the folder and the file), and its spoiled forms (``(content, expected)``:
    what the message must name besides the file; a line is written ``:N``)."""

    name: str
    file_name: str
    valid: bytes
    read: Callable[[Path], object]
    command: Callable[[Path, Path], list[str]]
    spoiled: dict[str, tuple[bytes, str]]
    setup: Callable[[Path], None] = lambda folder: None  # the command's other inputs
    not_applicable: dict[str, str] = field(default_factory=dict)  # case -> why it cannot go wrong here


def beir_directory(
    folder: Path, corpus: bytes | None = None, queries: bytes | None = None, qrels: bytes | None = None
) -> None:
    (folder / "bench" / "qrels").mkdir(parents=True, exist_ok=True)
    for name, content in (
        ("corpus.jsonl", corpus or CORPUS),
        ("queries.jsonl", queries or QUERIES),
        ("qrels/test.tsv", qrels or QRELS),
    ):
        if not (folder / "bench" / name).exists():
            (folder / "bench" / name).write_bytes(content)


CORPUS = lines(
    {"_id": "d1", "title": "", "text": "the red fox jumps"},
    {"_id": "d2", "title": "", "text": "a blue whale"},
    {"_id": "d3", "title": "", "text": "green grass grows"},
)
QUERIES = lines({"_id": "q1", "text": "red fox"}, {"_id": "q2", "text": "blue whale"}, {"_id": "q3", "text": "grass"})
QRELS = b"query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\nq3\td3\t1\n"
RUN = b"q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\nq2 Q0 d2 1 2.0 t\n"
TREC_QRELS = b"q1 0 d1 1\nq2 0 d2 1\nq2 0 d3 0\n"
QA = lines(
    {"id": "a1", "question": "How do I sort?", "answer": "Use sorted()."},
    {"id": "a2", "question": "How do I read a file?", "answer": "Use open()."},
)
POSTS = (
    b'<?xml version="1.0" encoding="utf-8"?>\n<posts>\n'
    b'  <row Id="1" PostTypeId="1" AcceptedAnswerId="2" Title="Sorting" Body="How do I sort?" Tags="|py|" />\n'
    b'  <row Id="2" PostTypeId="2" ParentId="1" Body="Use sorted()." />\n'
    b'  <row Id="3" PostTypeId="1" AcceptedAnswerId="4" Title="Files" Body="How do I read?" Tags="|py|" />\n'
    b'  <row Id="4" PostTypeId="2" ParentId="3" Body="Use open()." />\n'
    b"</posts>\n"
)
TASK1 = b"Index,Query1_Positive,Query1_HN1,Query2_Positive,Query2_HN1\n0,0.9,0.1,0.8,0.2\n1,0.7,0.3,0.6,0.5\n"
DATASET = (
    b"Id,Title,Query1,Natural_Query1,Positive,HN1,Miss1\n"
    b"r1,T1,find a,a thing,doc a,neg a,miss a\nr2,T2,find b,b thing,doc b,neg b,miss b\n"
)
CAST = (
    "[\n"
    + json.dumps(
        {
            "number": 1,
            "title": "t",
            "turn": [
                {"number": 1, "raw_utterance": "what is a fox"},
                {"number": 2, "raw_utterance": "where does it live"},
            ],
        }
    )
    + ",\n"
    + json.dumps({"number": 2, "title": "u", "turn": [{"number": 1, "raw_utterance": "what is a whale"}]})
    + "]\n"
).encode()  # a topic per line, so a cut or a bad byte is on a line of its own
ECAST = (
    b"TURN_ID,MANUAL PARAPHRASE,RAW PARAPHRASE\n1_1,what is a fox,what's a fox\n"
    b"1_2,where does a fox live,where does it live\n2_1,what is a whale,what's a whale\n"
)
RESOLVED = b"1_1\twhat is a fox\n1_2\twhere does a fox live\n2_1\twhat is a whale\n"
TURNS = lines(
    {"id": "c1_t0", "conversation_id": "c1", "turn": 0, "history": [], "question": "what is a fox", "gold_ids": ["d1"]},
    {
        "id": "c1_t1",
        "conversation_id": "c1",
        "turn": 1,
        "history": [{"question": "what is a fox", "answer": "an animal"}],
        "question": "where does it live",
        "gold_ids": ["d1"],
    },
)
USER_QUERIES = lines({"id": "u1", "question": "how to sort a list"}, {"id": "u2", "question": "how to open a file"})
LABELLED_OVER_BENCH = lines(
    {"id": "l1", "question": "which fox jumps", "gold": [{"chunk_id": "d1", "document": "d1", "evidence": "fox"}]},
    {
        "id": "l2",
        "question": "what colour is the whale",
        "gold": [{"chunk_id": "d2", "document": "d2", "evidence": "blue"}],
    },
)
NUGGET_QRELS = b"q1 q1_n1 d1 1\nq1 q1_n2 d2 0\nq2 q2_n1 d2 1\n"
SPACE = b"retriever: [bm25]\ntop_k: [5]\n"
LABELLED = lines(
    {"id": "l1", "question": "how to sort", "gold": [{"chunk_id": "c1", "document": "doc", "evidence": "sorted"}]},
    {"id": "l2", "question": "how to open", "gold": [{"chunk_id": "c2", "document": "doc", "evidence": "open"}]},
)


def workspace(folder: Path) -> list[str]:
    return ["-w", str(folder / "ws")]


def write(folder: Path, name: str, content: bytes) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return path


READERS = [
    Reader(
        "BEIR corpus.jsonl",
        "bench/corpus.jsonl",
        CORPUS,
        lambda path: list(iter_beir_corpus(path)),
        lambda folder, path: [
            "evaluate",
            str(folder / "bench"),
            "--retriever",
            "bm25",
            "--history",
            "full",
            *workspace(folder),
        ],
        {
            "extra field": (CORPUS + lines('{"_id": "d4", "text": "x"} {"_id": "d5"}'), ":4"),
            "missing field": (CORPUS + lines({"_id": "d4", "title": "no text"}), ":4"),
        },
        setup=beir_directory,
        not_applicable={
            "duplicate id": "a repeated document id is a warning (evaluate --strict: an error), as "
            "docs/design.md says; tests/test_evaluate_graph.py covers it"
        },
    ),
    Reader(
        "BEIR corpus.jsonl ingested",
        "corpus.jsonl",
        CORPUS,
        lambda path: load_sources([str(path)]).documents,
        lambda folder, path: ["ingest", str(path), *workspace(folder), "--run-id", "bad-input"],
        {
            "extra field": (CORPUS + lines('{"_id": "d4", "text": "x"} {"_id": "d5"}'), ":4"),
            "missing field": (CORPUS + lines({"_id": "d4", "title": "no text"}), ":4"),
            "duplicate id": (
                CORPUS + lines({"_id": "d2", "title": "", "text": "again"}),
                ":4: document id 'd2' repeats line 2",
            ),
        },
    ),
    Reader(
        "BEIR queries.jsonl",
        "bench/queries.jsonl",
        QUERIES,
        read_beir_queries,
        lambda folder, path: [
            "evaluate",
            str(folder / "bench"),
            "--retriever",
            "bm25",
            "--history",
            "full",
            *workspace(folder),
        ],
        {
            "extra field": (QUERIES + lines('{"_id": "q4", "text": "x"} 7'), ":4"),
            "missing field": (QUERIES + lines({"_id": "q4"}), ":4"),
            "duplicate id": (QUERIES + lines({"_id": "q2", "text": "again"}), ":4"),
        },
        setup=beir_directory,
    ),
    Reader(
        "BEIR qrels TSV",
        "bench/qrels/test.tsv",
        QRELS,
        read_qrels,
        lambda folder, path: [
            "evaluate",
            str(folder / "bench"),
            "--retriever",
            "bm25",
            "--history",
            "full",
            *workspace(folder),
        ],
        {
            "extra field": (QRELS + b"q1\td2\t0\textra\n", ":5"),
            "missing field": (QRELS + b"q1\td2\n", ":5"),
            "duplicate id": (QRELS + b"q1\td1\t0\n", ":5"),
        },
        setup=beir_directory,
    ),
    Reader(
        "TREC run",
        "system.run",
        RUN,
        read_trec_run,
        lambda folder, path: [
            "evaluate",
            "--run",
            str(path),
            "--qrels",
            str(folder / "qrels.txt"),
            "--measure",
            "AP",
            *workspace(folder),
        ],
        {
            "extra field": (RUN + b"q2 Q0 d3 2 1.0 t extra\n", ":4"),
            "missing field": (RUN + b"q2 Q0 d3 2 1.0\n", ":4"),
            "duplicate id": (RUN + b"q2 Q0 d2 2 1.0 t\n", "'d2' twice"),
        },
        setup=lambda folder: write(folder, "qrels.txt", TREC_QRELS),
    ),
    Reader(
        "TREC run beside a benchmark",
        "system.run",
        RUN,
        read_trec_run,
        lambda folder, path: ["evaluate", str(folder / "bench"), "--run", str(path), *workspace(folder)],
        {
            "extra field": (RUN + b"q2 Q0 d3 2 1.0 t extra\n", ":4"),
            "missing field": (RUN + b"q2 Q0 d3 2 1.0\n", ":4"),
            "duplicate id": (RUN + b"q2 Q0 d2 2 1.0 t\n", "'d2' twice"),
        },
        setup=beir_directory,
    ),
    Reader(
        "TREC qrels",
        "qrels.txt",
        TREC_QRELS,
        read_qrels,
        lambda folder, path: [
            "evaluate",
            "--run",
            str(folder / "system.run"),
            "--qrels",
            str(path),
            *workspace(folder),
        ],
        {
            "extra field": (TREC_QRELS + b"q3 0 d3 1 extra\n", ":4"),
            "missing field": (TREC_QRELS + b"q3 0 d3\n", ":4"),
            "duplicate id": (TREC_QRELS + b"q2 0 d3 2\n", ":4"),
        },
        setup=lambda folder: write(folder, "system.run", RUN),
    ),
    Reader(
        "nugget qrels",
        "nuggets.trec",
        NUGGET_QRELS,
        read_nugget_qrels,
        lambda folder, path: [
            "evaluate",
            "--run",
            str(folder / "system.run"),
            "--nugget-qrels",
            str(path),
            *workspace(folder),
        ],
        {
            "extra field": (NUGGET_QRELS + b"q2 q2_n2 d1 1 x\n", ":4"),
            "missing field": (NUGGET_QRELS + b"q2 q2_n2 d1\n", ":4"),
            "duplicate id": (NUGGET_QRELS + b"q1 q1_n1 d1 0\n", ":4"),
        },
        setup=lambda folder: write(folder, "system.run", RUN),
    ),
    Reader(
        "Q&A JSONL",
        "qa.jsonl",
        QA,
        read_qa_jsonl,
        lambda folder, path: ["nuggets", str(path), "--corpus", str(folder / "docs"), *workspace(folder)],
        {
            "extra field": (QA + lines('{"id": "a3", "question": "q", "answer": "a"} {}'), ":3"),
            "missing field": (QA + lines({"id": "a3", "question": "no answer"}), ":3"),
            "duplicate id": (QA + lines({"id": "a1", "question": "again", "answer": "again"}), ":3"),
        },
        setup=lambda folder: write(folder, "docs/notes.md", b"# Notes\n\nUse sorted() to sort a list.\n"),
    ),
    Reader(
        "Stack Exchange Posts.xml",
        "Posts.xml",
        POSTS,
        read_posts_xml,
        lambda folder, path: ["nuggets", str(path), "--corpus", str(folder / "docs"), *workspace(folder)],
        {
            "missing field": (POSTS.replace(b'<row Id="4" ', b"<row "), ":6"),
            "duplicate id": (POSTS.replace(b'<row Id="3" ', b'<row Id="1" '), ":5"),
        },
        setup=lambda folder: write(folder, "docs/notes.md", b"# Notes\n\nUse sorted() to sort a list.\n"),
        not_applicable={"extra field": "XML rows carry any attributes; the reader takes the ones it knows"},
    ),
    Reader(
        "MultiConIR Task 1 score table",
        "task1.csv",
        TASK1,
        read_task1_scores,
        lambda folder, path: ["hardneg", "score", "--task1", str(path)],
        {
            "extra field": (TASK1 + b"2,0.5,0.4,0.3,0.2,0.1\n", ":4"),
            "missing field": (TASK1 + b"2,0.5,0.4,0.3\n", ":4"),
            "duplicate id": (TASK1 + b"1,0.5,0.4,0.3,0.2\n", ":4"),
        },
    ),
    Reader(
        "MultiConIR dataset hardneg.csv",
        "hardneg.csv",
        DATASET,
        read_dataset,
        lambda folder, path: [
            "hardneg",
            "score",
            str(path),
            "--retriever",
            "bm25",
            "--out",
            str(folder / "out"),
            *workspace(folder),
        ],
        {
            "extra field": (DATASET + b"r3,T3,find c,c thing,doc c,neg c,miss c,extra\n", ":4"),
            "missing field": (DATASET + b"r3,T3,find c,c thing,doc c\n", ":4"),
            "duplicate id": (DATASET + b"r2,T2,find c,c thing,doc c,neg c,miss c\n", ":4"),
        },
    ),
    Reader(
        "CAsT topics JSON",
        "topics_evaluation_topics.json",
        CAST,
        read_cast_topics,
        lambda folder, path: ["paraphrase", str(path), "--import-ecast", str(folder / "ECAsT.csv"), *workspace(folder)],
        {
            "missing field": (CAST.replace(b'"raw_utterance": "where does it live"', b'"other": "x"'), "turn 2"),
            "duplicate id": (CAST.replace(b'{"number": 2, "raw_utterance"', b'{"number": 1, "raw_utterance"'), "1_1"),
        },
        setup=lambda folder: write(folder, "ECAsT.csv", ECAST),
        not_applicable={"extra field": "topic and turn objects carry any keys (2020 and 2021 add several)"},
    ),
    Reader(
        "CAsT resolved utterances TSV",
        "topics_evaluation_topics_resolved.tsv",
        RESOLVED,
        read_resolved_tsv,
        lambda folder, path: [
            "paraphrase",
            str(folder / "topics_evaluation_topics.json"),
            str(path),
            "--import-ecast",
            str(folder / "ECAsT.csv"),
            *workspace(folder),
        ],
        {
            "extra field": (RESOLVED + b"2_1\twhat is a whale\textra\n", ":4"),
            "missing field": (RESOLVED + b"2_1\n", ":4"),
            "duplicate id": (RESOLVED + b"1_2\twhere does a fox live\n", ":4"),
        },
        setup=lambda folder: (write(folder, "topics_evaluation_topics.json", CAST), write(folder, "ECAsT.csv", ECAST)),
        not_applicable={
            "truncated": "a rewrite cut short is still a rewrite: a line of two tab-separated fields has no end to miss"
        },
    ),
    Reader(
        "ECAsT paraphrases CSV",
        "ECAsT.csv",
        ECAST,
        read_ecast,
        lambda folder, path: [
            "paraphrase",
            str(folder / "topics_evaluation_topics.json"),
            "--import-ecast",
            str(path),
            *workspace(folder),
        ],
        {
            "extra field": (ECAST + b"2_1,what is a whale,whale?,extra\n", ":5"),
            "missing field": (ECAST + b"2_1,whale\n", ":5"),
        },
        setup=lambda folder: write(folder, "topics_evaluation_topics.json", CAST),
        not_applicable={
            "duplicate id": "a row has no id beyond its content (several per turn are the format): a "
            "verbatim repeat is read once and reported, as the published file needs "
            "(tests/test_paraphrase_inputs.py)"
        },
    ),
    Reader(
        "turn JSONL benchmark",
        "turns.jsonl",
        TURNS,
        lambda path: load_turn_jsonl(path, None),
        lambda folder, path: ["paraphrase", str(path), "--per-turn", "1", *workspace(folder)],
        {
            "extra field": (TURNS + lines('{"id": "c1_t2"} {}'), ":3"),
            "missing field": (TURNS + lines({"id": "c1_t2", "turn": 2, "gold_ids": ["d1"]}), ":3"),
            "duplicate id": (TURNS + lines({"id": "c1_t1", "question": "again", "gold_ids": ["d1"]}), ":3"),
        },
    ),
    Reader(
        "labelled questions JSONL",
        "labelled.jsonl",
        LABELLED_OVER_BENCH,
        read_labelled_questions,
        lambda folder, path: [
            "validate",
            str(folder / "bench"),
            "--human",
            str(path),
            "--retriever",
            "bm25",
            "--history",
            "full",
            "--history",
            "current",
            "--history",
            "last:1",
            *workspace(folder),
        ],
        {
            "extra field": (LABELLED_OVER_BENCH + lines('{"id": "l3"} {}'), ":3"),
            "missing field": (LABELLED_OVER_BENCH + lines({"id": "l3", "gold": []}), ":3"),
            "duplicate id": (
                LABELLED_OVER_BENCH
                + lines(
                    {
                        "id": "l1",
                        "question": "other",
                        "gold": [{"chunk_id": "d3", "document": "d3", "evidence": "grass"}],
                    }
                ),
                ":3",
            ),
        },
        setup=beir_directory,
    ),
    Reader(
        "select queries JSONL",
        "queries.jsonl",
        USER_QUERIES,
        read_user_queries,
        lambda folder, path: [
            "select",
            str(path),
            "--corpus",
            str(folder / "docs"),
            "--retriever",
            "bm25",
            *workspace(folder),
        ],
        {
            "extra field": (USER_QUERIES + lines('{"id": "u3", "question": "q"} []'), ":3"),
            "missing field": (USER_QUERIES + lines({"id": "u3"}), ":3"),
            "duplicate id": (USER_QUERIES + lines({"id": "u1", "question": "again"}), ":3"),
        },
        setup=lambda folder: write(folder, "docs/notes.md", b"# Notes\n\nUse sorted() to sort a list.\n"),
    ),
    Reader(
        "select queries text",
        "queries.txt",
        b"how to sort a list\nhow to open a file\n",
        read_user_queries,
        lambda folder, path: [
            "select",
            str(path),
            "--corpus",
            str(folder / "docs"),
            "--retriever",
            "bm25",
            *workspace(folder),
        ],
        {},
        setup=lambda folder: write(folder, "docs/notes.md", b"# Notes\n\nUse sorted() to sort a list.\n"),
        not_applicable={
            "truncated": "a query cut short is still a query",
            "extra field": "a line is a query",
            "missing field": "a line is a query",
            "duplicate id": "ids are line numbers",
        },
    ),
    Reader(
        "select strategy space YAML",
        "space.yaml",
        SPACE,
        read_space_file,
        lambda folder, path: [
            "select",
            str(folder / "queries.txt"),
            "--corpus",
            str(folder / "docs"),
            "--space",
            str(path),
            *workspace(folder),
        ],
        {
            "extra field": (SPACE + b"colour: [red]\n", ": unknown key(s) colour"),
            "duplicate id": (SPACE + b"retriever: [dense]\n", ":3: key 'retriever' repeats line 1"),
        },
        setup=lambda folder: (
            write(folder, "docs/notes.md", b"# Notes\n\nUse sorted() to sort a list.\n"),
            write(folder, "queries.txt", b"how to sort a list\n"),
        ),
        not_applicable={
            "truncated": "YAML has no end to miss: a list cut after an item is still a list",
            "missing field": "every key of a space has a default",
        },
    ),
]


def spoiled(reader: Reader, case: str) -> tuple[bytes | None, str]:
    """The file's spoiled content (None: a directory in its place) and what the message must name."""
    valid_lines = reader.valid.splitlines(keepends=True)
    last = len(valid_lines)
    if case == "non-utf8":  # a Latin-1 byte in the last line, as a file saved in another encoding has
        start = len(b"".join(valid_lines[:-1])) + 1
        return reader.valid[:start] + b"\xe9" + reader.valid[start:], f":{last}"
    if case == "truncated":  # the last line cut off mid-way, as by a copy that stopped
        line = valid_lines[-1]
        return b"".join(valid_lines[:-1]) + line[: len(line) // 2], f":{last}"
    if case == "directory":
        return None, ""
    if case == "empty":
        return b"", ""
    return reader.spoiled[case]


def parameters():
    for reader in READERS:
        for case in CASES:
            if case in reader.not_applicable:
                continue
            if case in ("extra field", "missing field", "duplicate id") and case not in reader.spoiled:
                continue
            yield pytest.param(reader, case, id=f"{reader.name}-{case}")


@pytest.mark.parametrize("reader", READERS, ids=[reader.name for reader in READERS])
def test_each_valid_input_reads_so_the_spoiling_is_what_fails(reader, tmp_path):
    reader.setup(tmp_path)
    path = write(tmp_path, reader.file_name, reader.valid)
    assert reader.read(path)


@pytest.mark.parametrize(("reader", "case"), list(parameters()))
def test_bad_input_exits_2_naming_file_and_line_before_any_run_record(reader, case, tmp_path):
    reader.setup(tmp_path)
    content, expected = spoiled(reader, case)
    path = tmp_path / reader.file_name
    if content is None:
        path.unlink(missing_ok=True)
        path.mkdir(parents=True)
    else:
        write(tmp_path, reader.file_name, content)
    result = runner.invoke(app, reader.command(tmp_path, path))
    output = " ".join(result.output.split())  # one line, whatever the terminal wrapped
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and isinstance(result.exception, SystemExit), repr(result.exception)
    assert f"{path}{expected}" in output or (expected in output and str(path) in output), output
    runs = tmp_path / "ws" / "runs"
    assert not runs.exists() or not list(runs.iterdir()), list(runs.iterdir())


def sparse_file(path: Path, size: int) -> None:
    """A file of ``size`` bytes that takes no space (its size is what the loader checks first)."""
    with path.open("wb") as handle:
        handle.truncate(size)


@dataclass
class BadInput:
    """A job's bad input that no reader's spoiling above makes: the command (given the folder), and
    what its message must name besides the file (given the folder)."""

    name: str
    command: Callable[[Path], list[str]]
    expected: Callable[[Path], str]
    setup: Callable[[Path], object] = lambda folder: None


POSTS_WITHOUT_ACCEPTED = POSTS.replace(b' AcceptedAnswerId="2"', b"").replace(b' AcceptedAnswerId="4"', b"")
TURNS_WITH_GHOST_GOLD = TURNS.replace(b'"gold_ids": ["d1"]}\n', b'"gold_ids": ["ghost-doc"]}\n', 1)

BAD_INPUTS = [
    BadInput(
        "ingest: a path that does not exist",
        lambda folder: ["ingest", str(folder / "no" / "such" / "path")],
        lambda folder: f"{folder / 'no' / 'such' / 'path'}: no such file or directory",
    ),
    BadInput(
        "ingest: an empty folder",
        lambda folder: ["ingest", str(folder / "empty")],
        lambda folder: f"empty corpus: no readable document in {folder / 'empty'}",
        setup=lambda folder: (folder / "empty").mkdir(),
    ),
    BadInput(
        "ingest: a folder of binary files only",
        lambda folder: ["ingest", str(folder / "binary")],
        lambda folder: "skipped 2 file(s): 2 binary file",
        setup=lambda folder: (write(folder, "binary/a.md", b"a\x00b"), write(folder, "binary/b.txt", b"\x00")),
    ),
    BadInput(
        "ingest: a corpus line that is an array",
        lambda folder: ["ingest", str(folder / "corpus.jsonl")],
        lambda folder: f"{folder / 'corpus.jsonl'}:2: expected a JSON object, got an array",
        setup=lambda folder: write(folder, "corpus.jsonl", CORPUS[: CORPUS.index(b"\n") + 1] + b'["d2", "text"]\n'),
    ),
    BadInput(
        "ingest: a corpus text that is an object",
        lambda folder: ["ingest", str(folder / "corpus.jsonl")],
        lambda folder: f"{folder / 'corpus.jsonl'}:1: 'text' of document 'd1' is an object, expected a string",
        setup=lambda folder: write(folder, "corpus.jsonl", lines({"_id": "d1", "text": {"en": "a fox"}})),
    ),
    BadInput(
        "ingest: a file over the limit of one document",
        lambda folder: ["ingest", str(folder / "dump.txt")],
        lambda folder: f"1 larger than 16 MiB, the limit of one document (split it) ({folder / 'dump.txt'})",
        setup=lambda folder: sparse_file(folder / "dump.txt", MAX_DOCUMENT_BYTES + 1),
    ),
    BadInput(
        "ingest: a corpus line over the limit of one document",
        lambda folder: ["ingest", str(folder / "c.jsonl")],
        lambda folder: f"{folder / 'c.jsonl'}:2: a line longer than 16 MiB",
        setup=lambda folder: write(
            folder,
            "c.jsonl",
            CORPUS[: CORPUS.index(b"\n") + 1] + b'{"_id": "big", "text": "' + b"a" * MAX_DOCUMENT_BYTES + b'"}\n',
        ),
    ),
    BadInput(
        "nuggets: a Posts.xml without accepted answers",
        lambda folder: ["nuggets", str(folder / "Posts.xml"), "--corpus", str(folder / "docs")],
        lambda folder: f"{folder / 'Posts.xml'}: no question with an accepted answer",
        setup=lambda folder: (
            write(folder, "Posts.xml", POSTS_WITHOUT_ACCEPTED),
            write(folder, "docs/notes.md", b"# Notes\n\nUse sorted() to sort a list.\n"),
        ),
    ),
    BadInput(
        "audit: gold that the corpus lacks",
        lambda folder: ["audit", str(folder / "turns.jsonl"), "--corpus", str(folder / "bench" / "corpus.jsonl")],
        lambda folder: "gold document ids not in the corpus",
        setup=lambda folder: (beir_directory(folder), write(folder, "turns.jsonl", TURNS_WITH_GHOST_GOLD)),
    ),
    BadInput(
        "synthesize: a collection that was never ingested",
        lambda folder: ["synthesize", "--collection", "never-ingested"],
        lambda folder: "never-ingested",
    ),
    BadInput(
        "robustness: a paraphrase run that does not exist",
        lambda folder: ["robustness", "no-such-run"],
        lambda folder: "no-such-run",
    ),
    BadInput(
        "replay: an assistant that does not import",
        lambda folder: ["replay", str(folder / "bench"), "--assistant", "py:no_such_module_here:chat"],
        lambda folder: "cannot import 'no_such_module_here'",
        setup=beir_directory,
    ),
    BadInput(
        "replay: a benchmark that does not exist",
        lambda folder: ["replay", str(folder / "nowhere"), "--assistant", "http://127.0.0.1:9/v1/chat/completions"],
        lambda folder: "nowhere",
    ),
    BadInput(
        "hardneg build: sources without documents",
        lambda folder: ["hardneg", "build", str(folder / "sources")],
        lambda folder: str(folder / "sources"),
        setup=lambda folder: write(folder, "sources/empty.md", b""),
    ),
]


@pytest.mark.parametrize("bad", BAD_INPUTS, ids=[bad.name for bad in BAD_INPUTS])
def test_bad_input_of_each_job_exits_2_before_any_run_record_and_frees_its_run_id(bad, tmp_path):
    bad.setup(tmp_path)
    result = runner.invoke(app, [*bad.command(tmp_path), *workspace(tmp_path), "--run-id", "bad-input"])
    output = " ".join(result.output.split())
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and isinstance(result.exception, SystemExit), repr(result.exception)
    assert bad.expected(tmp_path) in output, output
    runs = tmp_path / "ws" / "runs"
    assert not runs.exists() or not list(runs.iterdir()), list(runs.iterdir())


# The command of each job (the job names of run records; benchsmith/cli/runs.py lists them).
JOB_COMMANDS = {job: job for job in ITEMS_OF_JOB} | {"hardneg": "hardneg build", "hardneg-score": "hardneg score"}


def test_every_job_meets_bad_input_in_these_tables():
    commands = {" ".join(reader.command(Path("f"), Path("f/x"))[:2]) for reader in READERS} | {
        " ".join(bad.command(Path("f"))[:2]) for bad in BAD_INPUTS
    }
    untested = [
        job
        for job, command in JOB_COMMANDS.items()
        if not any(tested == command or tested.split()[0] == command for tested in commands)
    ]
    assert not untested, untested


def test_the_corrected_ingest_takes_the_run_id_its_bad_input_left_free(tmp_path):
    bad = write(tmp_path, "corpus.jsonl", CORPUS + lines({"_id": "d4", "title": "no text"}))
    command = [
        "ingest",
        str(bad),
        "--embedder",
        "test-hashing-64",
        "--min-chars",
        "5",
        "--min-quality",
        "0",
        *workspace(tmp_path),
        "--run-id",
        "mine",
    ]
    assert runner.invoke(app, command).exit_code == 2
    write(tmp_path, "corpus.jsonl", CORPUS)
    result = runner.invoke(app, command)
    assert result.exit_code == 0, result.output
    assert "3 chunks indexed" in " ".join(result.output.split()), result.output


# The readers of stores/ that the table above does not spoil, each with why (and where it is tested).
READERS_NOT_IN_THE_TABLE = {
    "read_jsonl": "the JSONL reader under every JSONL reader above; its own cases are tested below",
    "read_json": "the JSON reader under every JSON reader above; its own cases are tested below",
    "read_json_object": "read_json held to a JSON object (a run's report); its own case is tested below",
    "read_beir_qrels": "reached through read_qrels, the table's BEIR qrels reader (one TSV path)",
    "read_trec_qrels": "reached through read_qrels, the table's TREC qrels reader",
    "read_ladder_scores": "one CSV reader with read_task1_scores (stores/formats/multiconir._read_csv)",
    "read_turn_labels": "turn_labels.tsv beside a BEIR export; tests/test_dialogue_labels.py names file and line",
    "read_mtrag": "a layout of folders and JSON; tests/test_mtrag_layout.py names the conversation and message",
    "read_dialogues": "our own synthesis run's file (publish reads it), not a user's",
    "read_held_out": "our own synthesis run's file, not a user's",
    "read_clustering": "the workspace's own cache, not a user's file",
    "read_pools": "a labelling run's own pools.jsonl, not a user's file",
    "read_nugget_texts": "a nuggets run's nuggets.jsonl beside its BEIR folder (replay reads it); "
    "tests/test_replay_nuggets.py stops on a malformed one",
}


def test_every_reader_of_user_files_is_in_the_table_or_says_why_not():
    import ast

    stores = Path(__file__).parent.parent / "stores"
    readers = {
        node.name
        for path in stores.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef) and node.col_offset == 0 and node.name.startswith("read_")
    }
    in_table = {getattr(reader.read, "__name__", "") for reader in READERS}
    assert not readers - in_table - set(READERS_NOT_IN_THE_TABLE), readers - in_table - set(READERS_NOT_IN_THE_TABLE)
    assert not set(READERS_NOT_IN_THE_TABLE) - readers  # no stale entry


def test_every_case_is_covered_or_says_why_not():
    for reader in READERS:
        for case in ("extra field", "missing field", "duplicate id"):
            assert (case in reader.spoiled) != (case in reader.not_applicable), (reader.name, case)


# ---------------------------------------------------------------------------------------
# Readers no command takes yet, and the helpers every reader shares.


@pytest.mark.parametrize(
    ("case", "content", "expected"),
    [
        ("non-utf8", LABELLED[:-20] + b"\xe9" + LABELLED[-20:], ":2: not valid UTF-8"),
        ("truncated", LABELLED[:-30], ":2: malformed JSON"),
        ("missing field", LABELLED + lines({"id": "l3", "gold": []}), ":3"),
        (
            "duplicate id",
            LABELLED
            + lines({"id": "l1", "question": "other", "gold": [{"chunk_id": "c", "document": "d", "evidence": "e"}]}),
            ":3: question 'l1' repeats line 1",
        ),
        ("empty", b"", ": no questions"),
    ],
)
def test_labelled_questions_name_file_and_line(case, content, expected, tmp_path):
    path = write(tmp_path, "labelled.jsonl", content)
    with pytest.raises(InputError) as raised:
        read_labelled_questions(path)
    assert f"{path}{expected}" in str(raised.value)


def test_a_directory_is_named_as_one_by_every_kind_of_reader(tmp_path):
    folder = tmp_path / "folder.jsonl"
    folder.mkdir()
    for read in (
        lambda: list(read_jsonl(folder)),
        lambda: read_json(folder),
        lambda: read_space_file(folder),
        lambda: read_user_queries(folder),
        lambda: read_posts_xml(folder),
        lambda: read_trec_run(folder),
    ):
        with pytest.raises(InputError, match="is a directory"):
            read()


def test_jsonl_bad_bytes_name_their_line_and_column_not_a_byte_offset(tmp_path):
    path = write(tmp_path, "x.jsonl", lines({"a": 1}, {"a": 2}) + b'{"a": "caf\xe9"}\n')
    with pytest.raises(InputError) as raised:
        list(read_jsonl(path))
    assert str(raised.value).startswith(f"{path}:3: not valid UTF-8 (byte 0xe9 at column 11)")


def test_read_json_names_the_line_of_bad_bytes_and_of_bad_syntax(tmp_path):
    path = write(tmp_path, "x.json", b'{\n "a": 1,\n "b": "\xff"\n}\n')
    with pytest.raises(InputError, match=f"^{path}:3: not valid UTF-8"):
        read_json(path)
    write(tmp_path, "x.json", b'{\n "a": 1,\n "b": \n}\n')
    with pytest.raises(InputError, match=f"^{path}:4: malformed JSON"):
        read_json(path)
    write(tmp_path, "x.json", b'\xef\xbb\xbf{"a": [1]}')  # a byte order mark is not an error
    assert read_json(path) == {"a": [1]}


def test_space_file_bad_bytes_and_emptiness_are_named(tmp_path):
    path = write(tmp_path, "space.yaml", b"retriever: [bm25]\ntop_k: [5]\nsearch: caf\xe9\n")
    with pytest.raises(InputError, match=f"^{path}:3: not valid UTF-8"):
        read_space_file(path)
    write(tmp_path, "space.yaml", b"\n")
    with pytest.raises(InputError, match=f"^{path}: empty"):
        read_space_file(path)


def test_a_workspace_that_is_a_file_exits_2_without_a_resume_hint(tmp_path):
    beir_directory(tmp_path)
    (tmp_path / "ws").write_text("not a folder", encoding="utf-8")
    result = runner.invoke(
        app,
        ["evaluate", str(tmp_path / "bench"), "--retriever", "bm25", "--history", "full", "-w", str(tmp_path / "ws")],
    )
    assert result.exit_code == 2, result.output
    assert "is a file, not a folder" in result.output and "Resume with" not in result.output


def test_read_json_object_refuses_a_file_that_holds_another_json_value(tmp_path):
    path = tmp_path / "results.json"
    path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(InputError, match=r"results\.json: expected a JSON object, found list"):
        read_json_object(path)
    path.write_text('{"a": 1}', encoding="utf-8")
    assert read_json_object(path) == {"a": 1}
