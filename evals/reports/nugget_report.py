"""The report of a nugget benchmark build: ``nuggets-results.json`` for programs,
``nuggets-report.md`` and a self-contained ``nuggets-report.html`` for people, rendered from
one document model (evals/reports/document.py).

It says how many questions became benchmark questions and why the others were dropped, how
many nuggets the questions have and how many the pooled chunks support, how well each pooling
technique retrieves the judged chunks (the layout of FreshStack's Table 4: alpha-nDCG@10,
Coverage@20 and Recall@50 per technique and retriever, and for their fusion), and how the
retrievers compare on the questions themselves, as a user's system would ask them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchsmith.evals.measures.intervals import mean_interval
from benchsmith.evals.reports import document, figures

NUGGET_REPORT_FILES = document.ReportFileNames(
    results="nuggets-results.json", markdown="nuggets-report.md", html="nuggets-report.html"
)
TECHNIQUE_ROWS = (  # (key, label, setting), in the order of FreshStack's Table 4
    ("question", "question", "inference"),
    ("sub_questions", "sub-questions (model)", "inference"),
    ("closed_book_answer", "closed-book answer (model)", "inference"),
    ("fusion:inference", "fusion of the inference techniques", "inference"),
    ("answer", "accepted answer", "oracle"),
    ("nuggets", "nuggets", "oracle"),
    ("fusion:oracle", "fusion of the oracle techniques", "oracle"),
    ("fusion:all", "fusion of every technique", "both"),
)
RETRIEVER_LABELS = {"bm25": "BM25", "dense": "dense", "fused": "BM25 + dense"}
MEASURE_LABELS = {"alpha_nDCG@10": "α-nDCG@10", "Coverage@20": "Cov@20", "R@50": "R@50"}
EXCERPT_CHARS = 400


def nugget_report_files(results: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """``{kind: (file name, text)}`` for the kinds ``results``, ``markdown`` and ``html``."""
    return document.render_report(results, build_nugget_document(results), NUGGET_REPORT_FILES)


def build_nugget_document(results: Mapping[str, Any]) -> document.Document:
    sections = [
        summary_section(results),
        nugget_section(results),
        pooling_section(results),
        retriever_section(results),
        filtered_section(results),
    ]
    if results.get("examples"):
        sections.append(examples_section(results["examples"]))
    sections.append(files_section(results))
    return document.Document(f"Nugget benchmark: {results['benchmark']['name']}", sections)


def summary_section(results: Mapping[str, Any]) -> document.Section:
    questions, nuggets = results["questions"], results["nuggets"]
    heading = f"{questions['kept']:,} of {questions['imported']:,} questions kept"
    text = (
        f"{nuggets['total']:,} nuggets ({nuggets['per_question_mean']:.1f} per question), "
        f"{figures.percent(nuggets['support_rate'])} of them supported by at least one pooled chunk of the corpus "
        f"({results['benchmark']['documents']:,} chunks)."
    )
    best = best_technique(results["pooling"]["table"])
    if best:
        text += f" The inference technique that retrieves most of the nuggets is {best}."
    blocks: list[document.Block] = [document.Callout(heading, text), settings_summary(results)]
    return document.Section("Summary", blocks)


def settings_summary(results: Mapping[str, Any]) -> str:
    settings, benchmark = results["settings"], results["benchmark"]
    corpus = benchmark["corpus"]
    source = (
        f"collection {corpus['collection']}"
        if corpus.get("collection")
        else ", ".join(corpus.get("sources") or []) or document.MISSING
    )
    revisions = corpus.get("revisions") or {}
    at = "".join(f" ({path} at {revision[:12]})" for path, revision in revisions.items())
    tags = f", tags {', '.join(settings['tags'])}" if settings.get("tags") else ""
    return (
        f"Questions from {benchmark['questions_file']} ({benchmark['questions_format']}{tags}); corpus {source}{at}. "
        f"Model {settings['llm']}, embedder {settings['embedder']}, at most {settings['max_nuggets']} nuggets per "
        f"question, pool depth {settings['pool_depth']} per technique, {settings['fusion']} fusion, support "
        f"batches of {settings['batch_size']} chunks."
    )


def best_technique(table: Mapping[str, Mapping[str, Mapping[str, float]]]) -> str | None:
    """The inference technique whose fused run has the highest Coverage@20."""
    scored = [
        (values["fused"].get("Coverage@20", 0.0), label)
        for key, label, setting in TECHNIQUE_ROWS
        if setting == "inference" and not key.startswith("fusion") and (values := table.get(key))
    ]
    return max(scored)[1] if scored else None


def nugget_section(results: Mapping[str, Any]) -> document.Section:
    nuggets, questions = results["nuggets"], results["questions"]
    rows = [
        ("questions read", f"{questions['read']:,}"),
        ("questions imported (accepted answer, tags, limit)", f"{questions['imported']:,}"),
        ("questions kept", f"{questions['kept']:,}"),
        ("nuggets of the kept questions", f"{nuggets['total']:,}"),
        (
            "nuggets per question: mean (min–max)",
            f"{nuggets['per_question_mean']:.2f} ({nuggets['per_question_min']}–{nuggets['per_question_max']})",
        ),
        (
            "support rate (nuggets supported by a pooled chunk)",
            f"{figures.percent(nuggets['support_rate'])} ({nuggets['supported']:,} of {nuggets['total']:,})",
        ),
        ("supporting chunks per supported nugget (mean)", f"{nuggets['supporting_chunks_mean']:.2f}"),
        ("pooled chunks per question (mean)", f"{nuggets['pool_size_mean']:.1f}"),
        ("judged (nugget, chunk) pairs", f"{nuggets['judged_pairs']:,}"),
        ("support calls (one per question and batch)", f"{nuggets['support_calls']:,}"),
    ]
    return document.Section(
        "Nuggets and support",
        [
            "Nuggets are the atomic facts a complete answer needs, written from the accepted answer. Each question's "
            "pooled chunks were judged against every one of its nuggets.",
            document.Table(
                ["statistic", "value"],
                [[document.Cell(name), document.Cell(value, numeric=True)] for name, value in rows],
            ),
        ],
    )


def pooling_section(results: Mapping[str, Any]) -> document.Section:
    pooling = results["pooling"]
    measures, table = list(pooling["measures"]), pooling["table"]
    present = [(key, label, setting) for key, label, setting in TECHNIQUE_ROWS if key in table]
    best = {m: max(table[key][r][m] for key, _, _ in present for r in RETRIEVER_LABELS) for m in measures}
    rows = [
        [
            document.Cell(f"{label} · {RETRIEVER_LABELS[retriever]}"),
            document.Cell(setting),
            *(
                document.Cell(f"{table[key][retriever][m]:.3f}", bold=table[key][retriever][m] == best[m], numeric=True)
                for m in measures
            ),
        ]
        for key, label, setting in present
        for retriever in RETRIEVER_LABELS
    ]
    return document.Section(
        "Pooling results (FreshStack Table 4 layout)",
        [
            "How well each way of asking retrieves the chunks the judge found to support the nuggets, measured on the "
            "kept questions against the benchmark's own judgments. Inference techniques use only what a system has at "
            "question time; oracle techniques use the accepted answer. Each technique is retrieved by BM25 and the dense "
            "retriever, and the two are fused (BM25 + dense); the fusion rows fuse the runs of every technique of the "
            "setting. Best of each column in bold.",
            document.Table(["technique · retriever", "setting", *(MEASURE_LABELS.get(m, m) for m in measures)], rows),
            "α-nDCG@10 rewards covering new nuggets early (α = 0.5); Cov@20 is the share of a question's nuggets "
            "supported by one of the top 20 chunks; R@50 is the share of the supporting chunks in the top 50. The pool "
            "holds only what these runs retrieved, so the numbers favour them: compare techniques, not absolute levels.",
        ],
    )


def retriever_section(results: Mapping[str, Any]) -> document.Section:
    comparison = results["retriever_comparison"]
    per_query: Mapping[str, Mapping[str, Mapping[str, float]]] = comparison["per_query"]
    measures = list(results["pooling"]["measures"])
    intervals = {
        retriever: {m: mean_interval([values[m] for values in queries.values()]) for m in measures}
        for retriever, queries in per_query.items()
    }
    best = {m: max((iv[m].mean or 0.0) for iv in intervals.values()) for m in measures} if intervals else {}
    rows = [
        [
            document.Cell(RETRIEVER_LABELS.get(retriever, retriever)),
            *(
                cell
                for m in measures
                for cell in (
                    document.Cell(
                        figures.decimal(iv[m].mean, 3), bold=iv[m].mean == best[m] and len(intervals) > 1, numeric=True
                    ),
                    document.Cell(f"{figures.decimal(iv[m].low, 3)}–{figures.decimal(iv[m].high, 3)}", numeric=True),
                )
            ),
        ]
        for retriever, iv in intervals.items()
    ]
    columns = ["retriever", *(name for m in measures for name in (MEASURE_LABELS.get(m, m), "95% CI"))]
    blocks: list[document.Block] = [
        "The retrievers on the questions as asked (the inference setting's question technique): what a system built "
        "on this corpus would see. Means over the kept questions with Student's t 95% intervals.",
        document.Table(columns, rows) if rows else "No kept question to compare the retrievers on.",
    ]
    return document.Section("Retriever comparison", blocks)


def filtered_section(results: Mapping[str, Any]) -> document.Section:
    filtered = results.get("filtered") or []
    skipped = results["questions"].get("skipped_at_import") or []
    blocks: list[document.Block] = []
    if skipped:
        blocks.append(f"{len(skipped):,} question(s) were left out at import:")
        blocks.append(document.BulletList([f"{item['id']}: {item['reason']}" for item in skipped[:50]]))
    if not filtered:
        blocks.append("No question was dropped by the filters.")
        return document.Section("Filtered questions", blocks)
    counts: dict[str, int] = {}
    for item in filtered:
        counts[item["reason"]] = counts.get(item["reason"], 0) + 1
    blocks.append(document.BulletList([f"{count:,} dropped: {reason}" for reason, count in counts.items()]))
    for item in filtered:
        blocks += [
            document.Subheading(
                f"{item['id']}: {item['reason']} ({item['supported']} of {len(item['nuggets'])} nuggets supported)"
            ),
            _excerpt(item["question"]),
            document.BulletList(list(item["nuggets"])),
        ]
    return document.Section("Filtered questions", blocks)


def examples_section(examples: Sequence[Mapping[str, Any]]) -> document.Section:
    blocks: list[document.Block] = ["The first kept questions with their nuggets and the chunks that support each."]
    for example in examples:
        blocks += [
            document.Subheading(example["id"]),
            _excerpt(example["question"]),
            document.BulletList(
                [
                    f"{nugget['id']}: {nugget['text']} — supported by "
                    f"{', '.join(nugget['supported_by'][:5]) or 'no pooled chunk'}"
                    f"{' and more' if len(nugget['supported_by']) > 5 else ''}"
                    for nugget in example["nuggets"]
                ]
            ),
        ]
    return document.Section("Examples", blocks)


def files_section(results: Mapping[str, Any]) -> document.Section:
    files = results["files"]
    return document.Section(
        "Files",
        [
            document.BulletList(
                [
                    f"BEIR directory (corpus, queries, query-level qrels labelled with the number of nuggets a chunk supports): "
                    f"{files['beir']}",
                    f"Nuggets with their supporting and judged non-supporting chunks: {files['nuggets']}",
                    f"Nugget qrels (TREC, nugget id in the iteration column): {files['nugget_qrels']}",
                    f"Every technique's runs (TREC): {files['pooling_runs']}",
                    f"Score any run: benchsmith evaluate --run RUN.trec --nugget-qrels {files['nugget_qrels']} "
                    "--measure alpha_nDCG@10 --measure Coverage@20 --measure R@50",
                ]
            )
        ],
    )


def _excerpt(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS].rstrip() + " …"
