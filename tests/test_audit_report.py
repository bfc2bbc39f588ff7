"""The audit report as its readers meet it: the verdict first, Markdown tables and quotes, a
self-contained HTML page that a real browser renders with its plots, and audit.json."""

import base64
import copy
import json
import re

import pytest

from benchsmith.evals.quality_gate import GateVerdict
from benchsmith.evals.quality_gate.summary import gate_summary
from benchsmith.evals.reports.audit_report import audit_report_files
from benchsmith.stores.persistence.files import write_files_atomic
from tests.chromium import chromium_or_skip, loaded_images, png_size, take_screenshot
from tests.report_parsing import html_tags, markdown_tables

JUDGES = ["baseline", "openai:judge-b"]
CONVERSATION = (
    "User: which river runs through the old town?\n"
    "Agent: The Vltava, crossed by the Charles Bridge.\n"
    "User: how long is it?"
)
ESCAPE_ATTEMPT = '<script>alert("x")</script>'


# ---------------------------------------------------------------------------------------
# Audits as the audit graph writes them.


def dimension(label: str, mean: float, distribution: list[int], per_judge: list[float]) -> dict:
    return {
        "label": label,
        "mean": mean,
        "ci_low": round(mean - 0.2, 2),
        "ci_high": round(mean + 0.2, 2),
        "n": sum(distribution),
        "distribution": {str(score): count for score, count in enumerate(distribution, 1)},
        "per_judge_mean": dict(zip(JUDGES, per_judge)),
    }


def worst_instance(instance: str, alignment: float, query: str = CONVERSATION) -> dict:
    return {
        "instance": instance,
        "query": query,
        "gold_id": f"doc-{instance}",
        "gold_excerpt": f"The opening of the gold document of {instance}, about something else.",
        "alignment": alignment,
        "rationales": {judge: f"{judge} on {instance}: the gold document does not answer." for judge in JUDGES},
    }


def candidate(instance: str, candidate_id: str, votes: int) -> dict:
    return {
        "instance": instance,
        "query": CONVERSATION,
        "gold_id": f"doc-{instance}",
        "candidate_id": candidate_id,
        "candidate_excerpt": f"{candidate_id}: the Vltava is 430 km long.",
        "votes": votes,
        "judges": len(JUDGES),
        "confirmed": votes > len(JUDGES) / 2,
        "reasons": {judge: f"{judge} prefers {candidate_id}: it gives the length." for judge in JUDGES[:votes]},
    }


def full_audit() -> dict:
    return {
        "benchmark": {
            "name": "demo-synthesize",
            "path": "/data/beir/demo",
            "queries": 120,
            "instances": 120,
            "sampled": False,
            "seed": 0,
            "documents": 1771,
            "conversational": True,
            "has_answers": True,
        },
        "settings": {"judges": JUDGES, "negatives": 4, "position_check": True, "sample": None},
        "dimensions": {
            "alignment": dimension("query–evidence alignment", 3.9, [3, 5, 10, 40, 62], [3.8, 4.0]),
            "faithfulness": dimension("answer–evidence faithfulness", 4.21, [1, 2, 12, 45, 60], [4.15, 4.27]),
            "quality": dimension("answer quality", 4.05, [0, 4, 20, 50, 46], [3.98, 4.12]),
        },
        "discriminability": {
            "gold_pick_rate": 0.82,
            "ci_low": 0.75,
            "ci_high": 0.88,
            "n": 120,
            "suspected_sparsity": 21,
            "confirmed_missing_gold": 2,
            "pool_size": 5,
            "gold_position_counts": {"1": 24, "2": 25, "3": 23, "4": 24, "5": 24},
            "choice_position_counts": {"1": 60, "2": 44, "3": 46, "4": 45, "5": 45},
            "position_bias": {"checked": 120, "same_document": 0.93, "same_position": 0.04},
        },
        "agreement": {
            "alignment": {"pearson": 0.81, "spearman": 0.77},
            "faithfulness": {"pearson": 0.64, "spearman": 0.6},
            "quality": {"pearson": 0.55, "spearman": None},
            "choice": {"fleiss_kappa": 0.62, "judges": 2},
        },
        "worst": [
            worst_instance("c0003_t2", 1.5),
            worst_instance("c0011_t1", 2.0),
            worst_instance("c0020_t0", 2.5, query="User: what is the capital of Bohemia?"),
        ],
        # Not confirmed first, as an audit may list them: the report puts the confirmed first.
        "missing_gold": [
            candidate("c0007_t1", "d31", votes=1),
            candidate("c0009_t2", "d9", votes=2),
            candidate("c0010_t1", "d40", votes=2),
        ],
        "verdict": {
            "label": "usable with caveats",
            "explanation": "7% of instances have a gold document judged not to answer (alignment ≤ 2); "
            "judges preferred another document in 18% of the pools.",
        },
        "sampling": "Audited all 120 instances.",
        "notes": ["Judges saw the whole conversation, newest turn last."],
    }


