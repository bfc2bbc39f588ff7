"""``benchsmith cluster``: the collection's semantic path, cut into clusters."""

from __future__ import annotations

from typing import Annotated

import typer

from benchsmith.cli.console import ChromaHostOption, Table, WorkspaceOption, console, guarded, shown
from benchsmith.cli.deferred import deferred
from benchsmith.cli.settings import option_of
from benchsmith.graphs.contexts.synthesize import SynthesisContext
from benchsmith.graphs.runtime.bounds import MAX_CLUSTER_SIZE, MAX_NEIGHBOURS, SEED_BOUNDS
from benchsmith.tools.defaults import DEFAULT_CLUSTER_NEIGHBOURS, DEFAULT_CLUSTER_SIZE
from benchsmith.tools.offline import offline_environment

# The jobs load when the command runs (benchsmith/cli/deferred.py): --help and start-up stay free of models,
# Chroma, torch and scipy.
run_cluster = deferred("benchsmith.jobs.synthesize", "cluster")


def cluster(
    collection: Annotated[str, typer.Option(help="The ingested collection to cluster.")],
    size: Annotated[
        int,
        typer.Option(
            min=1, max=MAX_CLUSTER_SIZE, help="Chunks per cluster: the semantic path is cut every SIZE chunks."
        ),
    ] = DEFAULT_CLUSTER_SIZE,
    neighbours: Annotated[
        int, typer.Option(min=1, max=MAX_NEIGHBOURS, help="Neighbours per chunk in the k-nearest-neighbour graph.")
    ] = DEFAULT_CLUSTER_NEIGHBOURS,
    seed: Annotated[int, typer.Option(**SEED_BOUNDS, help="Seed of the walk's random start.")] = 0,
    page_kinds: option_of(SynthesisContext, "page_kinds") = None,  # type: ignore[valid-type]
    chroma_host: ChromaHostOption = None,
    workspace: WorkspaceOption = None,
    ray: Annotated[
        str | None,
        typer.Option(
            help="Build the nearest-neighbour graph in blocks as Ray tasks on this cluster ('local', 'auto', "
            "HOST:PORT or ray://HOST:PORT; needs `pip install 'benchsmith[ray]'`); the walk stays here, one "
            "path, and the clusters are the ones built in one process."
        ),
    ] = None,
) -> None:
    """Walk the collection's embeddings in one continuous semantic path and cut it into clusters.

    `benchsmith synthesize` does this itself when needed; run it alone to see how coherent the
    path is (the mean similarity of consecutive chunks against a random order).
    """
    offline_environment()
    with console.status(f"clustering {shown(collection)} (greedy traversal, size {size}, {neighbours} neighbours)…"):
        kinds = {"page_kinds": tuple(page_kinds)} if page_kinds else {}  # none given: synthesis's default
        result = guarded(
            lambda: run_cluster(
                collection,
                size=size,
                neighbours=neighbours,
                seed=seed,
                workspace=workspace,
                chroma_host=chroma_host,
                ray=ray,
                **kinds,
            )
        )
    stats = result.stats
    table = Table(title=f"Clusters of {shown(collection)}")
    table.add_column("measure")
    table.add_column("value", justify="right")
    for label, value in (
        ("chunks", stats["chunks"]),
        ("page kinds", ", ".join(result.page_kinds or ["all"])),
        ("clusters", stats["clusters"]),
        ("dropped (near-identical to predecessor)", stats["dropped_near_identical"]),
        ("searches for the nearest unvisited chunk", stats["searches"]),
        ("mean similarity of consecutive chunks", stats["path_similarity"]),
        ("… in a random order", stats["random_order_similarity"]),
        ("seconds", stats["seconds"]),
    ):
        table.add_row(label, str(value))
    console.print(table)
