"""The setting that sends a job's work items to a Ray cluster (``--ray ADDRESS``), declared once
for every job that fans out over items (docs/design.md rule 11). Light: Ray itself loads only
when a run asks for it (graphs/runtime/ray_items.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

LOCAL_RAY, AUTO_RAY = "local", "auto"


@dataclass(kw_only=True)
class RayOptions:
    """Where a job's work items run: in this process, or as Ray tasks on a cluster."""

    ray: str | None = field(
        default=None,
        metadata={
            "description": "Run each work item (a conversation, an audit instance, a turn to paraphrase, a hardneg document, "
            "a nuggets question or support batch, a select judging batch, an evaluated configuration's block of queries) as a Ray task: 'local' starts Ray on this machine, "
            "'auto' joins the cluster `ray start` began here (or $RAY_ADDRESS), HOST:PORT or ray://HOST:PORT "
            "joins that cluster. Checkpoints, the run's files, usage ledger and record stay with this "
            "process, so the files are the bytes one process writes; nodes need the workspace at the same "
            "path (or --database and --chroma-host) and their own model endpoint and key in their "
            "environment. Needs `pip install 'benchsmith[ray]'`. Empty: items run in this process.",
            "recorded": False,
        },
    )
