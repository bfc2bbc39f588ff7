"""`benchsmith label` without a browser: each question's pool (the union of the configurations' top
k, in a seeded order), judgments saved as made and a reopened run resuming where it stopped, a
second assessor's sample and Cohen's κ, the BEIR export that `validate` accepts, the server's
guards, and bad input refused before any run record."""

from __future__ import annotations

import json
import math
import socket
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from typer.testing import CliRunner

import benchsmith
import benchsmith.pages
from benchsmith.cli import app
from benchsmith.evals.measures.agreement import cohen_kappa
from benchsmith.graphs.runtime.corpus_indexes import CorpusFile, document_text
from benchsmith.graphs.runtime.resources import register_embedder
from benchsmith.pages.server import serve
from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.jsonl import load_jsonl
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.tools.retrieval.bm25 import BM25Index
from benchsmith.tools.retrieval.label_pools import excerpt_bounds, pooled, second_sample, shown_order, term_spans
from tests.embedders import HashingEmbedder
from tests.label_fixtures import RETRIEVERS, labelling_setup

runner = CliRunner(env={"COLUMNS": "400"})


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    return labelling_setup(tmp_path_factory.mktemp("label"))


def session(setup, run_id, **options):
    return benchsmith.open_label_session(
        setup["questions"],
        collection=setup["collection"],
        run_id=run_id,
        workspace=setup["workspace"].root,
        **options,
    )


def test_each_pool_is_the_union_of_the_configurations_top_k_in_a_seeded_order(setup):
    labelled = session(setup, "pools", depth=3)
    corpus = CorpusFile(labelled.run_dir / "beir" / "corpus.jsonl")
    bm25 = BM25Index.from_stream((doc_id, document_text(*corpus[doc_id])) for doc_id in corpus)
    for question_id, question in labelled.questions.items():
        pool = labelled.pools[question_id]
        top_bm25 = list(bm25.search({question_id: question.text}, 3)[question_id])
        assert set(top_bm25) <= set(pool) and 3 <= len(pool) <= 9
        assert setup["origins"][question_id] in pool  # asked in its first words: every configuration finds it
        assert pool == shown_order(pool, 0, question_id)  # the seeded order, not a rank
    assert session(setup, "pools").pools == labelled.pools  # built once: reopened, read back
    assert pooled([["a", "b", "c"], ["c", "d"]], 2) == ["a", "b", "c", "d"]
    assert shown_order(["a", "b", "c", "d"], 1, "q") == shown_order(["d", "c", "b", "a"], 1, "q")


def test_judgments_are_saved_as_made_and_a_reopened_run_resumes_where_it_stopped(setup):
    first = session(setup, "resume")
    assert first.state()["next"] == 0
    first.judge(0, 3, "the answer", 4.0)
    first.judge(1, None)  # skipped
    first.judge(2, 0, seconds=2.0)
    lines = load_jsonl(first.run_dir / "judgments.jsonl")
    assert [line["grade"] for line in lines] == [3, None, 0] and lines[0]["note"] == "the answer"

    reopened = session(setup, "resume")  # a new process after a kill: only the files remain
    state = reopened.state()
    assert (state["done"], state["next"], state["mean_seconds"]) == (3, 3, 3.0)
    assert reopened.item(0)["grade"] == 3 and reopened.item(1)["judged"] and reopened.item(1)["grade"] is None
    reopened.judge(0, 2)  # back, and graded again: a new line, the latest in force
    assert session(setup, "resume").item(0)["grade"] == 2
    assert len(load_jsonl(first.run_dir / "judgments.jsonl")) == 4


def test_a_second_assessor_labels_a_sample_and_the_report_gives_cohens_kappa(setup):
    first = session(setup, "kappa", second_sample=0.15)
    pairs = first.all_pairs
    for index, (_, doc_id) in enumerate(pairs):
        first.judge(index, 3 if doc_id in setup["origins"].values() else index % 2)
    second = session(setup, "kappa", assessor="bea")
    assert second.state()["role"] == "second"
    assert len(second.queue) == math.ceil(0.15 * len(pairs)) and set(second.queue) <= set(pairs)
    mine = []
    for index, pair in enumerate(second.queue):
        grade = first.log.get(*pair, "assessor").grade
        grade = grade if index else (grade + 1) % 4  # one disagreement
        second.judge(index, grade)
        mine.append(grade)
    [agreement] = second.agreements()
    theirs = [first.log.get(*pair, "assessor").grade for pair in second.queue]
    assert (agreement.assessor, agreement.other, agreement.pairs) == ("assessor", "bea", len(second.queue))
    assert agreement.cohen_kappa == cohen_kappa(theirs, mine)
    assert second_sample(pairs, 0.15, 0) == second.queue  # the same pairs however asked


