"""The audit of a reviewed synthesis run: the quality gate's agreement with the reviewer (checked
against a hand count on a tiny run) in audit.json and the report, one line when there is no review,
and the turns the report lists linked to their review page (escaped in HTML, the address as text in
Markdown)."""

from __future__ import annotations

import json
import re

import pytest

import benchsmith
from benchsmith.evals.reports import document
from benchsmith.evals.reports.audit_report import turn_linker
from benchsmith.jobs.publish import _synthesis_run
from benchsmith.jobs.review import review_session
from benchsmith.stores.persistence.jsonl import load_jsonl
from benchsmith.stores.persistence.runs import RunDirectory
from tests.label_fixtures import labelling_setup

# Two first questions the gate flags: "it" that nothing names, and markup.
PLANTED = {"c0000_t0": "What does it do?", "c0001_t0": "{ref}`zorbium density <zorbium-density>`"}
# The reviewer's verdicts: (turn, verdict, rubric class).
REVIEW = [
    ("c0000_t0", "reject", "dangling_referent"),  # gate flags it too
    ("c0001_t0", "accept", None),  # gate flags it, the reviewer does not
    ("c0000_t1", "reject", "reply_mismatch"),  # the reviewer rejects it, the gate does not flag it
    ("c0003_t0", "edit", None),  # an edit is no rejection: both say ok
    ("c0001_t2", "accept", None),  # both say ok
]


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory):
    setup = labelling_setup(tmp_path_factory.mktemp("audit-review"))
    workspace = setup["workspace"]
    queries = setup["bench"] / "beir" / "queries.jsonl"
    rows = load_jsonl(queries)
    for row in rows:
        if row["_id"] in PLANTED:
            row["metadata"]["question"], row["text"] = PLANTED[row["_id"]], "User: " + PLANTED[row["_id"]]
    queries.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    before = benchsmith.audit("bench", run_id="audit-before", workspace=str(workspace.root))

    benchmark_dir, record = _synthesis_run(workspace, "bench")
    run_dir = RunDirectory(workspace, "review-1")
    run_dir.start("review", {"benchmark": "bench", "reviewer": "rita"})
    session = review_session(workspace, None, run_dir, benchmark_dir, record, "rita")
    for turn, verdict, klass in REVIEW:
        edit = "What does the amber chroma table hold?" if verdict == "edit" else None
        session.judge(session.position(turn), verdict, klass, edit)
    after = benchsmith.audit("bench", run_id="audit-after", workspace=str(workspace.root))
    return {"before": before, "after": after}


def test_an_audit_of_a_reviewed_run_reports_the_gates_agreement_with_the_reviewer(reviewed):
    results = reviewed["after"].results()
    flagged = {
        row["turn"] for row in load_jsonl(reviewed["after"].run_dir / "quality_gate_turns.jsonl") if row["flags"]
    }
    assert flagged == set(PLANTED)
    review = results["review"]
    assert (review["synthesis_run"], review["review_run"], review["reviewers"], review["reviewed"]) == (
        "bench",
        "review-1",
        ["rita"],
        5,
    )
    # By hand, over the 5 reviewed turns: both broken 1, gate only 1, reviewer only 1, both ok 2.
    # Agreement 3/5; recall 1/2; precision 1/2; κ: p_o = 0.6, p_e = 0.4·0.4 + 0.6·0.6 = 0.52,
    # κ = (0.6 − 0.52) / (1 − 0.52) = 1/6.
    assert review["agreement"] == {
        "turns": 5,
        "reader_broken": 2,
        "gate_flagged": 2,
        "both_broken": 1,
        "gate_only": 1,
        "reader_only": 1,
        "agreement": 0.6,
        "recall": 0.5,
        "precision": 0.5,
        "cohen_kappa": round(1 / 6, 4),
    }
    assert reviewed["after"].quality_gate["reviewer_agreement"] == review["agreement"]
    markdown = reviewed["after"].report["markdown"].read_text(encoding="utf-8")
    gate_section = markdown.split("## Quality gate", 1)[1].split("\n## ", 1)[0]
    assert "Against the review review-1 (rita; 5 turns with a verdict)" in gate_section
    for row in ("| turns both read | 5 |", "| agreement | 60.0% |", "| gate's recall on the rejections | 50.0% |"):
        assert row in gate_section
    assert "| Cohen's κ | 0.17 |" in gate_section
    # How to start the page the links open (Markdown escapes the backticks).
    assert "\\`benchsmith review bench --run-id review-1\\`" in markdown


def test_without_a_review_the_audit_says_so_in_one_line(reviewed):
    results = reviewed["before"].results()
    assert results["review"]["agreement"] is None and reviewed["before"].quality_gate["reviewer_agreement"] is None
    markdown = reviewed["before"].report["markdown"].read_text(encoding="utf-8")
    lines = [line for line in markdown.splitlines() if line.startswith("No review of the run bench")]
    assert lines == [
        "No review of the run bench to compare the gate with: \\`benchsmith review bench\\` reads its turns in the "
        "browser."
    ]
    assert "gate against the reviewer" not in markdown


def test_the_turns_the_report_lists_link_to_their_review(reviewed):
    page = reviewed["after"].report["html"].read_text(encoding="utf-8")
    markdown = reviewed["after"].report["markdown"].read_text(encoding="utf-8")
    # The gate's examples: each flagged turn's id links to the review page's deep link.
    for turn in PLANTED:
        assert f'<a href="http://127.0.0.1:8766/?turn={turn}">{turn}</a>' in page
        shown = turn.replace("_", "\\_")  # Markdown escapes the underscore
        assert f"| {shown} (http://127.0.0.1:8766/?turn={shown}) |" in markdown
    # The worst-aligned turns' headings link there too.
    worst = reviewed["after"].results()["worst"][0]["instance"]
    assert re.search(rf'<h3><a href="http://127\.0\.0\.1:8766/\?turn={worst}">1\. {worst}: alignment', page)


def test_a_linked_turn_id_is_escaped_in_html_and_shown_with_its_address_in_markdown():
    hostile = 'c1_t0"><script>alert(1)</script>'
    link = turn_linker({"synthesis_run": "bench"})(hostile)
    assert link == "http://127.0.0.1:8766/?turn=c1_t0%22%3E%3Cscript%3Ealert%281%29%3C%2Fscript%3E"
    table = document.Table(["turn", "question"], [[document.Cell(hostile, link=link), document.Cell("q")]])
    doc = document.Document("t", [document.Section("s", [table, document.Subheading(hostile, link=link)])])
    page = document.render_html(doc)
    escaped = "c1_t0&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"
    assert f'<th scope="row"><a href="{link}">{escaped}</a></th>' in page
    assert f'<h3><a href="{link}">{escaped}</a></h3>' in page
    assert "<script>" not in page
    markdown = document.render_markdown(doc)
    link_shown = "http://127.0.0.1:8766/?turn=c1\\_t0%22%3E%3Cscript%3Ealert%281%29%3C%2Fscript%3E"
    assert f'| c1\\_t0">\\<script>alert(1)\\</script> ({link_shown}) | q |' in markdown
    for outside in ("javascript:alert(1)", "https://example.com/", "//example.com/", "http://127.0.0.1.example.com/"):
        with pytest.raises(ValueError, match="benchsmith's own pages"):
            document.Cell("x", link=outside)
