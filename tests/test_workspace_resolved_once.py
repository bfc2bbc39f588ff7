"""A job resolves its workspace once (Workspace.resolve, stores/persistence/workspace.py) and hands the graph the
resolved folder; the graph's nodes ask graphs/runtime/job_runtime.JobRuntime.workspace, which resolves
it once more per process at most, never per node, turn or cached lookup."""

import benchsmith
from benchsmith.stores.persistence.workspace import Workspace
from tests.synthesis_fixtures import COLLECTION, build_collection


def test_a_synthesis_run_resolves_its_workspace_once_in_the_job_and_once_in_the_graph(tmp_path, monkeypatch):
    workspace = Workspace.resolve(tmp_path / "ws")
    build_collection(workspace, tmp_path / "corpus", documents=24)
    resolve = Workspace.resolve
    asked: list[object] = []

    def counted(path=None):
        asked.append(path)
        return resolve(path)

    monkeypatch.setattr(Workspace, "resolve", counted)
    result = benchsmith.synthesize(COLLECTION, conversations=2, turns=3, workspace=str(workspace.root), run_id="once")
    assert len(result.dialogues) == 2  # the run did its nodes' work: several turns, lookups and exports
    # The job's resolution, then the graph's at most (this process resolved the folder for the ingest
    # run already): before, the clustering, the vector store, the corpus statistics and the BM25 pool
    # each resolved it again from its text.
    assert asked[0] == str(workspace.root) and len(asked) <= 2, asked
