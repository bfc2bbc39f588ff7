"""How many questions a documentation tree gives the offline questioner: per collection, the chunks whose
first questions pass the checks synthesis puts a question through before it keeps a turn
(graphs/synthesis/supply.py, which a synthesis dry run with the offline agents runs on a sample).

Every chunk of the page kinds synthesis draws from by default (narrative and API pages) is asked as a
conversation's first turn by the offline questioner, the collection's word statistics given, again with the
questions before refused, up to ``--per-chunk`` times. The supply bounds the distinct turns a benchmark of
the tree can hold: typer's tutorial, where the test half fails, gives 18 passing chunks of 435 (nineteenth
session's table in docs/jobs/synthesize.md)::

    .venv/bin/python benchmarks/question_supply.py typer guizero cmd2 --workspace WS

``WS`` is where ``benchmarks/doc_corpora.py ingest`` put the collections.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchsmith.tools.offline import offline_environment

offline_environment()

from benchsmith.graphs.runtime.resources import chroma_client  # noqa: E402
from benchsmith.graphs.synthesis.supply import chunks_of_kinds, question_supply  # noqa: E402
from benchsmith.stores.persistence.corpus_stats import load_corpus_stats  # noqa: E402
from benchsmith.stores.persistence.vectors import VectorStore  # noqa: E402
from benchsmith.stores.persistence.workspace import Workspace  # noqa: E402
from benchsmith.tools.defaults import DEFAULT_SYNTHESIS_PAGE_KINDS  # noqa: E402
from benchsmith.tools.retrieval.embedding import ChromaEmbeddingFunction  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("collections", nargs="+")
    parser.add_argument("--workspace", required=True, help="where benchmarks/doc_corpora.py ingested the corpora")
    parser.add_argument("--per-chunk", type=int, default=4, help="questions asked of each chunk at most")
    args = parser.parse_args()
    workspace = Workspace.resolve(args.workspace)
    print("| collection | chunks asked | chunks with a passing question | share | passing questions |")
    print("|---|---:|---:|---:|---:|")
    for name in args.collections:
        store = VectorStore.open_existing(
            chroma_client(workspace, None), name, lambda spec: ChromaEmbeddingFunction(spec=spec)
        )
        supply = question_supply(
            store,
            load_corpus_stats(workspace, name),
            chunks_of_kinds(store, DEFAULT_SYNTHESIS_PAGE_KINDS),
            sample=None,
            per_chunk=args.per_chunk,
        )
        print(
            f"| {name} | {supply.asked} | {supply.with_question} | {supply.share:.0%} | {supply.questions} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
