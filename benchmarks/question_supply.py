"""How many questions a documentation tree gives the offline questioner: per collection, the chunks whose
first question passes the checks synthesis puts a question through before it keeps a turn.

Each chunk of the collection (changelogs left out, as synthesis leaves them out by default) is asked
as a conversation's first turn by the offline questioner (agents/questioner.py, the collection's word
statistics given), again with the questions before refused, up to ``--per-chunk`` times;
a question counts when `graphs/synthesis/turn_checks.ill_formed_question` (the audit's form rule
and the quality gate's rules that read a question with its passage) passes it. A chunk with nothing
left to ask gives the page-as-a-whole question, which ends its count. The supply bounds the distinct
turns a benchmark of the tree can hold: typer's tutorial, where the test half fails, gives 19 passing
chunks of 435 (fifteenth session)::

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

from benchsmith.agents.questioner import Questioner  # noqa: E402
from benchsmith.agents.text import WordStatistics  # noqa: E402
from benchsmith.graphs.runtime.resources import chroma_client  # noqa: E402
from benchsmith.graphs.synthesis.turn_checks import ill_formed_question  # noqa: E402
from benchsmith.stores.persistence.corpus_stats import load_corpus_stats  # noqa: E402
from benchsmith.stores.persistence.vectors import VectorStore  # noqa: E402
from benchsmith.stores.persistence.workspace import Workspace  # noqa: E402
from benchsmith.tools.retrieval.embedding import ChromaEmbeddingFunction  # noqa: E402

SKIPPED_PAGE_KINDS = frozenset({"changelog"})  # synthesis draws from changelogs only when asked


def chunk_supply(
    gold: dict[str, str], questioner: Questioner, statistics: WordStatistics | None, per_chunk: int
) -> int:
    """The passing first questions of one chunk, up to ``per_chunk``."""
    refused: list[str] = []
    passing = 0
    for _ in range(per_chunk):
        try:
            asked = questioner.baseline(gold=gold, history=[], switch="start", corpus_stats=statistics, refused=refused)
        except StopIteration:  # every page-as-a-whole question refused too
            break
        if asked.subject is None and asked.question_type == "summary":
            break  # the page-as-a-whole question: nothing left to ask of this chunk
        passing += not ill_formed_question(asked.question, False, [gold])
        refused.append(asked.question)
    return passing


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("collections", nargs="+")
    parser.add_argument("--workspace", required=True, help="where benchmarks/doc_corpora.py ingested the corpora")
    parser.add_argument("--per-chunk", type=int, default=4, help="questions asked of each chunk at most")
    args = parser.parse_args()
    workspace, questioner = Workspace.resolve(args.workspace), Questioner()
    print("| collection | chunks asked | chunks with a passing question | share | passing questions |")
    print("|---|---:|---:|---:|---:|")
    for name in args.collections:
        store = VectorStore.open_existing(
            chroma_client(workspace, None), name, lambda spec: ChromaEmbeddingFunction(spec=spec)
        )
        statistics = load_corpus_stats(workspace, name)
        chunks = with_question = questions = 0
        for page in store.iter_all():
            for chunk_id, text, metadata in zip(page["ids"], page["documents"], page["metadatas"]):
                if (metadata or {}).get("page_kind") in SKIPPED_PAGE_KINDS:
                    continue
                gold = {"id": chunk_id, "text": text, "title": (metadata or {}).get("title", "")}
                passing = chunk_supply(gold, questioner, statistics, args.per_chunk)
                chunks, with_question, questions = chunks + 1, with_question + (passing > 0), questions + passing
        share = with_question / chunks if chunks else 0.0
        print(f"| {name} | {chunks} | {with_question} | {share:.0%} | {questions} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
