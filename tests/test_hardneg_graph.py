"""The hardneg build graph with scripted agents on a small corpus: documents differ from the
positive exactly in the intended sentences, verification rebuilds once and drops a planted
mismatch, non-verbatim conditions are rejected, and the exports hold what the rows hold."""

from __future__ import annotations

import csv
import json

import pytest

import benchsmith
from benchsmith.graphs.runtime.resources import register_model
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.multiconir import read_dataset
from benchsmith.stores.persistence.jsonl import load_jsonl
from tests.hardneg_fixtures import STATIONS, ScriptedHardnegAgents, write_corpus

N = 4


def build(tmp_path, agents: ScriptedHardnegAgents, run_id: str = "build", **options):
    corpus = write_corpus(tmp_path / "corpus")
    llm = register_model(f"scripted-{run_id}", agents.seam())
    return benchsmith.build_hardneg(
        [corpus], conditions=N, llm=llm, workspace=tmp_path / "ws", run_id=run_id, concurrency=2, **options
    )


def records_by_id(result) -> dict[str, dict]:
    return {record["id"]: record for record in load_jsonl(result.files["rows"])}


def read_csv(path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def replaced_of(key: str) -> set[int]:
    number = int(key.removeprefix("HN").removeprefix("Miss"))
    return set(range(1, number + 1)) if key.startswith("HN") else {number}


def test_every_hard_negative_differs_from_the_positive_exactly_in_the_intended_sentences(tmp_path):
    agents = ScriptedHardnegAgents(paraphrase_first="Carlow")
    result = build(tmp_path, agents)
    records = records_by_id(result)
    kept = [record for record in records.values() if record["status"] == "kept"]
    assert len(kept) == 6 and result.rows == 6
    for record in kept:
        positive = record["documents"]["Positive"]["text"]
        conditions = record["conditions"]
        assert len(record["documents"]) == 1 + 2 * N
        for key, document in record["documents"].items():
            if key == "Positive":
                continue
            text, replaced = document["text"], replaced_of(key)
            for number, condition in enumerate(conditions, start=1):
                if number in replaced:
                    assert condition["sentence"] not in text and text.count(condition["negative"]) == 1, (key, number)
                else:
                    assert condition["sentence"] in text, (key, number)
            restored = text
            for number in replaced:
                restored = restored.replace(conditions[number - 1]["negative"], conditions[number - 1]["sentence"])
            assert restored == positive, key  # nothing else changed, byte for byte
            assert document["verified"] and not document["rebuilt"]
        assert record["queries"]["instruction"][1] == (
            f"Find a document that satisfies: (1) {conditions[0]['condition']} (2) {conditions[1]['condition']}"
        )
    # The paraphrased sentence was rejected; Carlow was built from its other sentences.
    carlow = records["carlow.txt"]
    assert carlow["rejected"][0]["reason"] == "not a verbatim substring of the document"
    assert "was opened" not in carlow["conditions"][0]["sentence"]
    # A document with two condition sentences is dropped, and counted.
    assert records["zz-short.txt"]["status"] == "dropped" and records["zz-short.txt"]["reason"] == "fewer_conditions"
    assert result.dropped == {"fewer_conditions": 1}
    assert result.verification == {
        "checked": 6 * 2 * N,
        "verified_first_time": 6 * 2 * N,
        "rebuilt_and_verified": 0,
        "dropped": 0,
    }


def test_exports_hold_the_rows_in_the_reference_layout_and_beir(tmp_path):
    result = build(tmp_path, ScriptedHardnegAgents())
    records = records_by_id(result)
    dataset = read_csv(result.files["dataset"])
    assert [row["Id"] for row in dataset] == [f"{name.lower()}.txt" for name in STATIONS[:6]]  # source order
    assert list(dataset[0]) == (
        ["Id", "Title"]
        + [f"Query{k}" for k in range(1, N + 1)]
        + [f"Natural_Query{k}" for k in range(1, N + 1)]
        + ["Positive"]
        + [f"HN{j}" for j in range(1, N + 1)]
        + [f"Miss{k}" for k in range(1, N + 1)]
    )
    for row in dataset:
        documents = records[row["Id"]]["documents"]
        assert row["Positive"] == documents["Positive"]["text"]
        assert all(row[f"HN{j}"] == documents[f"HN{j}"]["text"] for j in range(1, N + 1))
    task1 = read_csv(result.files["task1"])
    assert task1
    assert all(
        row[f"HN{k}"] == records[row["Id"]]["documents"][f"Miss{k}"]["text"] for row in task1 for k in range(1, N + 1)
    )  # the reference's Task 1: HN{k} misses condition k
    assert read_dataset(result.files["dataset"])[0].instruction == records[dataset[0]["Id"]]["queries"]["instruction"]

    beir = result.files["beir_task2"]
    qrels = [line.split("\t") for line in (beir / "qrels" / "test.tsv").read_text().splitlines()[1:]]
    ashford = {doc: int(score) for query, doc, score in qrels if query == f"ashford.txt#Q{N}"}
    assert ashford == {"ashford.txt#P": N, **{f"ashford.txt#HN{j}": N - j for j in range(1, N + 1)}}
    queries = load_jsonl(result.files["beir_task3"] / "queries.jsonl")
    assert queries[0]["metadata"]["style"] == "descriptive" and queries[0]["text"].startswith("Looking for")
    task1_qrels = (result.files["beir_task1"] / "qrels" / "test.tsv").read_text().splitlines()
    assert "ashford.txt#Q2\tashford.txt#P\t1" in task1_qrels and "ashford.txt#Q2\tashford.txt#Miss2\t0" in task1_qrels
    stats = result.statistics()
    assert stats["task_rows"] == {"task1": 6, "task2": 6, "task3": 6} and stats["documents"] == 7


def test_verification_rebuilds_once_then_drops_a_planted_mismatch(tmp_path):
    # The judge claims every condition for Brixton's Miss3 (the only document judged against 3
    # conditions that mentions Brixton's clock tower), however it is rewritten.
    agents = ScriptedHardnegAgents(lie_about=(3, "tower of Brixton is"))
    result = build(tmp_path, agents)
    records = records_by_id(result)
    brixton = records["brixton.txt"]
    documents = brixton["documents"]
    assert brixton["conditions"][2]["attempts"] == 2 and "2031 metres" in brixton["conditions"][2]["negative"]
    assert all(condition["attempts"] == 1 for n, condition in enumerate(brixton["conditions"]) if n != 2)
    assert not documents["Miss3"]["verified"] and documents["Miss3"]["rebuilt"]
    for key in ("HN3", "HN4"):  # rebuilt with the new rewrite, and verified
        assert documents[key]["rebuilt"] and documents[key]["verified"] and "2031 metres" in documents[key]["text"]
    for key in ("HN1", "HN2", "Miss1", "Miss2", "Miss4"):  # untouched by condition 3: not rebuilt
        assert not documents[key]["rebuilt"] and documents[key]["verified"]
    assert brixton["status"] == "kept" and brixton["tasks"] == {"task1": False, "task2": True}
    assert result.verification == {
        "checked": 6 * 2 * N,
        "verified_first_time": 6 * 2 * N - 3,
        "rebuilt_and_verified": 2,
        "dropped": 1,
    }
    assert result.task_rows == {"task1": 5, "task2": 6, "task3": 6}
    retries = [prompt for name, prompt in agents.calls if name == "NegativeSentence" and "<previous>" in prompt]
    assert len(retries) == 1 and "Brixton" in retries[0]
    assert "brixton.txt" not in {row["Id"] for row in read_csv(result.files["task1"])}
    assert "brixton.txt" in {row["Id"] for row in read_csv(result.files["task2_3"])}
    combined = {row["Id"]: row for row in read_csv(result.files["dataset"])}
    assert combined["brixton.txt"]["Miss3"] == "" and combined["brixton.txt"]["HN3"] == documents["HN3"]["text"]


def test_a_positive_the_judge_rejects_drops_its_row(tmp_path):
    agents = ScriptedHardnegAgents()
    honest = agents.reply
    elgin_facts = ("opened in 1908", "has 8 platforms", "is 34 metres", "born in 1844")  # Elgin's conditions 1-4

    def judge_misses_one_in_elgins_positive(name, messages):
        reply = honest(name, messages)
        content = " ".join(messages[-1]["content"].split())
        if (
            name == "ConditionCount"
            and all(fact in content for fact in elgin_facts)
            and reply["satisfied"] == [1, 2, 3, 4]
        ):
            reply["satisfied"] = [1, 2, 3]
        return reply

    agents.reply = judge_misses_one_in_elgins_positive
    result = build(tmp_path, agents)
    elgin = records_by_id(result)["elgin.txt"]
    assert elgin["status"] == "dropped" and elgin["reason"] == "positive_fails"
    assert elgin["documents"]["Positive"]["satisfied"] == [1, 2, 3]
    assert elgin["conditions"]
    assert all(condition["attempts"] == 1 for condition in elgin["conditions"])  # nothing rebuilt for a lost row
    assert result.dropped == {"fewer_conditions": 1, "positive_fails": 1} and result.rows == 5
    assert result.verification["checked"] == 5 * 2 * N  # the dropped row's negatives are not counted


def test_baseline_builds_offline_with_both_kinds_of_negatives(tmp_path):
    corpus = write_corpus(tmp_path / "corpus")
    for kind in ("subtle", "misleading"):
        result = benchsmith.build_hardneg(
            [corpus], conditions=N, negatives=kind, workspace=tmp_path / "ws", run_id=f"baseline-{kind}"
        )
        assert result.rows == 6 and result.verification["dropped"] == 0, (kind, result.verification)
        records = [record for record in load_jsonl(result.files["rows"]) if record["status"] == "kept"]
        negatives = [condition["negative"] for record in records for condition in record["conditions"]]
        if kind == "misleading":
            assert negatives
            assert all(" not " in negative for negative in negatives)
        else:
            assert records
            assert all(
                condition["negative"] != " ".join(condition["sentence"].split())
                for record in records
                for condition in record["conditions"]
            )
        assert result.usage.calls == 6 * (2 + N + 2 * N + 1) + 1  # the short document: one extraction


def test_dry_run_counts_calls_from_the_prompts_and_bad_settings_are_refused(tmp_path):
    corpus = write_corpus(tmp_path / "corpus")
    estimate = benchsmith.estimate_hardneg([corpus], conditions=N, sample=3)
    assert estimate.calls == 3 * (2 + N + 2 * N + 1) and estimate.input_tokens > 0
    with pytest.raises(InputError, match="domain must be one of"):
        benchsmith.build_hardneg([corpus], domain="poetry", workspace=tmp_path / "ws")
    with pytest.raises(InputError, match="features"):
        benchsmith.build_hardneg([corpus], domain="books", features="plots", workspace=tmp_path / "ws")
    with pytest.raises(InputError, match="either"):
        benchsmith.build_hardneg([corpus], collection="docs", workspace=tmp_path / "ws")
    with pytest.raises(InputError, match="no such file"):
        benchsmith.build_hardneg([tmp_path / "absent"], workspace=tmp_path / "ws")
    with pytest.raises(InputError, match="negatives"):
        benchsmith.build_hardneg([corpus], negatives="loud", workspace=tmp_path / "ws")
    assert not (tmp_path / "ws" / "runs").exists() or not any((tmp_path / "ws" / "runs").iterdir())


def test_a_finished_build_is_reported_without_rebuilding(tmp_path):
    agents = ScriptedHardnegAgents()
    first = build(tmp_path, agents)
    calls = len(agents.calls)
    again = build(tmp_path, agents)
    assert again.already_finished and len(agents.calls) == calls
    assert again.rows == first.rows


def test_build_from_a_collection(tmp_path):
    from benchsmith.graphs.ingest import IngestContext
    from benchsmith.graphs.ingest import builder as ingest_builder
    from benchsmith.graphs.runtime.resources import register_embedder
    from benchsmith.graphs.runtime.runner import run_job
    from benchsmith.stores.persistence.workspace import Workspace
    from tests.embedders import HashingEmbedder

    workspace = Workspace.resolve(tmp_path / "ws")
    corpus = write_corpus(tmp_path / "corpus", short=False)
    context = IngestContext(workspace=str(workspace.root), embedder=register_embedder(HashingEmbedder()), min_chars=20)
    run_job(
        ingest_builder,
        job="ingest",
        workspace=workspace,
        run_id="ingest",
        inputs={"run_id": "ingest", "sources": [str(corpus)], "collection": "stations"},
        context=context,
        settings={},
    )
    result = benchsmith.build_hardneg(collection="stations", conditions=N, workspace=workspace.root, run_id="coll")
    assert result.documents == 6 and result.rows == 6
    titles = {json.loads(line)["title"] for line in result.files["rows"].read_text().splitlines()}
    assert titles == {name.lower() for name in STATIONS[:6]}  # a text file is titled by its name
