"""The results of a replay (graphs/replay.py) and their report: per-turn retrieval measures of
the passages the assistant used, how it handled turns without gold, means per switch type and per
turn label, and the worst conversations whole."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from benchsmith.evals.measures.replies import abstained, asked_back
from benchsmith.evals.measures.standard import Qrels, evaluate_run, parse_measures
from benchsmith.evals.reports.document import (
    BulletList,
    Callout,
    Cell,
    Document,
    Quote,
    ReportFileNames,
    Section,
    Subheading,
    Table,
    render_report,
)

REPLAY_FILES = ReportFileNames(results="results.json", markdown="report.md", html="report.html")
NO_GOLD = ("unanswerable", "underspecified")


def score_turns(
    conversations: Sequence[Mapping[str, Any]], qrels: Qrels, measures: Sequence[str]
) -> list[dict[str, Any]]:
    """Every replayed turn with its measures (turns with judgments) and, on turns without gold,
    whether the reply abstained or asked back; conversations and turns in order."""
    turns = [turn for conversation in conversations for turn in conversation["turns"]]
    run = {turn["id"]: {doc_id: score for doc_id, score in turn["passages"]} for turn in turns}
    judged = {turn_id: qrels[turn_id] for turn_id in run if turn_id in qrels}
    scored = evaluate_run(parse_measures(list(measures)), judged, run) if judged else None
    values = (
        {query_id: dict(zip(scored.measures, row)) for query_id, row in zip(scored.query_ids, scored.values.tolist())}
        if scored
        else {}
    )
    out = []
    for turn in turns:
        row = {**turn, "measures": values.get(turn["id"])}
        if turn.get("answerability") in NO_GOLD:
            row["abstained"], row["asked_back"] = abstained(turn["reply"]), asked_back(turn["reply"])
        out.append(row)
    return out


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _means(rows: Sequence[Mapping[str, Any]], measures: Sequence[str]) -> dict[str, float]:
    measured = [row["measures"] for row in rows if row["measures"] is not None]
    return {m: sum(v[m] for v in measured) / len(measured) for m in measures} if measured else {}


def replay_results(
    conversations: Sequence[Mapping[str, Any]],
    qrels: Qrels,
    measures: Sequence[str],
    worst: int,
    about: Mapping[str, Any],
) -> dict[str, Any]:
    """results.json: the aggregate, per switch type and turn label, turns without gold, the worst conversations."""
    names = [str(m) for m in parse_measures(list(measures))]
    turns = score_turns(conversations, qrels, names)
    by_switch: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    by_label: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    by_type: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for turn in turns:
        by_switch[turn.get("switch") or "none"].append(turn)
        by_label[turn.get("answerability") or "unlabelled"].append(turn)
        by_type[turn.get("question_type") or "unlabelled"].append(turn)
    no_gold = [turn for turn in turns if "abstained" in turn]
    primary = names[0] if names else None
    conversation_scores = []
    for conversation in conversations:
        rows = [turn for turn in turns if turn["conversation"] == conversation["_id"]]
        means = _means(rows, names)
        if primary and primary in means:
            conversation_scores.append((means[primary], conversation["_id"]))
    worst_ids = [cid for _, cid in sorted(conversation_scores)[:worst]]
    verdicts = [verdict for turn in turns for verdict in (turn.get("judged") or {}).values()]
    return {
        **about,
        "measures": names,
        "primary_measure": primary,
        "conversations": len(conversations),
        "turns": len(turns),
        "aggregate": _means(turns, names),
        "by_switch": {name: {**_means(rows, names), "turns": len(rows)} for name, rows in sorted(by_switch.items())},
        "by_label": {name: {**_means(rows, names), "turns": len(rows)} for name, rows in sorted(by_label.items())},
        "by_question_type": {
            name: {**_means(rows, names), "turns": len(rows)} for name, rows in sorted(by_type.items())
        },
        "without_gold": {
            "turns": len(no_gold),
            "abstained": sum(turn["abstained"] for turn in no_gold),
            "asked_back": sum(turn["asked_back"] for turn in no_gold),
            "handled": sum(turn["abstained"] or turn["asked_back"] for turn in no_gold),
        },
        "answers": {
            aspect: _mean([verdict[aspect] for verdict in verdicts if verdict.get(aspect) is not None])
            for aspect in ("faithfulness", "quality", "agreement")
        },
        # 0-1, apart from the 1-5 ratings; None where the benchmark has no nuggets for the turns replayed.
        "nugget_coverage": _mean(
            [verdict["nugget_coverage"] for verdict in verdicts if verdict.get("nugget_coverage") is not None]
        ),
        "unmapped": sorted({doc_id for turn in turns for doc_id in turn["unmapped"]}),
        "worst": [{"conversation": cid, "turns": [t for t in turns if t["conversation"] == cid]} for cid in worst_ids],
        "per_turn": {turn["id"]: turn["measures"] for turn in turns if turn["measures"] is not None},
    }


def _group_table(groups: Mapping[str, Mapping[str, Any]], names: Sequence[str], label: str) -> Table:
    return Table(
        [label, "turns", *names],
        [
            [Cell(group), Cell(str(values["turns"]), numeric=True)]
            + [Cell(f"{values[m]:.4f}" if m in values else "–", numeric=True) for m in names]
            for group, values in groups.items()
        ],
    )


def replay_report_files(results: Mapping[str, Any]) -> dict[str, tuple[str, str]]:
    names = results["measures"]
    aggregate = results["aggregate"]
    without = results["without_gold"]
    headline = ", ".join(f"{m} {aggregate[m]:.4f}" for m in names if m in aggregate) or "no judged turns"
    overview: list[Any] = [
        Callout(
            f"Assistant {results['assistant']}",
            f"{headline} over {results['turns']} turns of {results['conversations']} conversations.",
        ),
        BulletList(
            [
                f"Benchmark: {results['benchmark']}",
                f"Turns without gold (unanswerable, underspecified): {without['turns']}; abstained {without['abstained']}, "
                f"asked back {without['asked_back']}, answered anyway {without['turns'] - without['handled']}",
                "Replies judged (1-5, mean over turns and judges): "
                + ", ".join(
                    f"{aspect} {value:.2f}" if value is not None else f"{aspect} –"
                    for aspect, value in results["answers"].items()
                ),
                *(
                    [
                        "Nugget coverage of the replies (share of each turn's nuggets a reply states, mean over "
                        f"turns and judges): {results['nugget_coverage']:.2f}"
                    ]
                    if results.get("nugget_coverage") is not None
                    else []
                ),
                f"Passages the corpus does not hold: {len(results['unmapped'])}"
                + (f" ({', '.join(results['unmapped'][:10])})" if results["unmapped"] else ""),
            ]
        ),
    ]
    sections = [
        Section("Overview", overview),
        Section("Per switch type", [_group_table(results["by_switch"], names, "switch")]),
        Section(
            "Per turn label",
            [
                _group_table(results["by_label"], names, "answerability"),
                _group_table(results["by_question_type"], names, "question type"),
            ],
        ),
    ]
    worst_blocks: list[Any] = []
    for conversation in results["worst"]:
        worst_blocks.append(Subheading(f"Conversation {conversation['conversation']}"))
        lines = []
        for turn in conversation["turns"]:
            score = turn["measures"][names[0]] if turn["measures"] else None
            lines += [
                f"User ({turn.get('switch') or '-'}, {turn.get('answerability') or '-'}): {turn['question']}",
                f"Assistant: {turn['reply']}",
                f"  passages: {', '.join(doc for doc, _ in turn['passages'][:5]) or 'none'}"
                + (f" · {names[0]} {score:.4f}" if score is not None else ""),
            ]
        worst_blocks.append(Quote("\n".join(lines)))
    if worst_blocks:
        sections.append(Section("Worst conversations", worst_blocks))
    return render_report(results, Document(f"Replay of {results['benchmark_name']}", sections), REPLAY_FILES)
