"""The report of a validation run: ``validity.json``, ``validity-report.md`` and a
self-contained ``validity-report.html``, from one document model (evals/reports/document.py).

It leads with the verdict in words, then the configurations' scores and ranks on both sets,
Kendall's τ-b with its bootstrap interval, a scatter plot of the two scores, each judge's
agreement with the human labels, and, when the human labels named chunks the benchmark holds
out, which label rows and questions were dropped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from matplotlib.figure import Figure

from benchsmith.evals.reports import plots
from benchsmith.evals.reports.document import (
    MISSING,
    BulletList,
    Callout,
    Cell,
    Document,
    Plot,
    ReportFileNames,
    Section,
    Table,
    render_report,
)

VALIDITY_FILES = ReportFileNames(results="validity.json", markdown="validity-report.md", html="validity-report.html")


def validity_report_files(results: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return render_report(results, build_validity_document(results), VALIDITY_FILES)


def build_validity_document(results: Mapping[str, Any]) -> Document:
    sections = [summary_section(results), configurations_section(results), separability_section(results)]
    if results.get("judge_agreement"):
        sections.append(judges_section(results))
    if _dropped(results.get("held_out") or {}):
        sections.append(held_out_section(results["held_out"]))
    sections.append(Section("Notes", [BulletList(list(results.get("notes", [])))]))
    return Document(f"Validity: {results['synthetic']['name']} against {results['human']['name']}", sections)


def summary_section(results: Mapping[str, Any]) -> Section:
    verdict = results["verdict"]
    interval = results["interval"]
    tau = results["kendall_tau_b"]
    text = (
        f"Kendall's τ-b between the {len(results['configurations'])} configurations' {results['measure']} on "
        f"your {results['human']['queries']} labelled questions and on the synthetic benchmark's "
        f"{results['synthetic']['queries']} queries is {_value(tau, signed=True)} (95% bootstrap interval "
        f"{_value(interval['low'], signed=True)} to {_value(interval['high'], signed=True)}, "
        f"{results['bootstrap']} resamples of the queries of both sets; p = {_value(results['p_value'])} for "
        "τ = 0). τ = 1: the same order; 0: unrelated; −1: reversed. With few configurations one swap "
        "moves τ a lot."
    )
    label = verdict["label"]
    return Section("Verdict", [Callout(label[:1].upper() + label[1:], verdict["text"]), text])


def configurations_section(results: Mapping[str, Any]) -> Section:
    """Each configuration as it ran on each set (its history mode may differ), its scores and ranks."""
    rows = [
        [
            Cell(row["human_configuration"]),
            Cell(_value(row["human"]), numeric=True),
            Cell(str(row["human_rank"]), numeric=True),
            Cell(row["name"]),
            Cell(_value(row["synthetic"]), numeric=True),
            Cell(str(row["synthetic_rank"]), numeric=True),
        ]
        for row in sorted(results["configurations"], key=lambda row: (row["human_rank"], row["name"]))
    ]
    measure = results["measure"]
    table = Table(["on your questions", measure, "rank", "on the synthetic benchmark", measure, "rank"], rows)
    plot = Plot(
        f"{measure} on your questions (x) against the synthetic benchmark (y), one numbered point per configuration",
        lambda: scatter_png(results["configurations"], measure),
    )
    return Section("Configurations", [table, plot])


def separability_section(results: Mapping[str, Any]) -> Section:
    """Each pair compared on the human set: its mean difference, the interval, separated or not."""
    separability = results["separability"]
    pairs = separability["pairs"]
    apart = [pair for pair in pairs if not pair["separated"]]
    queries = separability["queries"]
    text = (
        f"Not separated by your {queries} questions: "
        + "; ".join(f"{pair['first']} and {pair['second']} ({pair['ranking']})" for pair in apart)
        + "."
        if apart
        else f"Your {queries} questions separate every pair compared."
        if pairs
        else "No pair to compare."
    )
    rows = [
        [
            Cell(f"{pair['first']} − {pair['second']}"),
            Cell(pair["ranking"]),
            Cell(_value(pair["difference"], signed=True), numeric=True),
            Cell(f"{_value(pair['low'], signed=True)} to {_value(pair['high'], signed=True)}", numeric=True),
            Cell("yes" if pair["separated"] else "no"),
        ]
        for pair in pairs
    ]
    explained = (
        f"For each adjacent pair of the ranking on your questions (yours i–i+1) and the synthetic "
        f"benchmark's top two, the mean over your questions of the difference of {results['measure']}, "
        f"with a {separability['confidence']:.0%} paired bootstrap interval ({separability['resamples']} "
        "resamples of your questions); an interval that contains 0 cannot tell which is better."
    )
    return Section(
        "Can your questions separate the configurations?",
        [text, explained, Table(["pair", "ranking", "difference", "interval", "separated"], rows)],
    )


def judges_section(results: Mapping[str, Any]) -> Section:
    sample = results.get("judge_sample", {})
    rows = []
    for judge, values in results["judge_agreement"].items():
        confusion = values["confusion"]
        rows.append(
            [
                Cell(judge),
                Cell(str(values["pairs"]), numeric=True),
                Cell(_value(values["agreement"]), numeric=True),
                Cell(_value(values["cohen_kappa"]), numeric=True),
                Cell(_value(values["krippendorff_alpha"]), numeric=True),
                *(
                    Cell(str(confusion[human][judged]), numeric=True)
                    for human in ("relevant", "not relevant")
                    for judged in ("relevant", "not relevant")
                ),
            ]
        )
    table = Table(
        [
            "judge",
            "pairs",
            "agreement",
            "Cohen's κ",
            "Krippendorff's α",
            "gold judged relevant",
            "gold judged not",
            "non-gold judged relevant",
            "non-gold judged not",
        ],
        rows,
    )
    text = (
        f"Each judge labelled the {sample.get('gold', 0)} gold (question, chunk) pairs of your questions and "
        f"{sample.get('non_gold', 0)} non-gold pairs drawn (seed {sample.get('seed', 0)}) from the top "
        f"{sample.get('depth', MISSING)} results of the evaluated configurations, as relevant or not. κ and α: "
        "1 agrees with your labels on every pair, 0 no better than chance."
    )
    return Section("Judges against your labels", [text, table])


def validity_notes(results: Mapping[str, Any]) -> list[str]:
    """How the figures of ``results`` (validity.json without its notes) were computed, in sentences."""
    synthetic_histories, human_histories = results["synthetic"]["histories"], results["human"]["histories"]
    separability = results["separability"]
    notes = [
        f"Each configuration is scored by {results['measure']}, the mean over the judged queries of each set; ranks "
        "are competition ranks (1 = best; equal scores share a rank).",
        f"History on the synthetic set: {', '.join(synthetic_histories)}; on your questions: "
        f"{', '.join(human_histories)}"
        + (
            " (standalone questions: every mode but oracle sends the question itself)."
            if human_histories != synthetic_histories
            else "."
        ),
        f"The interval of τ-b is a percentile bootstrap ({results['bootstrap']} resamples, seed {results['seed']}): "
        "each resample draws the queries of each set with replacement, recomputes every configuration's mean on "
        "both and τ-b between them. It covers the sampling of queries, not the choice of configurations.",
        "The p-value is scipy.stats.kendalltau's test of τ = 0 (exact for few configurations without ties).",
        "A pair of configurations is separated by your questions when the paired percentile bootstrap interval of "
        f"their mean per-query difference on them ({separability['resamples']} resamples of your "
        f"{separability['queries']} questions, seed {separability['seed']}) excludes 0 (evals/measures/separability.py; "
        "Sakai, 2006). Each pair is tested alone, with no correction for the number of pairs.",
    ]
    runs = results["settings"].get("runs")
    if runs:
        notes.append(
            "Run files rank the queries of both sets; each set measures its own queries (the evaluations "
            "warn about the other set's query ids in them)."
        )
    if _dropped(results.get("held_out") or {}):
        as_given = " Run files are measured as given: a held-out chunk they rank counts as not relevant."
        notes.append(held_out_note(results["held_out"]) + (as_given if runs else ""))
    return notes


def held_out_note(held_out: Mapping[str, Any]) -> str:
    """What the human set lost to the benchmark's held-out chunks, in one sentence."""
    rows, left_out, documents = (
        held_out.get("rows") or [],
        held_out.get("questions_left_out") or [],
        held_out.get("documents", 0),
    )
    text = (
        f"Your labels were made over the collection the benchmark was synthesized from, whose corpus holds out "
        f"{held_out.get('benchmark_chunks', 0):,} chunks (those its unanswerable and partial turns ask about, and "
        "their near-duplicates); both sets were measured without them: no retriever sees them, "
        f"{len(rows):,} label row(s) naming {len(held_out.get('chunks') or {}):,} of them were dropped, and "
        f"{len(left_out):,} question(s) that lost all their gold were left out"
    )
    if documents:
        text += f"; your corpus held {documents:,} of them, left out of it"
    return text + " (see Held-out chunks)."


