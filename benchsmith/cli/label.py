"""``benchsmith label QUESTIONS --collection C``: label your own questions in the browser over
pooled passages; ``benchsmith review RUN``: accept, reject or edit a synthesized benchmark's turns.

Commands with no graph, so no context to derive options from (benchsmith/cli/settings.py): their
options are declared here, with the API's names."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from benchsmith.cli.console import ChromaHostOption, WorkspaceOption, console, guarded, shown
from benchsmith.cli.deferred import deferred
from benchsmith.graphs.runtime.bounds import MAX_POOL_DEPTH, PORT_BOUNDS, SEED_BOUNDS

run_label = deferred("benchsmith.jobs.label", "label")

HostOption = Annotated[
    str,
    typer.Option(
        "--host",
        help="The address to listen on. Another than loopback (127.0.0.1) lets other machines reach the "
        "page: an access token is then printed with the address and required on every request.",
    ),
]
PortOption = Annotated[
    int, typer.Option("--port", min=0, max=PORT_BOUNDS["max"], help="The port to listen on (0: any free port).")
]
ServeOption = Annotated[
    bool, typer.Option("--serve/--no-serve", help="--no-serve: write the exports of the work saved so far and stop.")
]
RunIdOption = Annotated[
    str | None, typer.Option("--run-id", help="The run to resume (the page opens where it stopped), or a new run's id.")
]


def print_address(address: object) -> None:
    console.print(
        f"open [cyan]{shown(getattr(address, 'url', address))}[/] in a browser; Ctrl-C stops the server "
        "and writes the export (every judgment is saved as it is made)",
        highlight=False,
        soft_wrap=True,
    )


def page_arguments(
    host: str, port: int, serve: bool, run_id: str | None, workspace: str | None, chroma_host: str | None
) -> dict[str, Any]:
    """The page's options (label's and review's) as their job functions take them, the address
    printed when the page is up."""
    return {
        "host": host,
        "port": port,
        "serve_page": serve,
        "on_ready": print_address,
        "run_id": run_id,
        "workspace": workspace,
        "chroma_host": chroma_host,
    }


def label(
    questions: Annotated[
        Path | None,
        typer.Argument(
            help="Your questions: a text file (one a line), a JSONL file, or BEIR queries.jsonl (or its folder). "
            "Not needed to resume a run (--run-id)."
        ),
    ] = None,
    collection: Annotated[
        str | None, typer.Option("--collection", help="The ingested collection whose passages you label.")
    ] = None,
    retriever: Annotated[
        list[str] | None,
        typer.Option(
            "--retriever",
            help="A configuration whose top --depth passages join each question's pool (repeat it); "
            "default bm25, dense and hybrid:rrf(dense,bm25).",
        ),
    ] = None,
    depth: Annotated[
        int, typer.Option("--depth", min=1, max=MAX_POOL_DEPTH, help="Each configuration's top k in the pool.")
    ] = 10,
    assessor: Annotated[
        str,
        typer.Option(
            "--assessor",
            help="Who labels. The run's first assessor labels every pair; another labels a sample "
            "(--second-sample) for Cohen's κ between the two.",
        ),
    ] = "assessor",
    second_sample: Annotated[
        float, typer.Option("--second-sample", help="The share of the pairs a second assessor labels.")
    ] = 0.15,
    seed: Annotated[int, typer.Option("--seed", **SEED_BOUNDS, help="Seeds the order passages are shown in.")] = 0,
    host: HostOption = "127.0.0.1",
    port: PortOption = 8765,
    serve: ServeOption = True,
    run_id: RunIdOption = None,
    workspace: WorkspaceOption = None,
    chroma_host: ChromaHostOption = None,
) -> None:
    """Label your own questions in the browser: per question a pool of passages (BM25, dense, hybrid), graded 0-3.

    Keys: 0-3 grade, j/k (or the arrows) next and back, s skip, n note, o whole chunk. No model
    verdict is shown. Every judgment is saved as it is made: stop the server at any time, and
    the same --run-id opens where you stopped. Writes a BEIR folder (corpus, queries, qrels) that
    `benchsmith validate BENCHMARK --human FOLDER` reads.
    """
    result = guarded(
        lambda: run_label(
            questions,
            collection=collection,
            retrievers=retriever,
            depth=depth,
            assessor=assessor,
            second_sample=second_sample,
            seed=seed,
            **page_arguments(host, port, serve, run_id, workspace, chroma_host),
        )
    )
    mean = f"{result.mean_seconds:.1f} s per judgment" if result.mean_seconds is not None else "no judgment yet"
    console.print(
        f"run [cyan]{shown(result.run_id)}[/]: {result.judged:,} of {result.pairs:,} pairs judged by "
        f"{shown(result.assessor)} ({result.relevant:,} relevant) over {result.questions_judged:,} of "
        f"{result.questions:,} questions; {mean}",
        highlight=False,
        soft_wrap=True,
    )
    for agreement in result.agreements:
        kappa = "undefined" if agreement.cohen_kappa is None else f"{agreement.cohen_kappa:.3f}"
        console.print(
            f"Cohen's κ between {shown(agreement.assessor)} and {shown(agreement.other)}: {kappa} "
            f"over {agreement.pairs:,} pairs",
            highlight=False,
            soft_wrap=True,
        )
    console.print(
        f"BEIR folder for `benchsmith validate BENCHMARK --human`: {shown(result.beir)}",
        highlight=False,
        soft_wrap=True,
    )
