"""CAsT and ECAsT files in, joins and counts, BLEU as sacrebleu computes it, the variant
filters and the seeded test sets: on small files written here."""

import csv
import json

import pytest
import sacrebleu

from benchsmith.evals.measures.diversity import corpus_bleu, diversity
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.cast import load_cast
from benchsmith.stores.formats.conversational import load_conversational
from benchsmith.stores.formats.ecast import read_ecast
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.benchmark.paraphrase_filters import FilterSettings, filter_variants, similarities_to_source
from benchsmith.tools.benchmark.test_sets import draw_test_sets
from tests.embedders import HashingEmbedder
from tests.paraphrase_fixtures import ECAST_ROWS, RESOLVED_2019, write_cast_files


@pytest.fixture
def files(tmp_path):
    return write_cast_files(tmp_path / "cast")


def test_cast_years_make_one_benchmark_with_topic_turn_ids_histories_and_rewrites(files):
    benchmark = load_cast([files["2019"], files["resolved"], files["2020"]])
    assert [query.id for query in benchmark.queries] == ["31_1", "31_2", "31_3", "32_1", "32_2", "81_1", "81_2"]
    by_id = benchmark.queries_by_id
    assert {turn: by_id[turn].rewrite for turn in RESOLVED_2019} == RESOLVED_2019
    assert by_id["81_2"].rewrite == "Why did my garage door opener stop working?"
    assert by_id["31_3"].history == [("What is throat cancer?", ""), ("Is it treatable?", "")]
    assert by_id["32_1"].history == [] and by_id["81_2"].conversation_id == "81"


def test_2019_topics_without_their_resolved_file_have_no_rewrites(files):
    benchmark = load_cast([files["2019"]])
    assert benchmark.queries
    assert all(query.rewrite is None for query in benchmark.queries)