def minimal_audit() -> dict:
    """One judge, alignment only, nothing flagged: no agreement, position check, worst or missing gold."""
    audit = full_audit()
    audit["settings"] = {"judges": ["baseline"], "negatives": 4, "position_check": False, "sample": None}
    audit["benchmark"]["has_answers"] = False
    alignment = audit["dimensions"]["alignment"]
    alignment["per_judge_mean"] = {"baseline": alignment["mean"]}
    audit["dimensions"] = {"alignment": alignment}
    audit["discriminability"]["position_bias"] = None
    audit.update(agreement=None, worst=[], missing_gold=[], notes=[])
    return audit


@pytest.fixture(scope="module")
def audit() -> dict:
    return full_audit()


@pytest.fixture(scope="module")
def report(audit, tmp_path_factory) -> dict:
    return write_files_atomic(tmp_path_factory.mktemp("audit"), audit_report_files(audit))


@pytest.fixture(scope="module")
def markdown(report) -> str:
    return report["markdown"].read_text(encoding="utf-8")


def section_text(markdown: str, heading: str) -> str:
    """The Markdown of the ``## heading`` section, up to the next one."""
    return markdown.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def html_images(page: str) -> list[bytes]:
    sources = [attrs["src"] for tag, attrs in html_tags(page) if tag == "img"]
    assert sources
    assert all(source.startswith("data:image/png;base64,") for source in sources)
    return [base64.b64decode(source.removeprefix("data:image/png;base64,"), validate=True) for source in sources]


# ---------------------------------------------------------------------------------------
# Markdown.


def test_markdown_leads_with_the_verdict_and_its_explanation(audit, markdown):
    assert markdown.startswith("# Benchmark audit: demo-synthesize\n\n## Verdict\n")
    verdict = section_text(markdown, "Verdict")
    assert "Usable with caveats" in verdict and "judges preferred another document in 18%" in verdict
    first_table = next(index for index, line in enumerate(markdown.splitlines()) if line.startswith("|"))
    assert markdown.splitlines().index("> **Usable with caveats**") < first_table
    overview = section_text(markdown, "Benchmark and sample")
    assert "120 queries, 120 instances, 1,771 documents" in overview and audit["sampling"] in overview


def test_markdown_scores_table_matches_every_dimension_and_judge(audit, markdown):
    table = markdown_tables(markdown)["Scores"]
    assert table[0] == ["dimension", "mean", "95% CI", "n", "mean by baseline", "mean by openai:judge-b"]
    dimensions = audit["dimensions"].values()
    assert [row[0] for row in table[1:]] == [dimension["label"] for dimension in dimensions]
    for row, dimension in zip(table[1:], dimensions):
        low, high = row[2].split("–")
        assert float(row[1]) == pytest.approx(dimension["mean"], abs=5e-3)
        assert (float(low), float(high)) == pytest.approx((dimension["ci_low"], dimension["ci_high"]), abs=5e-3)
        assert int(row[3]) == dimension["n"]
        assert [float(cell) for cell in row[4:]] == pytest.approx(list(dimension["per_judge_mean"].values()), abs=5e-3)


