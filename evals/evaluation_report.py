"""The report of an evaluation: ``results.json`` for programs, ``report.md`` and a
self-contained ``report.html`` for people.

The report is first built as a document model (sections of paragraphs, tables, bullet lists
and plots); Markdown and HTML are two renderers of that one model, so both always show the
same numbers. Plots are drawn lazily, by the HTML renderer only.

Every measure is taken as higher-is-better (true of recall, nDCG, RR, AP and Judged@k), so
the best value of a column is its maximum.
"""

from __future__ import annotations

import base64
import html
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evals import plots

MISSING = "–"  # a value the results do not have (a configuration without that group)


# ---------------------------------------------------------------------------------------
# Document model.

@dataclass(frozen=True)
class Cell:
    text: str
    bold: bool = False
    numeric: bool = False  # right-aligned


@dataclass(frozen=True)
class Table:
    columns: list[str]
    rows: list[list[Cell]]


@dataclass(frozen=True)
class BulletList:
    items: list[str]


@dataclass(frozen=True)
class Plot:
    alt: str
    draw: Callable[[], bytes]  # PNG bytes


Block = str | Table | BulletList | Plot  # a str is a paragraph of plain text


@dataclass
class Section:
    heading: str
    blocks: list[Block] = field(default_factory=list)


@dataclass
class Document:
    title: str
    sections: list[Section]


# ---------------------------------------------------------------------------------------
# Writing.

def write_evaluation_report(results: dict[str, Any], directory: Path) -> dict[str, Path]:
    """Write ``results.json``, ``report.md`` and ``report.html`` into ``directory``; each
    atomically, so a reader never sees half a file. Returns their paths by kind."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    document = build_document(results)
    paths = {"results": directory / "results.json", "markdown": directory / "report.md",
             "html": directory / "report.html"}
    _write_atomically(paths["results"], json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    _write_atomically(paths["markdown"], render_markdown(document))
    _write_atomically(paths["html"], render_html(document))
    return paths


def _write_atomically(path: Path, text: str) -> None:
    # A sibling temporary file (opened normally, so the umask sets its mode as for any file),
    # then a rename: on one filesystem os.replace swaps the whole file in at once.
    temporary = path.with_name(path.name + ".tmp")
    with temporary.open("w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


# ---------------------------------------------------------------------------------------
# Building the document from the results.

def build_document(results: Mapping[str, Any]) -> Document:
    benchmark = results["benchmark"]
    names = [configuration["name"] for configuration in results["configurations"]]
    primary = results["primary_measure"]
    overview = Section("Overview", [benchmark_summary(benchmark), settings_summary(results.get("settings", {}))])
    main = Section("Main results", ["Mean over the judged queries; the best value of each column is in bold.",
                                    main_table(results)])
    recall_curve = _in_order(results.get("recall_curve") or {}, names)
    if recall_curve:
        main.blocks.append(Plot("Mean recall@k against the cutoff k, one line per configuration",
                                lambda: plots.recall_curves(recall_curve)))
    sections = [overview, main]
    for key, grouping, column_prefix in (("by_turn", "turn", "turn"), ("by_switch", "switch type", "")):
        by_group = _in_order(results.get(key) or {}, names)
        if by_group:
            sections.append(group_section(by_group, primary, grouping, column_prefix))
    significance = results.get("significance") or {}
    tested = {comparison["measure"] for comparison in significance.get("comparisons", [])}
    sections += [significance_section(significance, measure, names)
                 for measure in significance.get("measures", []) if measure in tested]
    sections.append(Section("Configurations", [configurations_table(results["configurations"])]))
    if results.get("notes"):
        sections.append(Section("Notes", [BulletList(list(results["notes"]))]))
    return Document(f"Retrieval evaluation: {benchmark['name']}", sections)


def benchmark_summary(benchmark: Mapping[str, Any]) -> str:
    kind = "conversational" if benchmark.get("conversational") else "single-turn"
    return (f"Benchmark {benchmark['name']} ({kind}): {benchmark['queries']:,} queries, "
            f"{benchmark.get('judged_queries', benchmark['queries']):,} of them judged; "
            f"{benchmark['documents']:,} documents; read from {benchmark.get('path', 'an unnamed path')}.")


def settings_summary(settings: Mapping[str, Any]) -> str:
    parts = [f"Retrievers: {', '.join(settings.get('retrievers', [])) or MISSING}",
             f"histories: {', '.join(settings.get('histories', [])) or MISSING}",
             f"retrieval depth {settings['depth']:,}" if "depth" in settings else "retrieval depth unknown"]
    if settings.get("rerank"):
        parts.append(f"reranked with {settings['rerank']} to depth {settings.get('rerank_depth', MISSING)}")
    else:
        parts.append("no reranking")
    return "; ".join(parts) + "."


def main_table(results: Mapping[str, Any]) -> Table:
    """Configurations × measures, means to 3 decimals, the best of each column in bold."""
    measures = list(results["measures"])
    aggregate = results["aggregate"]
    rows = [[aggregate.get(configuration["name"], {}).get(measure) for measure in measures]
            for configuration in results["configurations"]]
    return _score_table(["configuration", *measures], [c["name"] for c in results["configurations"]], rows)


def group_section(by_group: plots.ByGroup, measure: str, grouping: str, column_prefix: str) -> Section:
    """A table and a bar chart of ``measure`` per group, e.g. nDCG@10 by turn."""
    title = f"{measure} by {grouping}"
    return Section(title, [
        f"Mean {measure} over the queries of each {grouping} (n: its queries); the best of each column in bold.",
        group_table(by_group, measure, column_prefix),
        Plot(f"Bar chart of mean {measure} by {grouping}, one bar per configuration",
             lambda: plots.group_bars(by_group, measure, title)),
    ])


def group_table(by_group: plots.ByGroup, measure: str, column_prefix: str = "") -> Table:
    """Configurations × groups of ``measure``; headers carry the group's query count."""
    groups = plots.ordered_groups(by_group)
    columns = [f"{column_prefix} {group}".strip() + f" (n={plots.group_query_count(by_group, group)})"
               for group in groups]
    rows = [[by_group[name].get(group, {}).get(measure) for group in groups] for name in by_group]
    return _score_table(["configuration", *columns], list(by_group), rows)