def test_malformed_cast_and_ecast_input_names_file_and_line(files, tmp_path):
    files["resolved"].write_text("31_1\tWhat is throat cancer?\n31_2 no tab here\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"resolved\.tsv:2: expected"):
        load_cast([files["2019"], files["resolved"]])
    files["resolved"].write_text("31_1\tWhat is throat cancer?\n77_1\tan unknown turn\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"resolved\.tsv:2: turn '77_1' is in no topic file"):
        load_cast([files["2019"], files["resolved"]])
    broken = tmp_path / "broken.json"
    broken.write_text('[{"number": 5, "turn": [{"number": 1}]}]', encoding="utf-8")
    with pytest.raises(InputError, match=r"broken\.json: topic 5 turn 1: missing 'raw_utterance'"):
        load_cast([broken])
    csv_file = tmp_path / "bad.csv"
    csv_file.write_text("TURN_ID,MANUAL PARAPHRASE,RAW PARAPHRASE\n31_2,a,b\n31_2,only two\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad\.csv:3: expected 3 comma-separated fields"):
        read_ecast(csv_file)
    with pytest.raises(InputError, match="CAsT topic files make a benchmark on their own"):
        load_conversational([str(files["2019"]), str(tmp_path)], Workspace.resolve(tmp_path / "ws"))


def test_ecast_rows_join_by_turn_id_and_rows_of_other_turns_are_counted(files):
    rows = read_ecast(files["ecast"]).rows
    assert [(row.turn_id, row.self_contained, row.raw) for row in rows] == ECAST_ROWS
    assert [row.line for row in rows] == [2, 3, 4, 5, 6]
    benchmark = load_cast([files["2019"], files["resolved"], files["2020"]])
    turns = _turns(benchmark)
    joined = [_variant(row) for row in rows if row.turn_id in turns]
    figures = diversity(turns, joined, unjoined=sum(1 for row in rows if row.turn_id not in turns))
    assert (figures["turns"], figures["paraphrases"], figures["turns_with_paraphrases"], figures["unjoined"]) == (
        7,
        3,
        2,
        2,
    )
    # The 2020 file alone: the 2019 rows no longer join.
    alone = _turns(load_cast([files["2020"]]))
    assert diversity(alone, [_variant(r) for r in rows if r.turn_id in alone], unjoined=4)["paraphrases"] == 1


def test_bleu_figures_equal_sacrebleu_called_directly(files):
    benchmark = load_cast([files["2019"], files["resolved"], files["2020"]])
    turns = _turns(benchmark)
    variants = [_variant(row) for row in read_ecast(files["ecast"]).rows if row.turn_id in turns]
    figures = diversity(turns, variants, unjoined=0)
    assert (
        figures["bleu_self_contained"]
        == sacrebleu.corpus_bleu(
            [v["self_contained"] for v in variants], [[turns[v["turn"]]["self_contained"] for v in variants]]
        ).score
    )
    assert (
        figures["bleu_raw"]
        == sacrebleu.corpus_bleu([v["raw"] for v in variants], [[turns[v["turn"]]["raw"] for v in variants]]).score
    )
    rewritten = [query for query in benchmark.queries if query.rewrite]
    assert (
        figures["bleu_rewrite_vs_raw"]
        == sacrebleu.corpus_bleu([q.rewrite for q in rewritten], [[q.question for q in rewritten]]).score
    )
    assert 0 < figures["bleu_self_contained"] < 100
    assert corpus_bleu(["a b c d e"], ["a b c d e"]) == pytest.approx(100.0)
    assert set(figures) == {
        "turns",
        "paraphrases",
        "turns_with_paraphrases",
        "unjoined",
        "bleu_self_contained",
        "bleu_raw",
        "bleu_rewrite_vs_raw",
    }


def test_filters_drop_a_planted_near_duplicate_and_a_planted_meaning_change():
    source = "What are the early symptoms of throat cancer?"
    variants = [
        "What are the early symptoms of throat cancer ?",  # near-duplicate of the source
        "Which early symptoms does throat cancer have?",
        "Which early symptoms does throat cancer have ?",  # near-duplicate of the one before
        "Where can I buy cheap concert tickets tonight?",
    ]  # meaning change
    settings = FilterSettings("bleu", max_sentence_score=80, min_similarity=0.3)
    decisions = filter_variants(source, variants, settings, similarities_to_source(HashingEmbedder(), source, variants))
    assert [decision.kept for decision in decisions] == [False, True, False, False]
    assert "near-duplicate of the source" in decisions[0].reason
    assert "near-duplicate of another variant" in decisions[2].reason
    assert "meaning changed" in decisions[3].reason and decisions[3].similarity < 0.3 < decisions[1].similarity
    chrf = filter_variants(source, variants[:2], FilterSettings("chrf", max_sentence_score=90, min_similarity=0))
    assert [decision.kept for decision in chrf] == [False, True] and chrf[1].similarity is None


def test_test_sets_are_seeded_reproducible_and_vary_each_turn_where_they_can():
    turns = ["1_1", "1_2", "1_3"]
    variants = {"1_1": ["1_1:e1", "1_1:e2", "1_1:e3"], "1_2": ["1_2:e1"]}
    first = draw_test_sets(turns, variants, 3, seed=7)
    assert first == draw_test_sets(turns, variants, 3, seed=7)
    assert list(first) == ["R1", "R2", "R3"]
    assert sorted(first[name]["1_1"] for name in first) == variants["1_1"]  # each test set its own variant
    assert all(first[name]["1_2"] == "1_2:e1" and first[name]["1_3"] is None for name in first)
    seeds = {tuple(draw_test_sets(turns, variants, 1, seed=seed)["R1"].values()) for seed in range(20)}
    assert len(seeds) > 1  # the seed decides


def _turns(benchmark) -> dict[str, dict]:
    return {
        query.id: {"raw": query.question, "rewrite": query.rewrite, "self_contained": query.rewrite}
        for query in benchmark.queries
    }


def _variant(row) -> dict:
    return {"turn": row.turn_id, "self_contained": row.self_contained, "raw": row.raw}


def test_turn_jsonl_without_a_corpus_loads_for_paraphrasing(tmp_path):
    path = tmp_path / "turns.jsonl"
    path.write_text(
        json.dumps({"id": "c1_t0", "conversation_id": "c1", "turn": 0, "question": "What is BM25?", "gold_ids": ["d1"]})
        + "\n",
        encoding="utf-8",
    )
    benchmark = load_conversational([str(path)], Workspace.resolve(tmp_path / "ws"))
    assert [query.id for query in benchmark.queries] == ["c1_t0"] and benchmark.qrels == {"c1_t0": {"d1": 1}}


def test_ecast_verbatim_repeats_are_read_once_and_reported_near_repeats_stay_variants(files, tmp_path):
    """As the published ECAsT.csv: a row repeated verbatim (turn 5_1 on lines 329 and 331) is one
    variant, reported with its lines; rows sharing one form and differing in the other are two."""
    from typer.testing import CliRunner

    from benchsmith.cli import app

    rows = [
        *ECAST_ROWS,
        ECAST_ROWS[0],  # line 7 repeats line 2
        ("31_2", "Can throat cancer be treated?", "Can that be treated?"),  # line 8: same self-contained form
        ECAST_ROWS[2],  # line 9 repeats line 4
        ECAST_ROWS[0],
    ]  # line 10 repeats line 2 again
    with files["ecast"].open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\r\n")
        writer.writerow(["TURN_ID", "MANUAL PARAPHRASE", "RAW PARAPHRASE"])
        writer.writerows(rows)
    read = read_ecast(files["ecast"])
    assert [row.line for row in read.rows] == [2, 3, 4, 5, 6, 8]
    assert [(repeat.line, repeat.first_line, repeat.turn_id) for repeat in read.repeats] == [
        (7, 2, "31_2"),
        (9, 4, "81_2"),
        (10, 2, "31_2"),
    ]
    assert read.repeats_summary() == (
        f"{files['ecast']}: 3 row(s) repeat an earlier row verbatim and were read once: "
        "line(s) 7 (= 2), 9 (= 4), 10 (= 2)"
    )

    result = CliRunner(env={"COLUMNS": "400"}).invoke(
        app,
        [
            "paraphrase",
            str(files["2019"]),
            str(files["resolved"]),
            str(files["2020"]),
            "--import-ecast",
            str(files["ecast"]),
            "--test-sets",
            "1",
            "-w",
            str(tmp_path / "ws"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "3 row(s) repeat an earlier row verbatim" in result.output and "7 (= 2)" in result.output
    imported = [
        json.loads(line)
        for line in next((tmp_path / "ws" / "runs").iterdir()).joinpath("imported.jsonl").read_text().splitlines()
    ]
    assert [(row["turn"], row["line"]) for row in imported] == [("31_2", 2), ("31_2", 3), ("81_2", 4), ("31_2", 8)]


def test_ecast_file_of_only_a_header_or_bad_rows_still_stops_naming_the_line(tmp_path):
    csv_file = tmp_path / "ECAsT.csv"
    csv_file.write_text("TURN_ID,MANUAL PARAPHRASE,RAW PARAPHRASE\n1_1,a,a\n1_1,a,a\n1_2,,b\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"ECAsT\.csv:4: empty RAW PARAPHRASE|ECAsT\.csv:4: empty MANUAL PARAPHRASE"):
        read_ecast(csv_file)
    csv_file.write_text("TURN_ID,MANUAL PARAPHRASE,RAW PARAPHRASE\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"ECAsT\.csv: no paraphrases"):
        read_ecast(csv_file)
