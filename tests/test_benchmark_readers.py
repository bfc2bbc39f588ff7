"""Reading benchmarks: TREC run and qrels files, BEIR directories and synthesis runs.

Every malformed input must stop with an InputError that names the file and line, and a
conversational benchmark must rebuild each turn's history from its earlier turns.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.beir import load_benchmark, read_qrels
from benchsmith.stores.formats.trec import (
    iter_aligned_batches,
    iter_run_batches,
    iter_trec_run,
    read_trec_qrels,
    read_trec_run,
    trec_run_writer,
    write_sorted_copy,
    write_trec_run,
)
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.workspace import Workspace

# --- TREC --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "lines, message",
    [
        (["q1 Q0 d1 1 2.5 tag", "q1 Q0 d2 2 1.5"], "run.txt:2: a TREC run line has 6 fields"),
        (["q1 Q0 d1 1 2.5 tag", "", "q1 Q0 d2 2 high tag"], "run.txt:3: score 'high' is not a number"),
        (["q1 Q0 d1 1 2.5 tag extra"], "run.txt:1: .* found 7"),
    ],
)
def test_malformed_run_line_is_named(tmp_path, lines, message):
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=message):
        read_trec_run(path)


@pytest.mark.parametrize(
    "lines, message",
    [
        (["q1 0 d1 1", "q1 0 d2"], "qrels.txt:2: a TREC qrels line has 4 fields"),
        (["q1 0 d1 1", "q1 0 d2 0", "q2 0 d3 yes"], "qrels.txt:3: relevance 'yes' is not an integer"),
    ],
)
def test_malformed_qrels_line_is_named(tmp_path, lines, message):
    path = tmp_path / "qrels.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=message):
        read_trec_qrels(path)


def test_trec_readers_accept_blank_lines_and_name_missing_files(tmp_path):
    (tmp_path / "qrels.txt").write_text("q1 0 d1 2\n\nq1 0 d2 0\nq2 Q1 d1 -1\n", encoding="utf-8")
    assert read_trec_qrels(tmp_path / "qrels.txt") == {"q1": {"d1": 2, "d2": 0}, "q2": {"d1": -1}}
    with pytest.raises(InputError, match=re.escape(f"{tmp_path / 'none.txt'}: file not found")):
        read_trec_run(tmp_path / "none.txt")


def test_write_trec_run_ranks_by_score_with_ties_by_doc_id(tmp_path):
    run = {"q2": {"b": 1.0, "c": 3.5, "a": 1.0, "d": -2.0}, "q1": {"x": 0.25}}
    write_trec_run(tmp_path / "out" / "run.txt", run, tag="my system")
    assert (tmp_path / "out" / "run.txt").read_text(encoding="utf-8") == (
        "q1 Q0 x 1 0.25 my_system\n"
        "q2 Q0 c 1 3.5 my_system\n"
        "q2 Q0 a 2 1.0 my_system\n"  # a and b tie at 1.0: a first
        "q2 Q0 b 3 1.0 my_system\n"
        "q2 Q0 d 4 -2.0 my_system\n"
    )
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["run.txt"]  # no .tmp left behind
    assert read_trec_run(tmp_path / "out" / "run.txt") == run


def test_write_trec_run_keeps_the_old_file_when_writing_fails(tmp_path):
    path = tmp_path / "run.txt"
    write_trec_run(path, {"q": {"a": 1.0}}, tag="t")
    before = path.read_text(encoding="utf-8")
    with pytest.raises(TypeError):
        write_trec_run(path, {"q": {"a": 2.0}, "r": {"b": None}}, tag="t")  # type: ignore[dict-item]
    assert path.read_text(encoding="utf-8") == before


def test_write_trec_run_keeps_close_scores_apart(tmp_path):
    run = {"q": {"a": 0.81234561, "b": 0.81234559}}  # a above b; both print as 0.812346
    write_trec_run(tmp_path / "run.txt", run, tag="t")
    read = read_trec_run(tmp_path / "run.txt")["q"]
    assert read["a"] > read["b"]


# --- Streaming run files ------------------------------------------------------------------------


def test_run_writer_appends_batches_in_query_order_and_refuses_others(tmp_path):
    path = tmp_path / "run.trec"
    with trec_run_writer(path, "t") as write:
        write({"q2": {"b": 1.0, "a": 2.0}, "q1": {"x": 0.5}})
        write({"q3": {"c": 1.0}})
    assert read_trec_run(path) == {"q1": {"x": 0.5}, "q2": {"a": 2.0, "b": 1.0}, "q3": {"c": 1.0}}
    assert [query for query, _ in iter_trec_run(path)] == ["q1", "q2", "q3"]
    with (
        pytest.raises(ValueError, match="'q2' written after 'q3'"),
        trec_run_writer(tmp_path / "bad.trec", "t") as write,
    ):
        write({"q3": {"c": 1.0}})
        write({"q2": {"b": 1.0}})
    assert not (tmp_path / "bad.trec").exists()


def test_a_run_file_exists_only_once_complete(tmp_path):
    path = tmp_path / "run.trec"
    with pytest.raises(RuntimeError), trec_run_writer(path, "t") as write:
        write({"q1": {"a": 1.0}})
        raise RuntimeError("killed between two batches")
    assert not path.exists() and not list(tmp_path.iterdir())
    # A writer killed with SIGKILL leaves its temporary file (named for that writer alone, so that
    # writers of one path never rename each other's away): never read as the run, no obstacle to the next.
    leftover = tmp_path / "run.trec.k1ll3d.tmp"
    leftover.write_text("q1 Q0 a 1 1.0 t\n", encoding="utf-8")
    assert not path.exists()
    write_trec_run(path, {"q9": {"z": 1.0}}, "t")
    assert read_trec_run(path) == {"q9": {"z": 1.0}}
    assert sorted(item.name for item in tmp_path.iterdir()) == ["run.trec", leftover.name]


def test_batches_and_aligned_batches_follow_query_order(tmp_path):
    write_trec_run(tmp_path / "a.trec", {"q1": {"a": 1.0}, "q2": {"b": 1.0}, "q4": {"d": 1.0}}, "a")
    write_trec_run(tmp_path / "b.trec", {"q2": {"x": 2.0}, "q3": {"y": 2.0}, "q4": {"z": 2.0, "d": 1.0}}, "b")
    assert [list(batch) for batch in iter_run_batches(tmp_path / "a.trec", 2)] == [["q1", "q2"], ["q4"]]
    aligned = list(iter_aligned_batches([tmp_path / "a.trec", tmp_path / "b.trec"], 2))
    assert aligned == [
        [{"q1": {"a": 1.0}, "q2": {"b": 1.0}}, {"q2": {"x": 2.0}}],
        [{"q4": {"d": 1.0}}, {"q3": {"y": 2.0}, "q4": {"z": 2.0, "d": 1.0}}],
    ]


def test_streaming_refuses_a_file_out_of_query_order_naming_the_line(tmp_path):
    path = tmp_path / "mine.trec"
    path.write_text("q2 Q0 a 1 2.0 t\nq1 Q0 b 1 1.0 t\n", encoding="utf-8")
    with pytest.raises(InputError, match=re.escape(f"{path}:2: query 'q1' comes after 'q2'")):
        list(iter_trec_run(path))


def test_sorted_copy_of_a_run_file_in_any_order(tmp_path):
    source = tmp_path / "mine.trec"
    source.write_text(
        "10 Q0 a 1 0.5 sys\n"  # numeric query ids, in numeric order: 10 before 9 as text
        "9 Q0 b 1 3.0 sys\n"
        "10 Q0 c 2 0.9 sys\n"  # q10 again after q9, out of score order
        "\n"
        "9 Q0 d 2 3.0 sys\n",
        encoding="utf-8",
    )  # ties with b: b first
    summary = write_sorted_copy(source, tmp_path / "copy.trec", tag="mine")
    assert (tmp_path / "copy.trec").read_text(encoding="utf-8") == (
        "10 Q0 c 1 0.9 mine\n10 Q0 a 2 0.5 mine\n9 Q0 b 1 3.0 mine\n9 Q0 d 2 3.0 mine\n"
    )
    assert (summary.queries, summary.lines) == (["10", "9"], 4)
    assert read_trec_run(tmp_path / "copy.trec") == read_trec_run(source)
    # A document ranked twice for one query, even lines apart, is refused: which score is meant?
    (tmp_path / "twice.trec").write_text(source.read_text(encoding="utf-8") + "10 Q0 a 3 0.1 sys\n", encoding="utf-8")
    with pytest.raises(InputError, match=re.escape(f"{tmp_path / 'twice.trec'}: query '10' ranks document 'a' twice")):
        write_sorted_copy(tmp_path / "twice.trec", tmp_path / "twice-copy.trec", tag="t")
    assert not (tmp_path / "twice-copy.trec").exists()
    (tmp_path / "bad.trec").write_text("q1 Q0 a 1 1.0 t\nq1 Q0 b 2 high t\n", encoding="utf-8")
    with pytest.raises(InputError, match=re.escape(f"{tmp_path / 'bad.trec'}:2: score 'high'")):
        write_sorted_copy(tmp_path / "bad.trec", tmp_path / "bad-copy.trec", tag="t")
    assert not (tmp_path / "bad-copy.trec").exists()


@pytest.mark.parametrize(
    "text",
    [
        "q1 0 d1 2\nq1 0 d2 0\nq2 0 d1 1\n",  # TREC
        "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\t0\nq2\td1\t1\n",  # BEIR with its header
        "q1\td1\t2\nq1\td2\t0\nq2\td1\t1\n",  # BEIR without one
        "\nq1 d1 2\nq1 d2 0\nq2 d1 1\n",  # three fields separated by spaces
    ],
)
def test_read_qrels_tells_trec_from_beir(tmp_path, text):
    (tmp_path / "qrels").write_text(text, encoding="utf-8")
    assert read_qrels(tmp_path / "qrels") == {"q1": {"d1": 2, "d2": 0}, "q2": {"d1": 1}}


def test_read_qrels_names_what_it_cannot_read(tmp_path):
    (tmp_path / "q.txt").write_text("q1 d1\n", encoding="utf-8")
    with pytest.raises(InputError, match=re.escape(f"{tmp_path / 'q.txt'}:1: not a qrels line")):
        read_qrels(tmp_path / "q.txt")
    (tmp_path / "q.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\tyes\n", encoding="utf-8")
    with pytest.raises(InputError, match=re.escape(f"{tmp_path / 'q.tsv'}:2: score 'yes' is not a number")):
        read_qrels(tmp_path / "q.tsv")
    with pytest.raises(InputError, match="file not found"):
        read_qrels(tmp_path / "none.tsv")


# --- BEIR --------------------------------------------------------------------------------------


def write_beir(
    directory: Path,
    queries: list[dict],
    qrels: str = "query-id\tcorpus-id\tscore\nq1\td1\t1\n",
    split: str = "test",
    corpus: list[dict] | None = None,
) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    corpus = corpus or [{"_id": "d1", "title": "T", "text": "one"}, {"_id": "d2", "title": "", "text": "two"}]
    (directory / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in corpus), encoding="utf-8")
    (directory / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries), encoding="utf-8")
    (directory / "qrels").mkdir(exist_ok=True)
    (directory / "qrels" / f"{split}.tsv").write_text(qrels, encoding="utf-8")
    return directory


@pytest.fixture
def workspace(tmp_path, monkeypatch) -> Workspace:
    monkeypatch.chdir(tmp_path)  # a run id must not resolve against the repository
    return Workspace.resolve(tmp_path / "ws")


def conversation_queries() -> list[dict]:
    def turn(conversation: str, number: int, switch: str) -> dict:
        return {
            "_id": f"{conversation}_t{number}",
            "text": f"serialized {conversation} {number}",
            "metadata": {
                "conversation_id": conversation,
                "turn": number,
                "switch": switch,
                "question": f"{conversation} question {number}",
                "rewrite": f"{conversation} rewrite {number}",
                "response": f"{conversation} answer {number}",
            },
        }

    # out of order: turn 3 before turns 1 and 2, conversations interleaved
    return [
        turn("c1", 3, "hard"),
        turn("c2", 1, "start"),
        turn("c1", 1, "start"),
        turn("c2", 2, "follow-up"),
        turn("c1", 2, "soft"),
    ]


def test_single_turn_beir_query(tmp_path, workspace):
    directory = write_beir(
        tmp_path / "scifact",
        [{"_id": 1, "text": "what is bm25"}],
        qrels="query-id\tcorpus-id\tscore\n1\td1\t2\n1\td2\t0\n",
    )
    benchmark = load_benchmark(directory, workspace)
    (query,) = benchmark.queries
    assert (query.id, query.text, query.question, query.history) == ("1", "what is bm25", "what is bm25", [])
    assert not query.conversational and not benchmark.conversational
    assert benchmark.qrels == {"1": {"d1": 2, "d2": 0}}
    assert (benchmark.name, benchmark.directory, benchmark.source_collection) == ("scifact", directory, None)
    assert benchmark.corpus_fingerprint() == hashlib.sha256((directory / "corpus.jsonl").read_bytes()).hexdigest()[:12]


def test_conversation_histories_are_rebuilt_in_turn_order(tmp_path, workspace):
    benchmark = load_benchmark(write_beir(tmp_path / "b", conversation_queries()), workspace)
    queries = {query.id: query for query in benchmark.queries}
    assert [query.id for query in benchmark.queries] == ["c1_t3", "c2_t1", "c1_t1", "c2_t2", "c1_t2"]  # file order
    assert benchmark.conversational
    assert queries["c1_t1"].history == []
    assert queries["c1_t2"].history == [("c1 question 1", "c1 answer 1")]
    assert queries["c1_t3"].history == [("c1 question 1", "c1 answer 1"), ("c1 question 2", "c1 answer 2")]
    assert queries["c2_t2"].history == [("c2 question 1", "c2 answer 1")]  # no turn of c1 leaks in
    third = queries["c1_t3"]
    assert (
        third.text,
        third.question,
        third.rewrite,
        third.conversation_id,
        third.turn,
        third.switch,
        third.response,
    ) == ("serialized c1 3", "c1 question 3", "c1 rewrite 3", "c1", 3, "hard", "c1 answer 3")


def test_malformed_queries_line_is_named(tmp_path, workspace):
    directory = write_beir(tmp_path / "b", [{"_id": "q1", "text": "fine"}])
    with (directory / "queries.jsonl").open("a", encoding="utf-8") as handle:
        handle.write('{"_id": "q2", "text": \n')
    with pytest.raises(InputError, match=re.escape(f"{directory / 'queries.jsonl'}:2: malformed JSON")):
        load_benchmark(directory, workspace)


@pytest.mark.parametrize(
    "record, message",
    [
        ({"_id": "q2"}, "queries.jsonl:2: missing 'text' for query 'q2'"),
        ({"text": "no id"}, "queries.jsonl:2: missing '_id'"),
        (
            {"_id": "q2", "text": "x", "metadata": {"conversation_id": "c", "turn": "second"}},
            "queries.jsonl:2: conversational query 'q2' needs an integer metadata.turn",
        ),
    ],
)
def test_invalid_query_record_is_named(tmp_path, workspace, record, message):
    directory = write_beir(tmp_path / "b", [{"_id": "q1", "text": "fine"}, record])
    with pytest.raises(InputError, match=re.escape(message)):
        load_benchmark(directory, workspace)


@pytest.mark.parametrize(
    "qrels, message",
    [
        ("query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\n", "test.tsv:3: expected 3 tab-separated fields"),
        ("q1\td1\t1\nq1\td2\tmaybe\n", "test.tsv:2: score 'maybe' is not a number"),
        ("query-id\tcorpus-id\tscore\n", "test.tsv: no relevance judgments"),
    ],
)
def test_malformed_qrels_are_named(tmp_path, workspace, qrels, message):
    directory = write_beir(tmp_path / "b", [{"_id": "q1", "text": "x"}], qrels=qrels)
    with pytest.raises(InputError, match=re.escape(message)):
        load_benchmark(directory, workspace)


def test_missing_split_names_the_available_ones(tmp_path, workspace):
    directory = write_beir(tmp_path / "b", [{"_id": "q1", "text": "x"}])
    (directory / "qrels" / "train.tsv").write_text("q1\td2\t1\n", encoding="utf-8")
    with pytest.raises(InputError, match=re.escape("dev.tsv: qrels file not found (splits here: test, train)")):
        load_benchmark(directory, workspace, split="dev")
    assert load_benchmark(directory, workspace, split="train").qrels == {"q1": {"d2": 1}}


def test_missing_corpus_is_named(tmp_path, workspace):
    directory = write_beir(tmp_path / "b", [{"_id": "q1", "text": "x"}])
    (directory / "corpus.jsonl").unlink()
    with pytest.raises(InputError, match=r"no corpus.jsonl"):
        load_benchmark(directory, workspace)


def test_run_directory_uses_its_beir_export_and_collection(tmp_path, workspace):
    run = tmp_path / "synthesize-1"
    write_beir(run / "beir", conversation_queries())
    (run / "run.json").write_text(
        json.dumps({"run_id": "synthesize-1", "config": {"collection": "stdlib"}}), encoding="utf-8"
    )
    benchmark = load_benchmark(run, workspace)
    assert benchmark.source_collection == "stdlib"
    assert benchmark.directory == run / "beir"
    assert benchmark.corpus_path == run / "beir" / "corpus.jsonl"
    assert benchmark.name == "synthesize-1"
    assert len(benchmark.queries) == 5 and benchmark.conversational


def test_run_record_that_is_not_json_is_named(tmp_path, workspace):
    run = tmp_path / "broken"
    write_beir(run / "beir", [{"_id": "q1", "text": "x"}])
    (run / "run.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(InputError, match=r"run.json: not a benchsmith run record"):
        load_benchmark(run, workspace)


def test_run_id_in_the_workspace(workspace):
    run = RunDirectory(workspace, "synthesize-20260101-000000-abcd")
    run.start("synthesize", {"collection": "docs", "questions": 5})
    write_beir(run.path / "beir", conversation_queries())
    benchmark = load_benchmark("synthesize-20260101-000000-abcd", workspace)
    assert benchmark.directory == workspace.run_dir("synthesize-20260101-000000-abcd") / "beir"
    assert benchmark.source_collection == "docs"
    assert benchmark.name == "synthesize-20260101-000000-abcd"
    with pytest.raises(InputError, match="nothing-here: not a BEIR directory, a run directory or a run id in"):
        load_benchmark("nothing-here", workspace)


def test_missing_path_is_reported_as_not_a_benchmark(workspace):
    with pytest.raises(InputError, match="not a BEIR directory"):
        load_benchmark("data/beir/scifact", workspace)
