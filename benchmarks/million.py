"""A million chunks through the whole path, as a user runs it, with each stage's time and memory.

A synthetic corpus (benchmarks/synthetic_corpus.py: topics, near-duplicates, boilerplate) of N
chunks and one of N/10 are generated in the run, streamed to a BEIR corpus.jsonl, and each goes
through the CLI, one subprocess per stage:

    benchsmith ingest      load, clean, chunk, MinHash-LSH dedup, quality filter, embed, index
    benchsmith cluster     the semantic path over the collection, cut into clusters
    benchsmith synthesize  K conversations at both sizes (1,000 when N is a million) with the loopback chat server
    benchsmith evaluate    BM25, dense and RRF over the full corpus with those turns
    benchsmith audit       a sample of the benchmark, baseline judge

Embeddings come from the loopback OpenAI-compatible server (tests/openai_server.py, its own
process, hashing vectors of dimension 64: cheap, so the server is not what is measured) through
``--embedder openai:hash``; chat replies from the same kind of server with a fixed latency
(``--latency``); the collection lives in a Chroma server (``chroma run``) when the venv has one,
else in the embedded store (said in the output).

For each stage and size: wall seconds, CPU seconds and peak resident memory of the stage's
process (``os.wait4``'s rusage of that child alone), and time at N over time at N/10 (the issue's
bound: at most 12 at 1,000,000 / 100,000; memory at most 8 GB), with the load average when the
stage ended (other work on the machine stretches wall times). Ingestion's CPU per chunk is
benchsmith's own (the embedding server's CPU is in its process, reported apart), whole and
without the embed stage (the run record's per-stage CPU seconds). Clustering's
path similarity is printed beside a random order's (from the command) and, on a seeded sample of
kept chunks, beside the naive greedy path's (tools/corpus/clustering.naive_greedy_path, O(n²)).

    .venv/bin/python benchmarks/million.py [--chunks 1000000] [--stages ingest,cluster,...] [--keep] [--ray local]

With ``--ray ADDRESS`` the ingestion runs through Ray Data (``benchsmith ingest --ray ADDRESS``:
graphs/runtime/ray_data.py), its embedding calls still going to the loopback server.

A run at a million takes hours here. With ``--workdir`` each size's measures are saved after every
stage (``nN/measures.json``), and ``--resume`` continues an interrupted run there: stages already
measured are not run again, a corpus already written is not written again, and a stage that was
cut off is run again from nothing (its run removed first; an ingestion cut off means the size is
started over), so every figure is of one whole, uninterrupted stage. ``--rerun`` measures stages
again after a change (``--rerun cluster,evaluate@100000``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402
from synthetic_corpus import write_corpus  # noqa: E402

from benchsmith.stores.persistence.files import write_json_atomic  # noqa: E402
from tests.local_servers import free_port, local_server  # noqa: E402

STAGES = ("ingest", "cluster", "synthesize", "evaluate", "audit")
GROWTH_LIMIT = 12.0  # time at N over time at N/10
MEMORY_LIMIT_MB = 8 * 1024
EMBEDDING_DIMENSION = 64
EMBEDDER = "openai:hash"
LLM = "openai:sim"
CONVERSATIONS_PER_MILLION = 1000
MEASURES_FILE = "measures.json"
BENCHSMITH = str(Path(sys.executable).parent / "benchsmith")
# The notes a table row shows; the JSON holds them all (each server's CPU during each stage too).
SHOWN_NOTES = {
    "ingest": (
        "chunks_indexed",
        "cpu_ms_per_chunk",
        "cpu_ms_per_chunk_without_embedding",
        "embedding_server_cpu_s",
        "chroma_cpu_s",
    ),
    "cluster": ("path_similarity", "random_order_similarity", "naive_comparison"),
    "synthesize": ("conversations", "chat_server_cpu_s"),
}

SERVER_SCRIPT = """
import sys, time
from tests.openai_server import FakeOpenAIServer
from tests.synthesis_fixtures import server_replier

class Server(FakeOpenAIServer):
    # A million embedded chunks: keep no request body (the fake keeps them all for tests).
    def _record(self, body, authorization): pass
    def _record_response(self, status): pass

server = Server(replier=server_replier, latency_s=float(sys.argv[1]), keep_alive=True,
                embedding_dimension=int(sys.argv[2])).start()
