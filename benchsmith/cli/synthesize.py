"""``benchsmith synthesize``: a multi-turn conversational retrieval benchmark from a collection."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Annotated, Any

import typer

from benchsmith.cli.console import (
    Table,
    class_counts,
    console,
    guarded,
    print_paths,
    print_usage,
    print_warnings,
    shown,
)
from benchsmith.cli.deferred import deferred
from benchsmith.cli.job_command import run_job_command
from benchsmith.cli.settings import RunOptions, settings_options
from benchsmith.evals.defaults import MIN_RANKING_QUERIES
from benchsmith.graphs.contexts.synthesize import SynthesisContext, turn_type_rates
from benchsmith.graphs.runtime.bounds import MAX_CONVERSATIONS, MAX_TURNS
from benchsmith.jobs.defaults import SYNTHESIS_CONVERSATIONS, SYNTHESIS_TURNS

if TYPE_CHECKING:
    from benchsmith.jobs.synthesize import SynthesisResult

# The jobs load when the command runs (benchsmith/cli/deferred.py): --help and start-up stay free of models,
# Chroma, torch and scipy. Result types are for annotations only.
cost_per_conversation = deferred("benchsmith.evals.measures.benchmark_stats", "cost_per_conversation")
run_synthesis = deferred("benchsmith.jobs.synthesize", "synthesize")
estimate_synthesis = deferred("benchsmith.jobs.synthesize", "estimate_synthesis")


@settings_options(SynthesisContext)
def synthesize(
    collection: Annotated[str, typer.Option(help="The ingested collection the conversations walk through.")],
    conversations: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=MAX_CONVERSATIONS,
            show_default=False,
            help=f"Conversations to synthesize (one cluster each). [default: {SYNTHESIS_CONVERSATIONS}, or one per "
            "cluster of a collection with fewer]",
        ),
    ] = None,
    turns: Annotated[int, typer.Option(min=1, max=MAX_TURNS, help="Turns per conversation.")] = SYNTHESIS_TURNS,
    *,
    settings: dict[str, Any],
    run_options: RunOptions,
) -> None:
    """Synthesize a multi-turn conversational retrieval benchmark from an ingested collection.

    Writes dialogues.jsonl, a BEIR export (beir/), TREC qrels and stats.json into the run
    directory. With --llm baseline it runs offline (extractive agents, no key).
    """
    rates = rates_line(guarded(lambda: turn_type_rates(SynthesisContext(**settings))), settings["rates"])
    arguments = {"conversations": conversations, "turns": turns, **settings}
    run_job_command(
        "synthesize",
        run_options,
        run=run_synthesis,
        arguments={"collection": collection, **arguments},
        estimate=estimate_synthesis,
        summary=print_synthesis_statistics,
        about=f" · {conversations or f'up to {SYNTHESIS_CONVERSATIONS}'} conversations × {turns} turns · "
        f"{shown(settings['llm'])} · "
        f"concurrency {settings['concurrency']}"
        + (f" · on Ray at {shown(settings['ray'])}" if settings["ray"] else ""),
        notes=[rates],
    )


def rates_line(rates: dict[str, Any], preset: str | None) -> str:
    """The turn-type rates and question-type mix a run draws from, in one line."""
    kinds = {
        "unanswerable": rates["unanswerable_rate"],
        "partial": rates["partial_rate"],
        "underspecified": rates["underspecified_rate"],
        "multi-gold": rates["multi_gold_rate"],
    }
    drawn = ", ".join(f"{kind} {share:.0%}" for kind, share in kinds.items() if share)
    answerable = f"answerable {1 - sum(kinds.values()):.0%}" + (f", {drawn}" if drawn else "")
    mix = rates["question_types"] or "not asked for (each question labelled by its wording)"
    source = f"--rates {preset}" if preset else "the rates given; --rates demo for the demo's"
    return f"turn types: {answerable} · question types: {mix} ({source})"


def similarity_rows(similarity: dict[str, Any]) -> list[tuple[str, str]]:
    """Similarity of each switch's gold to the previous gold, beside random pairs of chunks."""
    rows = []
    for switch in ("soft", "hard"):
        summary = similarity.get(switch, {})
        if summary.get("count"):
            rows.append(
                (
                    f"{switch} switches: similarity mean (min–max)",
                    f"{summary['mean']:.2f} ({summary['min']:.2f}–{summary['max']:.2f})",
                )
            )
    if pairs := similarity.get("random_pairs"):
        threshold = similarity.get("soft_switch_threshold")
        rows.append(
            (
                "random pairs: mean ± sd (soft needs >)",
                f"{pairs['mean']:.2f} ± {pairs['std']:.2f}" + (f" ({threshold:.2f})" if threshold is not None else ""),
            )
        )
    return rows