def significance_section(significance: Mapping[str, Any], measure: str, names: Sequence[str]) -> Section:
    comparisons = [c for c in significance["comparisons"] if c["measure"] == measure]
    compared = {name for c in comparisons for name in (c["first"], c["second"])}
    return Section(f"Significance of {measure} differences", [
        f"Test: {significance['description'].rstrip('.')}.",
        Plot(f"Heat map of the mean {measure} difference between every pair of configurations, "
             "significant differences starred",
             lambda: plots.significance_matrix(comparisons, [n for n in names if n in compared], measure)),
        significance_table(comparisons),  # after the heat map, which reads better when the pairs are many
    ])


def significance_table(comparisons: Sequence[Mapping[str, Any]]) -> Table:
    rows = [[Cell(f"{c['first']} vs {c['second']}"),
             Cell(f"{c['mean_difference']:+.3f}", numeric=True),
             Cell(_format_p(c["p_value"]), numeric=True),
             Cell(_format_p(c["p_adjusted"]), numeric=True),
             Cell("yes" if c["significant"] else "no", bold=bool(c["significant"]))]
            for c in comparisons]
    return Table(["pair (first vs second)", "mean difference (first − second)", "p", "corrected p", "significant"],
                 rows)


def configurations_table(configurations: Sequence[Mapping[str, Any]]) -> Table:
    rows = [[Cell(c["name"]), Cell(str(c.get("retriever", MISSING))), Cell(str(c.get("history", MISSING))),
             Cell("yes" if c.get("rerank") else "no"),
             Cell(f"{c['seconds']:.1f}" if c.get("seconds") is not None else MISSING, numeric=True),
             Cell(str(c.get("run_file", MISSING)))]
            for c in configurations]
    return Table(["configuration", "retriever", "history", "reranked", "seconds", "run file"], rows)


def _score_table(columns: list[str], names: list[str], values: list[list[float | None]]) -> Table:
    """Rows of ``names`` then one value per column, the best of each column bold.

    Best is judged on the values as shown (3 decimals): two values that print the same are
    both bold, rather than one winning on a difference the reader cannot see.
    """
    shown = [[None if value is None else round(value, 3) for value in row] for row in values]
    best = [max((row[column] for row in shown if row[column] is not None), default=None)
            for column in range(len(columns) - 1)]
    rows = [[Cell(name), *(_score_cell(value, top) for value, top in zip(row, best))]
            for name, row in zip(names, shown)]
    return Table(columns, rows)


def _score_cell(value: float | None, best: float | None) -> Cell:
    if value is None:
        return Cell(MISSING, numeric=True)
    return Cell(f"{value:.3f}", bold=value == best, numeric=True)


def _format_p(p: float) -> str:
    return "<0.0001" if p < 0.0001 else f"{p:.4f}"


def _in_order(by_configuration: Mapping[str, Any], names: Sequence[str]) -> dict[str, Any]:
    """The entries of the configurations in display order; configurations without one are left out."""
    return {name: by_configuration[name] for name in names if by_configuration.get(name)}


# ---------------------------------------------------------------------------------------
# Markdown.

# Escaped everywhere: emphasis, code, links and table cell delimiters. "<" only where it could
# open raw HTML or an autolink, and "#", ">" only where they could open a heading or a quote,
# so that ordinary text such as "p < 0.05" stays readable in the raw file.
MARKDOWN_INLINE = re.compile(r"([\\`*_\[\]|]|<(?=[A-Za-z/!?]))")
MARKDOWN_BLOCK_START = re.compile(r"^(\s*)([#>])")