def test_the_beir_export_passes_validate(setup):
    labelled = session(setup, "export")
    for index, (question_id, doc_id) in enumerate(labelled.queue):
        labelled.judge(index, 3 if setup["origins"][question_id] == doc_id else 0, seconds=1.5)
    result = benchsmith.label(run_id="export", serve_page=False, workspace=setup["workspace"].root)
    assert (result.questions_judged, result.relevant, result.judged) == (3, 3, len(labelled.queue))
    assert result.mean_seconds == 1.5
    qrels = (result.beir / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()
    assert qrels[0] == "query-id\tcorpus-id\tscore" and len(qrels) == 1 + len(labelled.queue)
    assert RunDirectory(setup["workspace"], "export").load().status == "finished"

    validated = benchsmith.validate(
        setup["bench"],
        human=result.beir,
        retrievers=RETRIEVERS,
        embedder=register_embedder(HashingEmbedder()),
        depth=20,
        bootstrap=20,
        workspace=setup["workspace"].root,
        run_id="validate-labels",
    )
    assert validated.results()["human"]["queries"] == 3


def test_the_server_answers_the_page_and_guards_its_api(setup):
    labelled = session(setup, "served")
    ready, stop = threading.Event(), threading.Event()
    found = {}

    def on_ready(address):
        found["address"] = address
        ready.set()

    thread = threading.Thread(target=serve, args=(labelled, "127.0.0.1", 0, on_ready, stop), daemon=True)
    thread.start()
    assert ready.wait(10)
    base = found["address"].url
    try:
        with urllib.request.urlopen(base) as page:
            assert "script-src 'self'" in page.headers["Content-Security-Policy"]
            assert b"/static/label.js" in page.read()
        request = urllib.request.Request(
            base + "api/judge", data=json.dumps({"index": 0, "grade": 2, "seconds": 3}).encode(), method="POST"
        )
        with urllib.request.urlopen(request) as answer:
            assert json.load(answer)["done"] == 1
        for bad in ({"index": 0, "grade": 7}, {"index": 0, "grade": True}):
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(urllib.request.Request(base + "api/judge", data=json.dumps(bad).encode()))
            assert refused.value.code == 400
        rebound = urllib.request.Request(base + "api/state", headers={"Host": f"evil.example:{found['address'].port}"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(rebound)
        assert refused.value.code == 421
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(base + "static/..%2Frun.json")
        assert refused.value.code == 404
    finally:
        stop.set()
        thread.join(10)


def test_another_host_than_loopback_needs_the_printed_token(setup):
    labelled = session(setup, "token")
    ready, stop = threading.Event(), threading.Event()
    found = {}
    thread = threading.Thread(
        target=serve,
        args=(labelled, "0.0.0.0", 0, lambda address: (found.update(address=address), ready.set()), stop),
        daemon=True,
    )
    thread.start()
    assert ready.wait(10)
    address = found["address"]
    try:
        assert address.token and f"?token={address.token}" in address.url
        local = f"http://127.0.0.1:{address.port}/api/state"
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(local)
        assert refused.value.code == 403
        with urllib.request.urlopen(urllib.request.Request(local, headers={"X-Access-Token": address.token})) as ok:
            assert json.load(ok)["total"] > 0
    finally:
        stop.set()
        thread.join(10)


def test_bad_input_stops_before_any_run_record(setup, tmp_path):
    workspace = setup["workspace"]
    for options, message in (
        ({"collection": "nowhere"}, "no collection 'nowhere'"),
        ({"collection": setup["collection"], "retrievers": ["dense:other-model"]}, "was embedded with"),
        ({"collection": setup["collection"], "retrievers": ["splade"]}, "unknown retriever"),
        ({"collection": setup["collection"], "depth": 0}, "depth must be within"),
    ):
        with pytest.raises(InputError, match=message):
            benchsmith.label(
                setup["questions"], serve_page=False, run_id="refused", workspace=workspace.root, **options
            )
        assert not RunDirectory(workspace, "refused").exists()
    with socket.socket() as taken:  # a port in use: refused before the run exists
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(InputError, match=r"cannot listen on 127\.0\.0\.1"):
            benchsmith.label(
                setup["questions"],
                collection=setup["collection"],
                port=taken.getsockname()[1],
                run_id="refused",
                workspace=workspace.root,
            )
        assert not RunDirectory(workspace, "refused").exists()
    empty = tmp_path / "empty.txt"
    empty.write_text("\n", encoding="utf-8")
    refused = runner.invoke(
        app, ["label", str(empty), "--collection", setup["collection"], "--no-serve", "-w", str(workspace.root)]
    )
    assert refused.exit_code == 2 and "no queries" in refused.output


def test_excerpts_and_marks_are_text_ranges_around_the_question_terms():
    text = "intro " * 200 + "The <b>spool</b> [bold]limit[/bold] caps records. " + "outro " * 200
    start, end = excerpt_bounds(text, ["limits", "records"])
    assert start < text.index("limit") < end and end - start <= 600
    marked = [text[s:e] for s, e in term_spans(text, ["limits", "records"])]
    assert marked == ["limit", "records"]


def test_the_command_prints_the_runs_figures_and_the_beir_folder(setup):
    labelled = session(setup, "command", second_sample=0.5)
    for index in range(len(labelled.queue)):
        labelled.judge(index, index % 4)
    second = session(setup, "command", assessor="bea")
    for index in range(len(second.queue)):
        second.judge(index, 0)
    result = runner.invoke(app, ["label", "--run-id", "command", "--no-serve", "-w", str(setup["workspace"].root)])
    output = " ".join(result.output.split())
    assert result.exit_code == 0, result.output
    assert f"{len(labelled.queue)} of {len(labelled.queue)} pairs judged by assessor" in output
    assert "Cohen's κ between assessor and bea: " in output and f"over {len(second.queue)} pairs" in output
    assert str(labelled.run_dir / "beir") in output


def test_the_pages_never_parse_text_as_html():
    """Document text and model output reach the page through textContent and text nodes only."""
    static = Path(benchsmith.pages.__file__).parent / "static"
    scripts = {path.name: path.read_text(encoding="utf-8") for path in static.glob("*.js")}
    assert {"common.js", "label.js", "review.js"} <= set(scripts)
    for name, script in scripts.items():
        for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
            assert sink not in script, f"{name} uses {sink}"
    for page in static.glob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert "http" not in text and "<script>" not in text  # no CDN, no inline script (the CSP forbids it)