def overlap_rows(stats: dict[str, Any]) -> list[tuple[str, str]]:
    """The questions' lexical overlap with their gold passages, and what bounding it took."""
    summary, rejections = stats.get("lexical_overlap") or {}, stats.get("overlap_rejections") or {}
    rows = []
    if summary.get("n"):
        rows.append(
            (
                "question–gold lexical overlap: mean / median / p90",
                f"{summary['mean']:.2f} / {summary['median']:.2f} / {summary['p90']:.2f}",
            )
        )
    if rejections:
        limit = rejections.get("max_overlap")
        rows.append(
            (
                f"overlap above {limit:.2f}: corrective turns / re-plans / kept flagged"
                if limit is not None
                else "overlap: corrective turns / re-plans / kept flagged",
                f"{rejections['corrective_turns']} / {rejections['replans']} / {rejections['kept_above_limit']}",
            )
        )
    return rows


def label_rows(labels: dict[str, Any]) -> list[tuple[str, str]]:
    """The turn labels' counts (stats.json's ``labels``), where the run drew typed turns."""
    kinds = labels.get("turn_types") or {}
    if set(kinds) <= {"answerable"}:
        return []
    dropped = labels.get("turn_types_dropped") or {}
    order = ("answerable", "unanswerable", "partial", "underspecified", "clarification", "multi-passage")
    return [
        ("turn types", " / ".join(f"{kind} {kinds[kind]}" for kind in order if kinds.get(kind))),
        ("held-out chunks", str(labels.get("held_out_chunks", 0))),
        (
            "typed turns dropped to answerable",
            ", ".join(f"{kind} {count}" for kind, count in sorted(dropped.items())),
        ),
        (
            "question types",
            " / ".join(
                f"{kind} {count}"
                for kind, count in sorted((labels.get("question_types") or {}).items(), key=lambda item: -item[1])
            ),
        ),
        (
            "standalone / not",
            f"{(labels.get('standalone') or {}).get('standalone', 0)} / "
            f"{(labels.get('standalone') or {}).get('non_standalone', 0)}",
        ),
    ]


def gate_rows(gate: dict[str, Any]) -> list[tuple[str, str]]:
    """The quality gate's counts per rubric class (stats.json's ``quality_gate``)."""
    if not gate or gate.get("mode") == "off":
        return []
    rows = [
        ("quality gate: questions refused, then re-asked or re-planned", class_counts(gate["refused"])),
        (
            "quality gate: turns kept / dropped",
            f"{gate['turns_kept']} kept / {gate['turns_dropped']} dropped ({class_counts(gate['dropped'])})",
        ),
    ]
    if gate.get("mode") == "flag":
        rows.append(("quality gate: kept turns flagged", class_counts(gate["flagged_kept"])))
    if model_flagged := gate.get("model_flagged"):
        rows.append(
            (
                "quality gate: turns the reading model flagged, replaced / kept",
                f"{model_flagged['replaced']} replaced / {model_flagged['kept']} kept ({class_counts(gate['flagged_kept'])})",
            )
        )
    return rows


DROPPED_WORTH_SAYING = 0.5  # a share of turns the gate dropped above which the summary says why and what to do


def gate_warning(gate: dict[str, Any]) -> str | None:
    """What a benchmark the quality gate mostly dropped means: its passages gave this questioner little a reader
    keeps (a tutorial of short pages with the offline agents: typer's kept 15 of 93), so the figures of the few
    turns left say little; a model writes other questions, and ``flag`` shows what was dropped."""
    if not gate or gate.get("mode") != "replan":
        return None
    kept, dropped = gate["turns_kept"], gate["turns_dropped"]
    if not dropped or dropped / (kept + dropped) <= DROPPED_WORTH_SAYING:
        return None
    by_count = dict(sorted(gate["dropped"].items(), key=lambda item: -item[1]))
    example = gate.get("examples", {}).get(next(iter(by_count), ""))
    return (
        f"the quality gate dropped {dropped} of {kept + dropped} turns ({class_counts(by_count)}"
        + (f"; e.g. {example!r}" if example else "")
        + f") and {kept} remain: the questioner finds little in these passages that a reader would keep; "
        "a model (--llm openai:<model>) asks other questions, --quality-gate flag keeps the turns with their flags"
    )


