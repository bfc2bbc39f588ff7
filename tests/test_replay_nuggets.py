"""Nugget coverage of an assistant's replies where the benchmark has nuggets (a nuggets.jsonl beside
its BEIR folder, as a `benchsmith nuggets` run writes it): the share of each turn's nuggets the
reply states, by the support judge, averaged over turns and judges; none without nuggets; a
malformed nuggets file stops before the run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import benchsmith
from benchsmith.graphs.runtime.resources import clear_registry
from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.jsonl import load_jsonl
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.workspace import Workspace
from tests.synthesis_fixtures import build_collection, synthesize


@pytest.fixture(scope="module")
def with_nuggets(tmp_path_factory) -> Path:
    """A synthesized benchmark's BEIR folder copied into a nuggets run's layout: two nuggets per
    turn but the last, which has none."""
    root = tmp_path_factory.mktemp("nuggets")
    workspace = Workspace.resolve(root / "ws")
    build_collection(workspace, root / "pages", documents=24)
    synthesize(workspace, "synthesized", conversations=2, turns=2)
    clear_registry()
    beir = shutil.copytree(RunDirectory(workspace, "synthesized").path / "beir", root / "bench" / "beir")
    query_ids = [record["_id"] for record in load_jsonl(beir / "queries.jsonl")]
    lines = [
        {"query_id": query_id, "question": "", "answer": "", "nuggets": [{"_id": f"{query_id}-1", "text": stated(n)},
                                                                       {"_id": f"{query_id}-2", "text": unstated(n)}]}
        for n, query_id in enumerate(query_ids[:-1])
    ]  # fmt: skip
    (root / "bench" / "nuggets.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return beir


def stated(n: int) -> str:
    return f"Port {4800 + n} belongs to the Quillfeather relay."


def unstated(n: int) -> str:
    return f"The Marrowdale archive closes at {n + 7} hours."


@pytest.fixture(autouse=True)
def _forget_registered():
    yield
    clear_registry()


def test_replies_are_scored_by_the_share_of_their_turns_nuggets_they_state(tmp_path, with_nuggets):
    query_ids = [record["_id"] for record in load_jsonl(with_nuggets / "queries.jsonl")]
    said = " ".join(stated(n) for n in range(len(query_ids)))

    def assistant(question, history):  # states the first nugget of every turn, never the second
        return {"reply": said, "passages": []}

    result = benchsmith.replay(with_nuggets, assistant=assistant, workspace=str(tmp_path / "ws"), run_id="nug")
    assert result.nugget_coverage == pytest.approx(0.5)
    turns = [turn for record in load_jsonl(result.run_dir / "conversations.jsonl") for turn in record["turns"]]
    covered = {turn["id"]: turn["judged"]["baseline"].get("nugget_coverage") for turn in turns}
    assert covered.pop(query_ids[-1]) is None  # the turn without nuggets has no coverage
    assert set(covered.values()) == {0.5}
    assert "Nugget coverage of the replies" in result.report["markdown"].read_text(encoding="utf-8")


def test_without_nuggets_there_is_no_coverage_and_a_bad_nuggets_file_stops_first(tmp_path, with_nuggets):
    plain = shutil.copytree(with_nuggets, tmp_path / "plain" / "beir")

    def unsure(question, history):
        return "I do not know.", []

    result = benchsmith.replay(plain, assistant=unsure, workspace=str(tmp_path / "ws"))
    assert result.nugget_coverage is None
    (tmp_path / "plain" / "nuggets.jsonl").write_text('{"query_id": "x"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"nuggets.jsonl:1: not a nuggets line"):
        benchsmith.replay(plain, assistant=unsure, workspace=str(tmp_path / "ws2"))
    assert not (tmp_path / "ws2" / "runs").exists() or not list((tmp_path / "ws2" / "runs").iterdir())