print(server.base_url, flush=True)
time.sleep(86400)
"""

console = Console(width=160)


@dataclass
class Measure:
    stage: str
    size: int
    wall_s: float
    cpu_s: float
    peak_rss_mb: float
    ok: bool
    notes: dict = field(default_factory=dict)


def process_cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def process_peak_rss_mb(pid: int) -> float:
    """VmHWM: the most resident memory the process has had."""
    match = re.search(r"VmHWM:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text())
    return int(match.group(1)) / 1024 if match else float("nan")


@contextlib.contextmanager
def loopback_model_server(latency_s: float) -> Iterator[tuple[str, int]]:
    """The fake OpenAI-compatible server in a process of its own: base URL and pid."""
    process = subprocess.Popen(
        [sys.executable, "-c", SERVER_SCRIPT, str(latency_s), str(EMBEDDING_DIMENSION)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        yield process.stdout.readline().strip(), process.pid
    finally:
        process.kill()
        process.wait()


@contextlib.contextmanager
def chroma_server(path: Path) -> Iterator[tuple[str | None, int | None]]:
    """``chroma run`` on a free port (HOST:PORT and pid), or (None, None) for the embedded store."""
    chroma = shutil.which("chroma", path=str(Path(sys.executable).parent))
    if chroma is None:
        yield None, None
        return
    port = free_port()
    command = [chroma, "run", "--path", str(path), "--host", "127.0.0.1", "--port", str(port)]
    with local_server(command, "/api/v2/heartbeat", port):
        yield f"127.0.0.1:{port}", chroma_pid(port)


def chroma_pid(port: int) -> int | None:
    from tests.local_servers import processes_running

    pids = processes_running("run", str(port))
    return pids[0] if pids else None


def run_stage(
    stage: str, size: int, arguments: list[str], env: dict[str, str], log: Path, servers: dict[str, int | None]
) -> tuple[Measure, str]:
    """One ``benchsmith`` command in its own process: its wall, CPU and peak RSS (its rusage alone)."""
    server_cpu = {name: process_cpu_seconds(pid) for name, pid in servers.items() if pid}
    started = time.perf_counter()
    with log.open("w") as out:
        process = subprocess.Popen([BENCHSMITH, *arguments], stdout=out, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    notes = {
        f"{name}_cpu_s": round(process_cpu_seconds(pid) - server_cpu[name], 2) for name, pid in servers.items() if pid
    }
    notes["load_average"] = [round(value, 2) for value in os.getloadavg()]  # at the stage's end: 1, 5, 15 minutes
    measure = Measure(
        stage,
        size,
        round(wall, 2),
        round(usage.ru_utime + usage.ru_stime, 2),
        round(usage.ru_maxrss / 1024, 1),
        process.returncode == 0,
        notes,
    )
    output = log.read_text(errors="replace")
    if process.returncode != 0:
        console.print(
            f"[red]{stage} at {size:,} failed (exit {process.returncode}, peak {measure.peak_rss_mb:.0f} MB); "
            f"last lines of {log}:[/red]"
        )
        console.print("\n".join(output.splitlines()[-25:]), markup=False, highlight=False)
    return measure, output


def table_value(output: str, label: str) -> str | None:
    """A value of a rich table row ``│ label │ value │`` in a command's output."""
    match = re.search(rf"{re.escape(label)}\s*│\s*([^│]+?)\s*│", output)
    return match.group(1) if match else None


def sample_kept_texts(workspace: Path, count: int, seed: int = 0) -> list[str]:
    """A seeded reservoir sample of the ingested chunks' texts, read as a stream."""
    from benchsmith.graphs.ingest import KEPT_FILE
    from benchsmith.stores.persistence.runs import RunDirectory
    from benchsmith.stores.persistence.workspace import Workspace

    path = RunDirectory(Workspace.resolve(workspace), "ingest").file(KEPT_FILE)
    rng, sample = random.Random(seed), []
    with path.open(encoding="utf-8") as lines:
        for seen, line in enumerate(lines):
            if seen < count:
                sample.append(json.loads(line)["text"])
            elif (slot := rng.randrange(seen + 1)) < count:
                sample[slot] = json.loads(line)["text"]
    return sample


