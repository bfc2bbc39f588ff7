"""Synthesis rate with 1, 2 and 4 worker processes sharing one run through PostgreSQL.

Everything is local and real: a PostgreSQL server (Debian's, started in a temporary
directory), a Chroma server (`chroma run`) holding the collection, and the loopback
OpenAI-compatible model server in a process of its own answering every call after
``--latency`` seconds. For each worker count N, N processes run the same
``benchsmith synthesize --llm openai:sim --database … --run-id workers-N`` (each in its own
workspace, as on N machines; the first registers the run, the others join it) and share its
conversations.

The rate is measured where all N workers are at work: from the latest first claim of any
worker to the earliest last result of any worker (PostgreSQL's claimed_at and done_at), so
process start-up (imports, clustering) is left out. With C conversations in flight per
worker and K model calls per conversation the ideal is N × C × 60 / (K × latency)
conversations per minute; the printed ratio against N = 1 should grow close to N until the
machine or the server is the limit (on this 2-core machine the N client processes, the model
server and PostgreSQL share two cores).

    .venv/bin/python benchmarks/workers.py [--workers 1 2 4] [--concurrency 4] [--latency 0.2]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchsmith.tools.offline import offline_environment  # noqa: E402

offline_environment()  # before the imports below load models or Chroma

from benchmarks.synthesize import model_server  # noqa: E402
from benchsmith.stores.persistence.postgres import connection  # noqa: E402
from benchsmith.stores.persistence.workspace import Workspace  # noqa: E402
from tests.local_servers import free_port, local_server  # noqa: E402
from tests.postgres_server import running_postgres  # noqa: E402
from tests.test_shared_runs import ingest, write_corpus  # noqa: E402

TURNS = 4
CLUSTER_SIZE = 4


def measured_window(url: str, run_id: str) -> tuple[int, float, dict[str, int], int]:
    """``(conversations done inside the window, window seconds, conversations per worker, model
    calls of the run)``."""
    with connection(url) as handle:
        rows = handle.execute(
            "SELECT worker, extract(epoch FROM claimed_at), extract(epoch FROM done_at) "
            "FROM benchsmith_items WHERE run_id = %s AND status = 'done'",
            (run_id,),
        ).fetchall()
        calls = handle.execute(
            "SELECT count(*) FROM benchsmith_usage WHERE run_id = %s AND "
            "NOT coalesce((call->>'cached')::boolean, false)",
            (run_id,),
        ).fetchone()[0]
    by_worker: dict[str, list[tuple[float, float]]] = {}
    for worker, claimed, done in rows:
        by_worker.setdefault(worker, []).append((float(claimed), float(done)))
    start = max(min(claimed for claimed, _ in items) for items in by_worker.values())
    end = min(max(done for _, done in items) for items in by_worker.values())
    inside = sum(start <= done <= end for items in by_worker.values() for _, done in items)
    return inside, end - start, {worker: len(items) for worker, items in by_worker.items()}, calls


def run_workers(
    count: int, conversations: int, concurrency: int, url: str, chroma_host: str, base_url: str, directory: Path
) -> None:
    """``count`` processes of the same command on one shared run, until it is done."""
    run_id = f"workers-{count}"
    environment = {
        **os.environ,
        "OPENAI_API_KEY": "sk-benchmark",
        "OPENAI_BASE_URL": base_url,
        "BENCHSMITH_DATABASE_URL": url,
    }
    command = [
        sys.executable,
        "-m",
        "benchsmith.cli",
        "synthesize",
        "--collection",
        "docs",
        "--conversations",
        str(conversations),
        "--turns",
        str(TURNS),
        "--llm",
        "openai:sim",
        "--cluster-size",
        str(CLUSTER_SIZE),
        "--concurrency",
        str(concurrency),
        "--chroma-host",
        chroma_host,
        "--seed",
        str(count),
        "--run-id",
        run_id,
    ]  # a seed per run: no run finds another's replies cached
    processes = []
    for number in range(count):
        processes.append(
            subprocess.Popen(
                [*command, "-w", str(directory / f"{run_id}-{number}")],
                cwd=ROOT,
                env=environment,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    for process in processes:
        _, error = process.communicate(timeout=1800)
        if process.returncode != 0:
            raise SystemExit(f"a worker failed: {error[-2000:]}")


@contextlib.contextmanager
def chroma_server(directory: Path) -> Iterator[str]:
    chroma = shutil.which("chroma", path=str(Path(sys.executable).parent))
    if chroma is None:
        raise SystemExit("the chroma command is not installed")
    port = free_port()
    with local_server(
        [chroma, "run", "--path", str(directory), "--host", "127.0.0.1", "--port", str(port)], "/api/v2/heartbeat", port
    ):
        yield f"127.0.0.1:{port}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--concurrency", type=int, default=4, help="conversations in flight per worker")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per model call")
    parser.add_argument(
        "--rounds",
        type=int,
        default=6,
        help="conversations per slot: each run has rounds × workers × concurrency conversations",
    )
    args = parser.parse_args()
    largest = max(args.workers) * args.concurrency * args.rounds

    with (
        tempfile.TemporaryDirectory() as temporary,
        running_postgres() as url,
        chroma_server(Path(temporary) / "chroma") as chroma_host,
        model_server(args.latency) as (base_url, _),
    ):
        directory = Path(temporary)
        corpus = write_corpus(directory / "corpus", documents=CLUSTER_SIZE * largest + 40)
        ingest(Workspace.resolve(directory / "loader"), corpus, chroma_host)
        print(
            f"latency {args.latency * 1000:.0f} ms per call, {TURNS} turns per conversation, "
            f"{args.concurrency} conversations in flight per worker; {os.cpu_count()} cores"
        )
        print(
            f"{'workers':>7}  {'conversations':>13}  {'window s':>8}  {'conv/min':>8}  {'ideal':>7}  "
            f"{'of ideal':>8}  {'× 1 worker':>10}  per worker"
        )
        single = None
        for count in args.workers:
            conversations = count * args.concurrency * args.rounds
            run_workers(count, conversations, args.concurrency, url, chroma_host, base_url, directory)
            inside, seconds, per_worker, calls = measured_window(url, f"workers-{count}")
            rate = inside / seconds * 60
            calls_per_conversation = calls / conversations
            ideal = count * args.concurrency * 60 / (calls_per_conversation * args.latency)
            single = single or rate / count
            print(
                f"{count:>7}  {conversations:>13}  {seconds:>8.1f}  {rate:>8.1f}  {ideal:>7.1f}  "
                f"{rate / ideal:>8.2f}  {rate / single:>10.2f}  {sorted(per_worker.values())}",
                flush=True,
            )


if __name__ == "__main__":
    main()