def held_out_section(held_out: Mapping[str, Any]) -> Section:
    """The held-out chunks the labels name, the label rows dropped and the questions left out."""
    chunks = held_out.get("chunks") or {}
    blocks: list[Any] = [held_out_note(held_out).removesuffix(" (see Held-out chunks).") + "."]
    if chunks:
        blocks.append(
            f"Held-out chunks your labels name ({len(chunks)}): "
            + ", ".join(
                chunk_id if of == chunk_id else f"{chunk_id} (a near-duplicate of {of})"
                for chunk_id, of in chunks.items()
            )
        )
        blocks.append(
            Table(
                ["question", "chunk", "held out as"],
                [
                    [
                        Cell(row["question_id"]),
                        Cell(row["chunk_id"]),
                        Cell(
                            "a held-out chunk"
                            if chunks.get(row["chunk_id"]) == row["chunk_id"]
                            else f"a near-duplicate of {chunks.get(row['chunk_id'])}"
                        ),
                    ]
                    for row in held_out.get("rows") or []
                ],
            )
        )
    left_out = held_out.get("questions_left_out") or []
    blocks.append(
        f"Questions left out, every gold chunk of theirs held out ({len(left_out)}): {', '.join(left_out)}."
        if left_out
        else "No question lost all its gold."
    )
    return Section("Held-out chunks", blocks)