def naive_path_comparison(workspace: Path, count: int) -> dict:
    """Our path's mean consecutive similarity over the naive greedy path's, on a sample of kept
    chunks embedded as the server embeds them (the same hashing vectors, bit for bit)."""
    from benchsmith.tools.corpus.clustering import (
        greedy_traversal_clusters,
        mean_consecutive_similarity,
        naive_greedy_path,
    )
    from tests.embedders import HashingEmbedder

    vectors = HashingEmbedder(EMBEDDING_DIMENSION).encode(sample_kept_texts(workspace, count))
    ours = mean_consecutive_similarity(vectors, greedy_traversal_clusters(vectors).path)
    naive = mean_consecutive_similarity(vectors, naive_greedy_path(vectors))
    return {
        "sample": len(vectors),
        "ours": round(ours, 4),
        "naive": round(naive, 4),
        "ours_over_naive": round(ours / naive, 3),
    }


def saved_measures(directory: Path) -> dict[str, Measure]:
    """The stages of a size measured whole by an earlier, interrupted run (``--resume``)."""
    path = directory / MEASURES_FILE
    if not path.exists():
        return {}
    return {
        measure.stage: measure
        for measure in map(lambda row: Measure(**row), json.loads(path.read_text()))
        if measure.ok
    }


def save_measures(directory: Path, measures: list[Measure]) -> None:
    write_json_atomic(directory / MEASURES_FILE, [asdict(measure) for measure in measures])


def forget_cut_off_stage(workspace: Path, stage: str) -> None:
    """A stage an interrupted run cut off runs again whole: its run directory and checkpoints go
    first (the run id is the stage's name), and what the stage would otherwise reuse: for a
    synthesis the response cache and the collection's statistics, for an evaluation its stored BM25
    index, for the clustering the stored clustering."""
    if stage == "cluster":  # a stored clustering is reused, not computed again
        shutil.rmtree(workspace / "clusters", ignore_errors=True)
        return
    if not (workspace / "runs" / stage).exists():
        return
    from langgraph.checkpoint.sqlite import SqliteSaver

    shutil.rmtree(workspace / "runs" / stage)
    with SqliteSaver.from_conn_string(str(workspace / "checkpoints.sqlite")) as checkpoints:
        checkpoints.delete_thread(stage)
    if stage == "synthesize":  # its model calls are paid again and its statistics computed again
        for cache in workspace.glob("llm-cache.sqlite*"):
            cache.unlink()
        shutil.rmtree(workspace / "corpus_stats", ignore_errors=True)
    if stage == "evaluate":  # its BM25 index is built again, not loaded from the last evaluation
        shutil.rmtree(workspace / "indexes", ignore_errors=True)


def prepare_corpus(directory: Path, size: int, args: argparse.Namespace) -> dict:
    """Write the size's corpus, or keep the one an interrupted run wrote (``--resume``), and say so."""
    corpus, written = directory / "corpus" / "corpus.jsonl", directory / "corpus" / "written.json"
    if args.resume and written.exists():
        info = {**json.loads(written.read_text()), "kept_from_earlier_run": True}
    else:
        started = time.perf_counter()
        counts = write_corpus(corpus, size, seed=args.seed)
        info = {"corpus": counts, "generate_s": round(time.perf_counter() - started, 2)}
        write_json_atomic(written, info)
    counts = info["corpus"]
    console.print(
        f"[bold]{size:,} chunks[/bold]: generated in {info['generate_s']} s "
        f"({counts['topical']:,} topical, {counts['near_duplicates']:,} near-duplicates, "
        f"{counts['boilerplate']:,} boilerplate, {counts['topics']:,} topics)"
        + (", kept from the interrupted run" if info.get("kept_from_earlier_run") else "")
    )
    return info