def test_markdown_discriminability_and_agreement_give_rates_checks_and_coefficients(markdown):
    discriminability = dict(markdown_tables(markdown)["Evidence completeness (discriminability)"][1:])
    assert discriminability["gold pick rate"] == "82.0% (95% CI 75.0%–88.0%)"
    assert discriminability["suspected sparsity"] == "21 (17.5% of the instances)"
    assert discriminability["pool size"].startswith("5 (the gold document and 4 hard negatives)")
    assert "same document 93.0% of the time" in markdown and "same position 4.0% of the time" in markdown
    agreement = markdown_tables(markdown)["Agreement between judges"]
    assert agreement[1:] == [
        ["query–evidence alignment", "0.81", "0.77"],
        ["answer–evidence faithfulness", "0.64", "0.60"],
        ["answer quality", "0.55", "–"],
    ]
    assert "Fleiss' κ is 0.62 over 2 judges" in markdown


def test_markdown_lists_the_worst_instances_with_every_judges_rationale(audit, markdown):
    worst = section_text(markdown, "Worst-aligned instances")
    headings = re.findall(r"^### (.+)$", worst, flags=re.MULTILINE)
    assert headings == [
        "1. c0003\\_t2: alignment 1.50",
        "2. c0011\\_t1: alignment 2.00",
        "3. c0020\\_t0: alignment 2.50",
    ]
    for instance in audit["worst"]:
        assert f"Gold document doc-{instance['instance']}".replace("_", "\\_") in worst
        for rationale in instance["rationales"].values():
            assert f"{rationale}".replace("_", "\\_") in worst
    # The conversation stays one turn a line, in a quote whose lines end in hard breaks.
    assert (
        "> User: which river runs through the old town?\\\n> Agent: The Vltava, crossed by the Charles "
        "Bridge.\\\n> User: how long is it?\n"
    ) in worst


def test_markdown_lists_confirmed_missing_gold_first_and_names_extra_qrels(markdown):
    missing = section_text(markdown, "Candidate missing gold documents")
    headings = re.findall(r"^### (.+)$", missing, flags=re.MULTILINE)
    assert headings == [
        "1. c0009\\_t2: d9 (confirmed, 2 of 2 judges)",
        "2. c0010\\_t1: d40 (confirmed, 2 of 2 judges)",
        "3. c0007\\_t1: d31 (not confirmed, 1 of 2 judges)",
    ]
    assert "baseline prefers d9: it gives the length." in missing
    assert "openai:judge-b prefers d40: it gives the length." in missing
    assert "extra\\_qrels.tsv" in missing
    assert "\\`benchsmith evaluate BENCH --extra-qrels extra\\_qrels.tsv\\`" in missing


def test_markdown_renders_as_intended(markdown):
    markdown_it = pytest.importorskip("markdown_it")
    rendered = markdown_it.MarkdownIt("commonmark").enable("table").render(markdown)  # GitHub's tables
    assert "<blockquote>\n<p><strong>Usable with caveats</strong></p>" in rendered
    assert (
        "<p>User: which river runs through the old town?<br />\nAgent: The Vltava, crossed by the Charles "
        "Bridge.<br />\nUser: how long is it?</p>"
    ) in rendered
    assert rendered.count("<h3>") == 6 and rendered.count("<table>") == 3


# ---------------------------------------------------------------------------------------
# HTML and audit.json.


def test_html_is_self_contained_with_every_plot_a_valid_inline_png(report):
    page = report["html"].read_text(encoding="utf-8")
    tags = html_tags(page)
    references = [attrs[name] for _, attrs in tags for name in ("src", "href") if name in attrs]
    assert not [ref for ref in references if not ref.startswith("data:")], "only inline data may be referenced"
    assert not [tag for tag, _ in tags if tag in ("script", "link", "iframe", "object")]
    assert all(attrs.get("alt") for tag, attrs in tags if tag == "img")
    images = html_images(page)
    assert len(images) == 2  # the score distributions and the positions in the pool
    for image in images:
        width, height = png_size(image)
        assert width > 200 and height > 200
    assert page.index('class="callout"') < page.index("<table>")
    assert "<blockquote>User: which river runs through the old town?\nAgent:" in page  # kept lines (pre-wrap)


CONTROL_SEQUENCES = "\x1b[2J\x1b]0;pwned\x07\x1b]8;;http://evil/\x1b\\link\x9b31m\r"  # clear, title, link, C1 CSI


