"""The report of a paraphrase run: ``paraphrase.json`` for programs, ``paraphrase-report.md``
and a self-contained ``paraphrase-report.html`` for people, from one document model.

It says how many turns got variants (and which imported rows matched no turn), how diverse
the variants are (corpus BLEU against the phrasing they vary, ECAsT's Table 9 measure), what
the filters dropped, some examples, and where the test sets R1..Rn are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchsmith.evals.reports import paraphrase_plots
from benchsmith.evals.reports.document import (
    MISSING,
    Block,
    BulletList,
    Callout,
    Cell,
    Document,
    Plot,
    Quote,
    ReportFileNames,
    Section,
    Subheading,
    Table,
    render_report,
)

PARAPHRASE_FILES = ReportFileNames(
    results="paraphrase.json", markdown="paraphrase-report.md", html="paraphrase-report.html"
)
BLEU_COLUMNS = (
    ("bleu_self_contained", "BLEU self-contained"),
    ("bleu_raw", "BLEU raw"),
    ("bleu_rewrite_vs_raw", "BLEU rewrite vs raw"),
)
UNJOINED_SHOWN = 15


def paraphrase_report_files(results: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """``paraphrase.json``, ``paraphrase-report.md`` and ``paraphrase-report.html``."""
    return render_report(results, build_paraphrase_document(results), PARAPHRASE_FILES)


def build_paraphrase_document(results: Mapping[str, Any]) -> Document:
    figures = results["diversity"]
    sections = [summary_section(results), diversity_section(figures)]
    if results["filters"]["generated"]:
        sections.append(filters_section(results["filters"]))
    if figures["unjoined"]:
        sections.append(unjoined_section(figures["unjoined"], results.get("unjoined_turns") or {}))
    if results.get("examples"):
        sections.append(examples_section(results["examples"]))
    sections.append(test_sets_section(results["test_sets"]))
    sections.append(Section("Notes", [BulletList(list(results.get("notes") or []))]))
    return Document(f"Paraphrases: {results['benchmark']['name']}", sections)


def summary_section(results: Mapping[str, Any]) -> Section:
    figures, benchmark, settings = results["diversity"], results["benchmark"], results["settings"]
    heading = (
        f"{figures['paraphrases']:,} variants for {figures['turns_with_paraphrases']:,} of {figures['turns']:,} turns"
    )
    text = (
        f"Self-contained variants have a corpus BLEU of {_bleu(figures['bleu_self_contained'])} against their "
        f"turn's self-contained form, raw variants {_bleu(figures['bleu_raw'])} against the raw utterance "
        f"(the benchmark's own rewrites score {_bleu(figures['bleu_rewrite_vs_raw'])} against its raw "
        "utterances). Lower is more diverse."
    )
    sources = []
    if settings.get("import_ecast"):
        sources.append(f"imported from {settings['import_ecast']}")
    if settings.get("per_turn"):
        sources.append(f"{settings['per_turn']} generated per turn by {settings['llm']}")
    blocks: list[Block] = [
        Callout(heading, text),
        f"Benchmark {benchmark['name']} ({'conversational' if benchmark['conversational'] else 'single-turn'}): "
        f"{benchmark['turns']:,} turns, {benchmark['judged_turns']:,} with relevance judgments; read from "
        f"{', '.join(map(str, benchmark['inputs']))}. Variants: {'; '.join(sources) or MISSING}.",
    ]
    return Section("Summary", blocks)


def diversity_section(figures: Mapping[str, Any]) -> Section:
    groups = {"all kept variants": figures}
    for key, label in (
        ("generated_before_filtering", "generated, before filtering"),
        ("generated_after_filtering", "generated, after filtering"),
    ):
        if key in figures:
            groups[label] = figures[key]
    rows = [
        [
            Cell(label),
            Cell(f"{group['paraphrases']:,}", numeric=True),
            *(Cell(_bleu(group.get(key)), numeric=True) for key, _ in BLEU_COLUMNS),
        ]
        for label, group in groups.items()
    ]
    return Section(
        "Diversity (corpus BLEU)",
        [
            "Corpus BLEU (sacrebleu defaults, 0-100) of the variants against the phrasing they vary, as ECAsT "
            "measures it: 100 means the variants repeat it word for word, lower means more diverse. The last column is "
            "the benchmark's own distance between its self-contained and its raw turns, for scale.",
            Table(["variants", "count", *(label for _, label in BLEU_COLUMNS)], rows),
            Plot(
                "Grouped bars of the three corpus-BLEU figures for each group of variants",
                lambda: paraphrase_plots.bleu_bars(
                    {label: {key: group.get(key) for key, _ in BLEU_COLUMNS} for label, group in groups.items()}
                ),
            ),
        ],
    )


def filters_section(filters: Mapping[str, Any]) -> Section:
    dropped = dict(filters["dropped"])
    rows = [
        [Cell("kept"), Cell(f"{filters['kept']:,}", numeric=True)],
        *([Cell(f"dropped: {reason}"), Cell(f"{count:,}", numeric=True)] for reason, count in dropped.items()),
    ]
    return Section(
        "Filters",
        [
            f"{filters['generated']:,} variants were generated; each was checked against its source and the variants "
            "kept before it.",
            Table(["outcome", "variants"], rows),
            Plot(
                "Horizontal bars of the generated variants kept and dropped by each filter",
                lambda: paraphrase_plots.filter_outcomes(filters["kept"], dropped),
            ),
        ],
    )


def unjoined_section(unjoined: int, turns: Mapping[str, int]) -> Section:
    shown = list(turns.items())[:UNJOINED_SHOWN]
    blocks: list[Block] = [
        f"{unjoined:,} imported rows name {len(turns):,} turns the benchmark does not have; they are listed in "
        "unjoined.jsonl and left out of every figure (ECAsT.csv also covers topics a benchmark of fewer files lacks, such as CAsT 2019's training topics).",
        Table(["turn", "rows"], [[Cell(turn), Cell(f"{count:,}", numeric=True)] for turn, count in shown]),
    ]
    if len(turns) > len(shown):
        blocks.append(f"… and {len(turns) - len(shown):,} more turns.")
    return Section("Imported rows without a turn", blocks)


def examples_section(examples: list[Mapping[str, Any]]) -> Section:
    blocks: list[Block] = [
        "The first turns with variants: the original, then each variant's self-contained and raw forms."
    ]
    for example in examples:
        original = f"raw: {example['raw']}\nself-contained: {example.get('self_contained') or MISSING}"
        variants = "\n".join(
            f"{number}. {variant['self_contained']}\n   raw: {variant['raw']} ({variant['origin']})"
            for number, variant in enumerate(example["variants"], start=1)
        )
        blocks += [Subheading(f"Turn {example['turn']}"), Quote(original), Quote(variants)]
    return Section("Examples", blocks)


def test_sets_section(test_sets: Mapping[str, Mapping[str, Any]]) -> Section:
    rows = [
        [Cell(name), Cell(f"{info['varied_turns']:,}", numeric=True), Cell(str(info["directory"]))]
        for name, info in test_sets.items()
    ]
    return Section(
        "Test sets",
        [
            "Each test set replaces every turn by one of its variants (drawn with the seed; different variants in "
            "different sets where a turn has enough). Evaluate on them with `benchsmith robustness RUN`, or run your "
            "own system on their raw.tsv / self-contained.tsv and give the run files to `benchsmith robustness RUN "
            "--run original=FILE --run R1=FILE ...`.",
            Table(["test set", "turns varied", "directory"], rows),
        ],
    )


def _bleu(value: float | None) -> str:
    return MISSING if value is None else f"{value:.2f}"