def run_size(
    size: int, args: argparse.Namespace, root: Path, env: dict[str, str], servers: dict[str, int | None]
) -> tuple[list[Measure], dict]:
    directory = root / f"n{size}"
    workspace, corpus = directory / "ws", directory / "corpus" / "corpus.jsonl"
    done = {
        stage: measure
        for stage, measure in (saved_measures(directory) if args.resume else {}).items()
        if stage not in args.rerun and f"{stage}@{size}" not in args.rerun
    }
    if "ingest" in args.stages and "ingest" not in done:
        # A size starts whole: an ingestion cut off would leave its collection half made.
        shutil.rmtree(workspace, ignore_errors=True)
        shutil.rmtree(directory / "chroma", ignore_errors=True)
    info = prepare_corpus(directory, size, args)
    # The same conversations at both sizes: a stage's ratio is its growth with the corpus, not with
    # its workload (evaluating ten times the turns on ten times the chunks is a hundred times the work).
    conversations = max(args.min_conversations, round(args.conversations_per_million * args.chunks / 1_000_000))
    common = ["--workspace", str(workspace)]
    with chroma_server(directory / "chroma") as (host, chroma):
        if host:
            common += ["--chroma-host", host]
        info["chroma"] = f"server {host}" if host else "embedded PersistentClient (no chroma command)"
        stage_servers = {**servers, "chroma": chroma}
        collection = f"million{size}"
        commands = {
            "ingest": [
                "ingest",
                str(corpus.parent),
                "--collection",
                collection,
                "--embedder",
                EMBEDDER,
                "--run-id",
                "ingest",
                *(["--ray", args.ray] if args.ray else []),
                *common,
            ],
            "cluster": ["cluster", "--collection", collection, *common],
            "synthesize": [
                "synthesize",
                "--collection",
                collection,
                "--conversations",
                str(conversations),
                "--turns",
                str(args.turns),
                "--llm",
                LLM,
                "--concurrency",
                str(args.concurrency),
                "--run-id",
                "synthesize",
                *common,
            ],
            "evaluate": [
                "evaluate",
                "synthesize",
                "--embedder",
                EMBEDDER,
                "--retriever",
                "bm25",
                "--retriever",
                "dense",
                "--retriever",
                "hybrid:rrf(dense,bm25)",
                "--run-id",
                "evaluate",
                *common,
            ],
            "audit": [
                "audit",
                "synthesize",
                "--embedder",
                EMBEDDER,
                "--sample",
                str(args.audit_sample),
                "--run-id",
                "audit",
                *common,
            ],
        }
        measures = []
        for stage in args.stages:
            if stage in done:
                console.print(f"  {stage} at {size:,}: measured by the interrupted run, kept", highlight=False)
                measures.append(done[stage])
                save_measures(directory, measures)  # a kept measure stays saved after stages measured again
                continue
            forget_cut_off_stage(workspace, stage)
            console.print(f"  {stage} at {size:,}…", highlight=False)
            measure, output = run_stage(stage, size, commands[stage], env, directory / f"{stage}.log", stage_servers)
            measures.append(measure)
            if stage == "ingest" and measure.ok:
                indexed = count_kept(workspace)
                stage_cpu = ingest_stage_cpu(workspace)
                before_embedding = sum(cpu for name, cpu in stage_cpu.items() if name != "embed")
                measure.notes.update(
                    chunks_indexed=indexed,
                    cpu_ms_per_chunk=round(measure.cpu_s / max(1, size) * 1000, 3),
                    cpu_ms_per_chunk_without_embedding=round(before_embedding / max(1, size) * 1000, 3),
                    embed_client_cpu_ms_per_chunk=round(stage_cpu.get("embed", 0.0) / max(1, indexed) * 1000, 3),
                    stage_cpu_s={name: round(cpu, 1) for name, cpu in stage_cpu.items()},
                )
            if stage == "cluster" and measure.ok:
                measure.notes.update(
                    path_similarity=table_value(output, "mean similarity of consecutive chunks"),
                    random_order_similarity=table_value(output, "… in a random order"),
                )
                if args.naive_sample:
                    measure.notes["naive_comparison"] = naive_path_comparison(workspace, args.naive_sample)
            if stage == "synthesize":
                measure.notes["conversations"] = conversations
                if cached := re.search(r"model calls: [\d,]+ \(([\d,]+) from the cache", output):
                    measure.notes["calls_from_cache"] = int(cached.group(1).replace(",", ""))
            save_measures(directory, measures)
            if not measure.ok:
                break
        if chroma:
            info["chroma_peak_rss_mb"] = round(process_peak_rss_mb(chroma), 1)
    for name, pid in servers.items():
        if pid:
            info[f"{name}_peak_rss_mb"] = round(process_peak_rss_mb(pid), 1)
    return measures, info


def ingest_stage_cpu(workspace: Path) -> dict[str, float]:
    """CPU seconds of each ingestion stage in the ingest process (the run record's summary)."""
    from benchsmith.stores.persistence.workspace import Workspace

    record = json.loads((Workspace.resolve(workspace).run_dir("ingest") / "run.json").read_text(encoding="utf-8"))
    return dict(record.get("summary", {}).get("stage_cpu_seconds", {}))