def test_model_text_with_terminal_control_sequences_is_shown_as_escapes_in_both_files(tmp_path):
    """A judge's rationale or a query holding ESC/OSC sequences would act again in any terminal
    that shows the report (cat, less -R): both files keep the text readable, the sequences inert."""
    audit = full_audit()
    audit["worst"][0].update(
        query=f"User: where?{CONTROL_SEQUENCES}\nAgent: here",
        gold_id=f"doc{CONTROL_SEQUENCES}",
        rationales={JUDGES[0]: f"fine {CONTROL_SEQUENCES} reply"},
    )
    audit["notes"] = [f"note {CONTROL_SEQUENCES}"]
    paths = write_files_atomic(tmp_path, audit_report_files(audit))
    for kind in ("markdown", "html"):
        text = paths[kind].read_text(encoding="utf-8")
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", text), kind
        assert re.search(r"x1b\\?\]0;pwned", text) and "x9b31m" in text, kind  # Markdown escapes the bracket
    assert "User: where?" in paths["markdown"].read_text(encoding="utf-8")


def test_untrusted_text_is_escaped_in_html_and_markdown(tmp_path):
    audit = full_audit()
    audit["benchmark"]["name"] = f"bench{ESCAPE_ATTEMPT}"
    audit["worst"][0].update(
        query=f"User: {ESCAPE_ATTEMPT}\n# not a heading\n- not a list",
        gold_id=ESCAPE_ATTEMPT,
        gold_excerpt="<img src=x onerror=alert(1)>",
        rationales={ESCAPE_ATTEMPT: f"**bold** {ESCAPE_ATTEMPT}"},
    )
    audit["missing_gold"][1].update(candidate_id=ESCAPE_ATTEMPT, reasons={"baseline": "[link](javascript:alert(1))"})
    audit["notes"] = [ESCAPE_ATTEMPT]
    paths = write_files_atomic(tmp_path, audit_report_files(audit))

    page = paths["html"].read_text(encoding="utf-8")
    tags = html_tags(page)
    assert not [tag for tag, _ in tags if tag == "script"]
    assert not [tag for tag, _ in tags if tag == "a"]
    assert len([tag for tag, _ in tags if tag == "img"]) == 2  # the plots, not the excerpt
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page

    markdown = paths["markdown"].read_text(encoding="utf-8")
    assert not re.search(r"(?<!\\)<[A-Za-z/]", markdown), "an unescaped tag would be raw HTML to a renderer"
    assert "> \\# not a heading\\\n> \\- not a list\n" in markdown
    assert "\\*\\*bold\\*\\*" in markdown and "\\[link\\](javascript:alert(1))" in markdown


def test_audit_json_round_trips_and_no_temporary_file_is_left(audit, report):
    assert json.loads(report["results"].read_text(encoding="utf-8")) == audit
    assert sorted(path.name for path in report["results"].parent.iterdir()) == [
        "audit-report.html",
        "audit-report.md",
        "audit.json",
    ]


def test_a_minimal_audit_writes_every_file_without_the_sections_it_has_no_data_for(tmp_path):
    audit = minimal_audit()
    paths = write_files_atomic(tmp_path / "new" / "dir", audit_report_files(copy.deepcopy(audit)))
    assert set(paths) == {"results", "markdown", "html"}
    assert all(path.is_file() and path.stat().st_size > 0 for path in paths.values())
    assert json.loads(paths["results"].read_text(encoding="utf-8")) == audit

    markdown = paths["markdown"].read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", markdown, flags=re.MULTILINE)
    assert headings == ["Verdict", "Benchmark and sample", "Scores", "Evidence completeness (discriminability)"]
    assert markdown_tables(markdown)["Scores"][0] == ["dimension", "mean", "95% CI", "n", "mean by baseline"]
    assert "Position check on" not in markdown and "no position check" in markdown
    assert "faithfulness" not in markdown and "Fleiss" not in markdown
    assert len(html_images(paths["html"].read_text(encoding="utf-8"))) == 2


# ---------------------------------------------------------------------------------------
# A real browser.


@pytest.fixture(scope="module")
def chromium() -> str:
    return chromium_or_skip()


@pytest.mark.slow
def test_chromium_renders_the_audit_report_with_every_image_loaded(chromium, report, tmp_path):
    loaded, total = loaded_images(chromium, report["html"], tmp_path)
    assert loaded == total == 2

    screenshot = take_screenshot(chromium, report["html"], tmp_path / "audit-report.png", (1280, 3200))
    assert screenshot.stat().st_size > 10_000
    assert png_size(screenshot.read_bytes()) == (1280, 3200)
    print(f"screenshot of audit-report.html: {screenshot}")


