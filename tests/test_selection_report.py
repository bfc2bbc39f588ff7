"""The selection report as its readers meet it: a copyable configuration file, configuration
names taken literally in Markdown and HTML, and one inline plot."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

from benchsmith.evals.reports.document import Code, Document, Section, render_html, render_markdown
from tests.select_fixtures import run_select, write_labelled_corpus


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def test_code_blocks_are_fenced_beyond_any_backticks_inside_and_escaped_in_html():
    document = Document("t", [Section("s", [Code("retriever: [bm25]\nnote: ``` <b>not bold</b>")])])
    markdown = render_markdown(document)
    assert "````\nretriever: [bm25]\nnote: ``` <b>not bold</b>\n````" in markdown
    assert "<pre><code>retriever: [bm25]\nnote: ``` &lt;b&gt;not bold&lt;/b&gt;</code></pre>" in render_html(document)


def test_report_of_a_search_with_filters_in_its_names(tmp_path):
    corpus, queries, qrels_file = write_labelled_corpus(tmp_path / "data")
    result = run_select(
        tmp_path / "ws",
        queries,
        corpus,
        "report",
        judges=[f"qrels:{qrels_file}"],
        min_votes=1,
        retrievers=["bm25"],
        filters=["none", "doc_id^bike & chars<200"],
        top_k=[2, 3],
    )
    assert any("filter(doc_id^bike&chars<200)" in name for name in result.ranking)
    page = result.report["html"].read_text(encoding="utf-8")
    parser = Tags()
    parser.feed(page)
    images = [attrs for tag, attrs in parser.tags if tag == "img"]
    assert len(images) == 1 and images[0]["src"].startswith("data:image/png;base64,")
    assert not [tag for tag, _ in parser.tags if tag in ("script", "link", "iframe")]
    assert "filter(doc_id^bike&amp;chars&lt;200)" in page
    markdown = result.report["markdown"].read_text(encoding="utf-8")
    assert not re.search(r"(?<!\\)<[A-Za-z/]", markdown)
    selection = json.loads(result.report["results"].read_text(encoding="utf-8"))
    assert selection["ranking"] == result.ranking and len(selection["configurations"]) == 4
    for configuration in selection["configurations"]:
        assert set(configuration["f_beta"]) == {"0.5", "1", "2"}
        assert configuration["recall_at_k"]
        assert all(0 <= value <= 1 for value in configuration["recall_at_k"].values())
    assert "resampled_pr_auc" not in json.dumps(selection)
