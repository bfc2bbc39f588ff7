"""What the audit says of a synthesized benchmark's review (`benchsmith review`): the offline
quality gate's agreement with the reviewer on the turns both read, and the review page the
report's turn ids link to."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchsmith.evals.quality_gate.reader_agreement import reader_agreement
from benchsmith.stores.formats.benchmark_files import run_dialogues_file
from benchsmith.stores.persistence.jsonl import load_jsonl
from benchsmith.stores.persistence.reviews import latest_review
from benchsmith.stores.persistence.workspace import Workspace


def review_summary(workspace: Workspace, benchmark_directory: Path, gate_turns: Path) -> dict[str, Any] | None:
    """None for a benchmark that is not a synthesis run's export (only those are reviewed); else
    ``{"synthesis_run", "review_run", "reviewers", "reviewed", "agreement"}``, the last four None or
    empty when the run has no review in ``workspace``. ``agreement`` (evals/quality_gate/reader_agreement.py)
    pairs the newest review's verdicts with the gate's flags of this audit (``gate_turns``:
    ``quality_gate_turns.jsonl``) on the turns both read; a rejection is "broken"."""
    if run_dialogues_file(benchmark_directory) is None:
        return None
    synthesis_run = benchmark_directory.parent.name
    review = latest_review(workspace, synthesis_run)
    if review is None:
        return {"synthesis_run": synthesis_run, "review_run": None, "reviewers": [], "reviewed": 0, "agreement": None}
    flagged = {record["turn"]: bool(record["flags"]) for record in load_jsonl(gate_turns)}
    pairs = [
        (verdict.verdict == "reject", flagged[turn])
        for turn, verdict in sorted(review.verdicts.items())
        if turn in flagged
    ]
    return {
        "synthesis_run": synthesis_run,
        "review_run": review.run_id,
        "reviewers": sorted({verdict.reviewer for verdict in review.verdicts.values()}),
        "reviewed": len(review.verdicts),
        "agreement": reader_agreement(pairs),
    }