def count_kept(workspace: Path) -> int:
    from benchsmith.graphs.ingest import KEPT_FILE
    from benchsmith.stores.persistence.runs import RunDirectory
    from benchsmith.stores.persistence.workspace import Workspace

    with RunDirectory(Workspace.resolve(workspace), "ingest").file(KEPT_FILE).open("rb") as lines:
        return sum(1 for _ in lines)


def print_table(results: dict[int, list[Measure]], small: int, large: int) -> None:
    table = Table(title=f"benchsmith at {large:,} and {small:,} chunks")
    for column in ("stage", "size", "wall s", "CPU s", "peak RSS MB", "t(N)/t(N/10)", "load 1/5/15 min", "notes"):
        table.add_column(column, justify="left" if column in ("stage", "notes") else "right")
    by_stage = {(m.stage, m.size): m for measures in results.values() for m in measures}
    for stage in STAGES:
        for size in (small, large):
            if (measure := by_stage.get((stage, size))) is None:
                continue
            ratio = ""
            if size == large and (before := by_stage.get((stage, small))) and measure.ok and before.ok:
                growth = measure.wall_s / before.wall_s
                ratio = f"{growth:.2f}" + ("" if growth <= GROWTH_LIMIT else " [red]>12[/red]")
            memory = f"{measure.peak_rss_mb:,.0f}" + (
                "" if measure.peak_rss_mb <= MEMORY_LIMIT_MB else " [red]>8 GB[/red]"
            )
            notes = ", ".join(
                f"{key}={value}" for key, value in measure.notes.items() if key in SHOWN_NOTES.get(stage, ())
            )
            load = "/".join(f"{value:.1f}" for value in measure.notes.get("load_average", ()))
            table.add_row(
                stage if measure.ok else f"[red]{stage} FAILED[/red]",
                f"{size:,}",
                f"{measure.wall_s:.1f}",
                f"{measure.cpu_s:.1f}",
                memory,
                ratio,
                load,
                notes,
            )
    console.print(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=1_000_000, help="N: the larger size (the smaller is N/10).")
    parser.add_argument("--stages", default=",".join(STAGES), help=f"Comma-separated, of {', '.join(STAGES)}.")
    parser.add_argument("--keep", action="store_true", help="Keep the workspaces, corpora and logs.")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="Continue an interrupted run in --workdir: keep the stages it measured whole.",
    )
    parser.add_argument(
        "--rerun",
        default="",
        help="With --resume: measure these again, comma-separated: a stage "
        "at both sizes (cluster) or at one (synthesize@100000).",
    )
    parser.add_argument(
        "--workdir",
        type=Path,
        help="Where the workspaces go (default: a new temporary folder). Without --keep only the size folders "
        "made in it are removed at the end, never the folder itself.",
    )
    parser.add_argument(
        "--json", type=Path, help="Results file (default: million-N.json in the temporary folder's parent)."
    )
    parser.add_argument(
        "--conversations-per-million",
        type=int,
        default=CONVERSATIONS_PER_MILLION,
        help="Conversations synthesized at each size, per million chunks of N.",
    )
    parser.add_argument("--min-conversations", type=int, default=10)
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=16, help="Synthesis conversations in flight.")
    parser.add_argument("--latency", type=float, default=0.05, help="Seconds the chat server takes per call.")
    parser.add_argument("--audit-sample", type=int, default=100)
    parser.add_argument(
        "--naive-sample",
        type=int,
        default=5000,
        help="Kept chunks the naive greedy path is compared on (O(n²)); 0: skip.",
    )
    parser.add_argument(
        "--ray",
        help="Ingest as Ray Data pipelines on this Ray cluster ('local': one started by the ingest process). "
        "The ingest CPU is then the driver's and the Ray processes it started and waited for; the workers of "
        "a cluster joined at an address are not counted.",
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    args.stages = [stage.strip() for stage in args.stages.split(",") if stage.strip()]
    args.rerun = {stage.strip() for stage in args.rerun.split(",") if stage.strip()}
    if unknown := [stage for stage in args.rerun if stage.split("@")[0] not in STAGES]:
        parser.error(f"unknown stages to rerun {unknown}; choose from {', '.join(STAGES)}")
    if unknown := [stage for stage in args.stages if stage not in STAGES]:
        parser.error(f"unknown stages {unknown}; choose from {', '.join(STAGES)}")
    if args.chunks < 10:
        parser.error("--chunks must be at least 10")
    if args.resume and not args.workdir:
        parser.error("--resume continues a run in --workdir: name it")
    if args.resume:
        args.keep = True  # a run resumed may be interrupted again
    large, small = args.chunks, args.chunks // 10

    root = args.workdir or Path(tempfile.mkdtemp(prefix="benchsmith-million-"))
    root.mkdir(parents=True, exist_ok=True)
    json_path = args.json or Path(tempfile.gettempdir()) / f"million-{large}.json"
    results: dict[int, list[Measure]] = {}
    infos: dict[int, dict] = {}
    try:
        with (
            loopback_model_server(0.0) as (embeddings_url, embeddings_pid),
            loopback_model_server(args.latency) as (chat_url, chat_pid),
        ):
            env = {
                **os.environ,
                "OPENAI_API_KEY": "sk-benchmark",
                "OPENAI_BASE_URL": chat_url,
                "BENCHSMITH_EMBEDDINGS_BASE_URL": embeddings_url,
                "COLUMNS": "200",
                "HF_HUB_OFFLINE": "1",
                "TRANSFORMERS_OFFLINE": "1",
                "HF_HUB_DISABLE_PROGRESS_BARS": "1",
            }
            servers = {"embedding_server": embeddings_pid, "chat_server": chat_pid}
            for size in (small, large):
                results[size], infos[size] = run_size(size, args, root, env, servers)
                if not all(measure.ok for measure in results[size]):
                    break
    finally:
        if not args.keep:
            # a --workdir the user named stays, and with it what they keep there (a log, the results
            # file): only the size folders this run made go; a temporary folder goes whole
            for removed in [root / f"n{size}" for size in (small, large)] if args.workdir else [root]:
                shutil.rmtree(removed, ignore_errors=True)
    print_table(results, small, large)
    for size, info in infos.items():
        console.print(f"{size:,}: {json.dumps(info)}", highlight=False)
    by_stage = {(m.stage, m.size): m for measures in results.values() for m in measures}
    marginal = without_embedding = None
    if (before := by_stage.get(("ingest", small))) and (after := by_stage.get(("ingest", large))):
        # The difference of the two runs leaves out start-up (imports, Chroma client): per chunk, at scale.
        marginal = round((after.cpu_s - before.cpu_s) / (large - small) * 1000, 3)
        console.print(
            f"ingest: benchsmith's own CPU per chunk, start-up excluded, embedding server apart: "
            f"{marginal} ms ((CPU at {large:,} − CPU at {small:,}) / {large - small:,} chunks)"
        )
        before_cpu, after_cpu = (
            sum(cpu for name, cpu in measure.notes.get("stage_cpu_s", {}).items() if name != "embed")
            for measure in (before, after)
        )
        without_embedding = round((after_cpu - before_cpu) / (large - small) * 1000, 3)
        console.print(
            f"ingest without embedding (load, clean, chunk, dedup, quality): {without_embedding} ms of CPU "
            f"per chunk, the same difference; the embed stage's client side: "
            f"{after.notes.get('embed_client_cpu_ms_per_chunk')} ms per indexed chunk at {large:,}"
        )
    total_small = sum(m.wall_s for m in results.get(small, []))
    total_large = sum(m.wall_s for m in results.get(large, []))
    if total_small and total_large:
        growth = total_large / total_small
        console.print(
            f"whole path: {total_small:.1f} s at {small:,}, {total_large:.1f} s at {large:,} "
            f"(×{growth:.2f}); at {large * 10:,} by the same ratio ≈ {total_large * growth:.0f} s"
        )
    payload = {
        "chunks": large,
        "smaller": small,
        "stages": args.stages,
        "root": str(root) if args.keep else None,
        "measures": [asdict(m) for measures in results.values() for m in measures],
        "runs": {str(size): info for size, info in infos.items()},
        "ingest_marginal_cpu_ms_per_chunk": marginal,
        "ingest_marginal_cpu_ms_per_chunk_without_embedding": without_embedding,
        "growth": {
            stage: round(by_stage[stage, large].wall_s / by_stage[stage, small].wall_s, 2)
            for stage in STAGES
            if (stage, large) in by_stage and (stage, small) in by_stage
        },
    }
    json_path.write_text(json.dumps(payload, indent=2) + "\n")
    console.print(f"results: {json_path}" + (f"; workspaces kept in {root}" if args.keep else ""))
    if not all(m.ok for measures in results.values() for m in measures):
        sys.exit(1)


if __name__ == "__main__":
    main()