# ---------------------------------------------------------------------------------------
# Shortcuts.


def shortcut_summary() -> dict:
    """shortcuts.json of a benchmark whose questions copy their gold (evals/measures/shortcuts.py)."""
    return {
        "turns": 120,
        "lexical_overlap": {
            "mean": 0.91,
            "median": 1.0,
            "p90": 1.0,
            "histogram": {
                "edges": [round(0.1 * step, 1) for step in range(11)],
                "counts": [0, 0, 0, 0, 2, 3, 5, 10, 20, 80],
            },
        },
        "query_only": {"bm25": {"current": {"R@10": 0.97, "RR@10": 0.9}, "rewrite": {"R@10": 0.99, "RR@10": 0.95}}},
        "answer_leak_rate": 0.02,
        "history_gain": -0.01,
        "ill_formed": {
            "rate": 0.025,
            "count": 3,
            "examples": [
                {
                    "turn": "c0001_t0",
                    "question": "Is command on CLI?",
                    "reasons": ["fragment: 2 content words (a standalone question needs 3)"],
                },
                {
                    "turn": "c0002_t0",
                    "question": f"What does {ESCAPE_ATTEMPT} say › Install?",
                    "reasons": ["heading path"],
                },
            ],
        },
        "flags": ["lexically_trivial", "history_free"],
    }


def test_the_shortcuts_section_names_the_flags_figures_reference_and_ill_formed_examples(tmp_path):
    audit = full_audit()
    audit["shortcuts"] = shortcut_summary()
    files = write_files_atomic(tmp_path, audit_report_files(audit))
    markdown = files["markdown"].read_text(encoding="utf-8")
    shortcuts = section_text(markdown, "Shortcuts")
    assert "lexically\\_trivial: questions copy their gold" in shortcuts and "history\\_free" in shortcuts
    rows = {row[0]: row[1:] for row in markdown_tables(markdown)["Shortcuts"]}  # both of its tables
    assert rows["lexical overlap, mean"] == ["0.91", "0.58", "> 0.80: lexically\\_trivial"]
    assert rows["BM25 R@10, question alone"][:2] == ["0.97", "0.84"]
    assert rows["BM25 RR@10, rewrite alone"][0] == "0.95"
    assert rows["history gain (BM25 nDCG@10, full history − question alone)"][0] == "-0.01"
    assert rows["c0001\\_t0"][0] == "Is command on CLI?" and rows["c0002\\_t0"][1] == "heading path"
    assert markdown.index("## Shortcuts") < markdown.index("## Scores")
    page = files["html"].read_text(encoding="utf-8")
    assert ESCAPE_ATTEMPT not in page and "Is command on CLI?" in page
    images = html_images(page)
    assert len(images) == 3  # the overlap histograms beside the two of the full audit
    assert all(png_size(image)[0] > 200 for image in images)


def test_the_quality_gate_section_lists_a_frame_over_its_cap_with_its_questions_as_written(tmp_path):
    questions = {f"c{i:04d}_t0": f"What is the role of the {name}?" for i, name in enumerate("abcde")}
    questions |= {"c0005_t0": f"What is the role of {ESCAPE_ATTEMPT}?", "c0006_t0": "How do I open a cursor?"}
    audit = full_audit()
    audit["quality_gate"] = gate_summary({turn: GateVerdict(flags={}) for turn in questions}, questions, examples=6)
    files = write_files_atomic(tmp_path, audit_report_files(audit))
    markdown = files["markdown"].read_text(encoding="utf-8")
    gate = section_text(markdown, "Quality gate")
    assert "Question frames: 2 among 7 questions; the most used, 'what is role of …', holds 86%" in gate
    rows = [row for row in markdown_tables(markdown)["Quality gate"] if row[0] == "what is role of …"]
    assert [row[3] for row in rows] == [f"c{i:04d}\\_t0" for i in range(6)] and rows[0][1:3] == ["6", "85.7%"]
    page = files["html"].read_text(encoding="utf-8")
    assert ESCAPE_ATTEMPT not in page and "What is the role of the a?" in page