def render_markdown(document: Document) -> str:
    lines = [f"# {_markdown_text(document.title)}", ""]
    for section in document.sections:
        lines += [f"## {_markdown_text(section.heading)}", ""]
        for block in section.blocks:
            if isinstance(block, Plot):
                continue  # images live in report.html only, so the Markdown stays one file
            lines += [*_markdown_block(block), ""]
    if any(isinstance(block, Plot) for section in document.sections for block in section.blocks):
        lines.append("The plots are in report.html.")
    return "\n".join(lines).rstrip("\n") + "\n"


def _markdown_block(block: Block) -> list[str]:
    if isinstance(block, str):
        return [_markdown_text(block, block_start=True)]
    if isinstance(block, BulletList):
        return [f"- {_markdown_text(item, block_start=True)}" for item in block.items]
    return _markdown_table(block)


def _markdown_table(table: Table) -> list[str]:
    numeric = _numeric_columns(table)
    header = "| " + " | ".join(_markdown_text(column) for column in table.columns) + " |"
    rule = "|" + "|".join("---:" if is_numeric else "---" for is_numeric in numeric) + "|"
    rows = ["| " + " | ".join(_markdown_cell(cell) for cell in row) + " |" for row in table.rows]
    return [header, rule, *rows]


def _markdown_cell(cell: Cell) -> str:
    text = _markdown_text(cell.text)
    return f"**{text}**" if cell.bold else text


def _markdown_text(text: str, block_start: bool = False) -> str:
    """``text`` shown literally: configuration names and notes may hold Markdown or HTML."""
    escaped = MARKDOWN_INLINE.sub(r"\\\1", str(text)).replace("\n", " ")
    return MARKDOWN_BLOCK_START.sub(r"\1\\\2", escaped) if block_start else escaped


# ---------------------------------------------------------------------------------------
# HTML.

STYLE = """
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2328; margin: 0;
       background: #f6f8fa; }
main { max-width: 1200px; margin: 0 auto; padding: 24px 32px 48px; background: #fff; }
h1 { font-size: 1.7em; border-bottom: 1px solid #d0d7de; padding-bottom: 8px; }
h2 { font-size: 1.3em; margin-top: 2em; border-bottom: 1px solid #eaeef2; padding-bottom: 4px; }
.table-scroll { overflow-x: auto; margin: 12px 0; }
table { border-collapse: collapse; font-size: 0.9em; font-variant-numeric: tabular-nums; }
th, td { padding: 4px 10px; border: 1px solid #d0d7de; white-space: nowrap; }
th { background: #f6f8fa; text-align: left; }
th[scope="row"] { background: none; font-weight: normal; }
td.num, th.num { text-align: right; }
tbody tr:nth-child(even) { background: #fafbfc; }
td strong { color: #0b5394; }
figure { margin: 16px 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #eaeef2; }
figcaption { font-size: 0.85em; color: #57606a; }
"""


def render_html(document: Document) -> str:
    body = [f"<h1>{html.escape(document.title)}</h1>"]
    for section in document.sections:
        body.append(f"<section>\n<h2>{html.escape(section.heading)}</h2>")
        body += [_html_block(block) for block in section.blocks]
        body.append("</section>")
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{html.escape(document.title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n"
            + "\n".join(body) + "\n</main>\n</body>\n</html>\n")


def _html_block(block: Block) -> str:
    if isinstance(block, str):
        return f"<p>{html.escape(block)}</p>"
    if isinstance(block, BulletList):
        return "<ul>\n" + "\n".join(f"<li>{html.escape(item)}</li>" for item in block.items) + "\n</ul>"
    if isinstance(block, Plot):
        source = "data:image/png;base64," + base64.b64encode(block.draw()).decode("ascii")
        return (f"<figure><img src=\"{source}\" alt=\"{html.escape(block.alt)}\">"
                f"<figcaption>{html.escape(block.alt)}</figcaption></figure>")
    return _html_table(block)


def _html_table(table: Table) -> str:
    numeric = _numeric_columns(table)
    header = "".join(f"<th scope=\"col\"{_num_class(is_numeric)}>{html.escape(column)}</th>"
                     for column, is_numeric in zip(table.columns, numeric))
    # The first cell names the row (a configuration, a pair): a row header for screen readers.
    rows = "\n".join(f"<tr><th scope=\"row\">{html.escape(row[0].text)}</th>"
                     + "".join(_html_cell(cell) for cell in row[1:]) + "</tr>" for row in table.rows)
    return (f"<div class=\"table-scroll\"><table>\n<thead><tr>{header}</tr></thead>\n<tbody>\n{rows}\n</tbody>\n"
            "</table></div>")


def _html_cell(cell: Cell) -> str:
    text = html.escape(cell.text)
    if cell.bold:
        text = f"<strong>{text}</strong>"
    return f"<td{_num_class(cell.numeric)}>{text}</td>"


def _num_class(numeric: bool) -> str:
    return ' class="num"' if numeric else ""


def _numeric_columns(table: Table) -> list[bool]:
    """A column is right-aligned when every one of its cells is a number."""
    return [bool(table.rows) and all(row[index].numeric for row in table.rows) for index in range(len(table.columns))]