def size_warning(turns: int) -> str | None:
    """A benchmark too small to rank retrievers, which the audit will call unreliable whatever its turns."""
    if turns >= MIN_RANKING_QUERIES:
        return None
    return (
        f"the benchmark holds {turns} {'turn' if turns == 1 else 'turns'}, fewer than {MIN_RANKING_QUERIES}: too few "
        "to rank retrievers, and `benchsmith audit` calls it unreliable; ask for more (--conversations, --turns) "
        "or of more passages (--llm openai:<model>)"
    )


def spread_rows(spread: dict[str, Any]) -> list[tuple[str, str]]:
    """The most used frame of question and question type, their caps and the turns reworded to keep within
    them (stats.json's ``question_spread``)."""
    if not spread or not spread.get("questions"):
        return []

    def still_above(names: list[str]) -> str:
        return f"; still above: {', '.join(repr(shown(name)) for name in names)}" if names else ""

    return [
        (
            "most used question frame (cap), reworded",
            f"'{shown(spread['top_frame'])}' {spread['top_share']:.0%} ({spread['cap']:.0%}), "
            f"{spread['reframed']}{still_above(spread['above_cap'])}",
        ),
        (
            "most used question type (cap), reworded",
            f"{shown(spread['top_type'])} {spread['top_type_share']:.0%} ({spread['type_cap']:.0%}), "
            f"{spread['retyped']}{still_above(spread['types_above_cap'])}",
        ),
    ]


REPEATS_WORTH_SAYING = 0.2  # a share of turns repeating other conversations' above which the summary says what to do


def repeat_rows(repeats: dict[str, Any]) -> list[tuple[str, str]]:
    """Turns that repeat another conversation's (stats.json's ``repeated_turns``)."""
    if not repeats:
        return []
    return [
        (
            "turns repeating another conversation's",
            f"{repeats['repeated']} of {repeats['turns']} asked "
            f"({repeats['share']:.0%}); {repeats['distinct_conversations']} conversations mostly their own",
        ),
        ("turns cut: conversations end before a repeat", repeats.get("cut", 0)),
    ]


def repeat_warning(repeats: dict[str, Any], conversations: int) -> str | None:
    """What to do when many conversations repeat each other: the collection has few chunks to ask about."""
    if not repeats or repeats["share"] <= REPEATS_WORTH_SAYING or not repeats["mostly_repeated_conversations"]:
        return None
    mostly = len(repeats["mostly_repeated_conversations"])
    return (
        f"{mostly} of {conversations} conversations mostly asked turns of earlier ones ({repeats['share']:.0%} "
        f"of the turns asked) and end before their first repeat: the collection has few chunks to ask about; "
        f"--conversations {repeats['distinct_conversations']} gives about as many distinct turns"
    )


def print_synthesis_statistics(result: SynthesisResult) -> None:
    stats = result.stats
    cost = cost_per_conversation(dataclasses.asdict(result.usage), stats["conversations"])
    switches = stats["switches"]
    table = Table(title=f"Benchmark statistics · run {shown(result.run_id)}")
    table.add_column("statistic")
    table.add_column("value", justify="right")
    rows = [
        ("conversations", stats["conversations"]),
        ("turns", stats["turns"]),
        ("turns per conversation", stats["turns_per_conversation"]),
        ("tokens per question", stats["tokens_per_question"]),
        ("tokens per answer", stats["tokens_per_answer"]),
        ("topics per conversation", stats["topics_per_conversation"]),
        ("switches: follow-up / soft / hard", f"{switches['follow-up']} / {switches['soft']} / {switches['hard']}"),
        *similarity_rows(stats.get("similarity", {})),
        *overlap_rows(stats),
        ("polisher rejections", f"{stats['polisher_rejections']} of {stats['polished_turns']}"),
        *label_rows(stats.get("labels") or {}),
        *spread_rows(stats.get("question_spread") or {}),
        *gate_rows(stats.get("quality_gate") or {}),
        *repeat_rows(stats.get("repeated_turns") or {}),
        ("model calls per conversation", cost["model_calls"]),
        ("model tokens per conversation", cost["tokens"]),
        ("cost per conversation", f"${cost['cost_usd']:.4f}"),
    ]
    for label, value in rows:
        table.add_row(label, str(value))
    console.print(table)
    warnings = [
        size_warning(stats["turns"]),
        gate_warning(stats.get("quality_gate") or {}),
        repeat_warning(stats.get("repeated_turns") or {}, stats["conversations"]),
    ]
    print_warnings([warning for warning in warnings if warning])
    print_paths(
        {
            "dialogues": result.files["dialogues"],
            "BEIR": result.files["beir"],
            "TREC qrels": result.files["qrels"],
            "statistics": result.files["stats"],
        }
    )
    print_usage(result.usage)