def _dropped(held_out: Mapping[str, Any]) -> bool:
    return bool(held_out.get("rows") or held_out.get("documents"))


def scatter_png(configurations: Sequence[Mapping[str, Any]], measure: str) -> bytes:
    return plots.figure_png(scatter_figure(configurations, measure))


def scatter_figure(configurations: Sequence[Mapping[str, Any]], measure: str) -> Figure:
    """Human (x) against synthetic (y) score per configuration: each point numbered, the number
    placed where it covers no other number and no marker (plots.annotate_apart), the numbers'
    configurations in a legend beside the plot. Configurations with the same two scores share a
    point, numbered with all their numbers."""
    figure = Figure(figsize=(7.5, 6), layout="constrained")
    axes = figure.add_subplot()
    at_point: dict[tuple[float, float], list[int]] = {}
    for number, row in enumerate(configurations, start=1):
        at_point.setdefault((round(row["human"], 6), round(row["synthetic"], 6)), []).append(number)
    handle_of: dict[int, Any] = {}
    for index, ((x, y), numbers) in enumerate(at_point.items()):
        handle = axes.scatter([x], [y], color=f"C{index % 10}", marker=plots.MARKERS[index % len(plots.MARKERS)], s=40)
        handle_of.update((number, handle) for number in numbers)
    handles = [handle_of[number] for number in range(1, len(configurations) + 1)]
    labels = [f"{number}  {plots.literal_text(_label(row))}" for number, row in enumerate(configurations, start=1)]
    diagonal = _equal_scores_axes(axes, [row[key] for row in configurations for key in ("human", "synthetic")], measure)
    plots.legend_outside(figure, [*handles, diagonal], [*labels, "equal scores"])
    plots.annotate_apart(axes, list(at_point), [",".join(map(str, numbers)) for numbers in at_point.values()])
    return figure


def _equal_scores_axes(axes: Any, values: Sequence[float], measure: str) -> Any:
    """Both axes over the scores' range, the line of equal scores (returned, for the legend), labels."""
    low, high = min(values, default=0.0), max(values, default=1.0)
    margin = (high - low) * 0.1 or 0.05
    (diagonal,) = axes.plot(
        [low - margin, high + margin], [low - margin, high + margin], color="#999999", linewidth=0.8, linestyle="--"
    )
    axes.set_xlim(low - margin, high + margin)
    axes.set_ylim(low - margin, high + margin)
    axes.set_xlabel(f"{measure} on your labelled questions")
    axes.set_ylabel(f"{measure} on the synthetic benchmark")
    axes.set_title("Configurations on both sets")
    axes.grid(True, alpha=0.3)
    return diagonal


def _label(row: Mapping[str, Any]) -> str:
    return str(row.get("label") or row["name"])


def _value(value: float | None, signed: bool = False) -> str:
    if value is None:
        return MISSING
    return f"{value:+.3f}" if signed else f"{value:.3f}"
