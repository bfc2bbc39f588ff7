"""A labelling fixture: the rich test collection (tests/turn_type_fixtures.py), a baseline synthesis
run over it (what `validate` compares the labels with), and three questions, each asked in the
first words of one chunk (its "origin", which every configuration finds); the third chunk's text
is HTML and console markup."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchsmith.graphs.runtime.resources import register_embedder
from benchsmith.stores.persistence.jsonl import load_jsonl
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.workspace import Workspace
from tests.doc_pages import write_pages
from tests.embedders import HashingEmbedder
from tests.synthesis_fixtures import COLLECTION, synthesize
from tests.turn_type_fixtures import TOPICS, ingest

RETRIEVERS = ["bm25", "dense", "hybrid:rrf(dense,bm25)"]
MARKUP_FILE = "markup.txt"
# A page whose text is markup to a browser and to a console: the page must show it as typed.
MARKUP_PAGE = (
    "markup.escape_page(text)\n\nThe escape page helper keeps <script>window.injected = 1</script> and "
    "<b>bold tags</b> and [bold]console markup[/bold] exactly as the author typed them, so a reader sees "
    "the characters of the page and nothing runs.\n"
)


def labelling_setup(root: Path) -> dict[str, Any]:
    workspace = Workspace.resolve(root / "ws")
    write_pages(root / "corpus", TOPICS, 40, 0)
    (root / "corpus" / MARKUP_FILE).write_text(MARKUP_PAGE, encoding="utf-8")
    ingest(workspace, root / "corpus")
    register_embedder(HashingEmbedder())  # the collection's embedder, by the name it recorded
    synthesize(workspace, "bench", conversations=4, turns=3)
    run_dir = RunDirectory(workspace, "bench").path
    corpus = {record["_id"]: record["text"] for record in load_jsonl(run_dir / "beir" / "corpus.jsonl")}
    markup = next(chunk_id for chunk_id in corpus if chunk_id.startswith(MARKUP_FILE))
    origins = [*sorted(corpus)[:2], markup]
    questions = root / "questions.jsonl"
    rows = [
        {"id": f"q{number}", "question": f"What does {' '.join(corpus[chunk_id].split()[:10])} do?"}
        for number, chunk_id in enumerate(origins, start=1)
    ]
    questions.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return {
        "root": root,
        "workspace": workspace,
        "bench": run_dir,
        "questions": questions,
        "origins": {f"q{number}": chunk_id for number, chunk_id in enumerate(origins, start=1)},
        "collection": COLLECTION,
    }
