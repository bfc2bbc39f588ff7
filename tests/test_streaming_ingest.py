"""Ingestion streams (issue 23: a million chunks): each stage reads its input a record at a time and
gives the files the in-memory functions give; deduplication keeps band keys, not texts."""

import random

import pytest
from datasketch import MinHash, MinHashLSH

from benchsmith.graphs.ingest import IngestContext, builder
from benchsmith.graphs.runtime.resources import register_embedder
from benchsmith.graphs.runtime.runner import run_job
from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.jsonl import JsonlRows, load_jsonl
from benchsmith.stores.persistence.runs import RunDirectory
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.corpus.chunking import chunk_documents
from benchsmith.tools.corpus.cleaning import clean_documents
from benchsmith.tools.corpus.dedup import (
    CANDIDATE_MARGIN,
    MINHASH_SEED,
    DuplicateMatch,
    _fingerprint,
    candidate_bands,
    candidate_groups,
    char_shingles,
    decide_near_duplicates,
    deduplicate,
    find_near_duplicates,
    jaccard,
    row_keys,
)
from benchsmith.tools.corpus.loaders import load_sources
from benchsmith.tools.corpus.quality import InformationDensityScorer
from benchsmith.tools.retrieval.indexing import IndexItem, embed_into
from tests.embedders import HashingEmbedder

VOCABULARY = [f"w{i}" for i in range(400)]  # small: many texts share candidate bands without being duplicates


def random_text(rng: random.Random, words: int = 100, vocabulary: int = len(VOCABULARY)) -> str:
    return " ".join(f"w{rng.randrange(vocabulary)}" for _ in range(words))


def perturb(rng: random.Random, text: str, edits: int) -> str:
    words = text.split()
    for _ in range(edits):
        words[rng.randrange(len(words))] = rng.choice(VOCABULARY)
    return " ".join(words)


def datasketch_reference(ids, texts, threshold=0.8, num_perm=128, seed=1):
    """The decisions of an incremental datasketch MinHashLSH index (what dedup did before it streamed)."""
    index = MinHashLSH(threshold=max(0.05, threshold - CANDIDATE_MARGIN), num_perm=num_perm)
    fingerprints, matches = {}, []
    shingle_sets = [char_shingles(text) for text in texts]
    for chunk_id, shingles, signature in zip(
        ids, shingle_sets, MinHash.bulk(shingle_sets, num_perm=num_perm, seed=seed)
    ):
        if chunk_id in fingerprints:
            matches.append(DuplicateMatch(chunk_id, chunk_id, 1.0))
            continue
        fingerprint = _fingerprint(shingles)
        scored = sorted((-jaccard(fingerprint, fingerprints[c]), ids.index(c), c) for c in index.query(signature))
        if scored and -scored[0][0] >= threshold:
            matches.append(DuplicateMatch(chunk_id, scored[0][2], round(-scored[0][0], 4)))
        else:
            index.insert(chunk_id, signature)
            fingerprints[chunk_id] = fingerprint
    return matches


def test_streamed_dedup_decides_as_an_incremental_lsh_index():
    rng = random.Random(11)
    texts, ids = [], []
    for number in range(300):
        if texts and rng.random() < 0.3:  # a near-duplicate (or exact copy) of an earlier text
            texts.append(perturb(rng, rng.choice(texts), rng.choice([0, 1, 3, 8, 20])))
        else:
            texts.append(random_text(rng))
        ids.append(f"t{number}")
    ids[50] = ids[10]  # a repeated id
    expected = datasketch_reference(ids, texts)
    assert 40 < len(expected) < 150  # the fixture has both kinds
    assert find_near_duplicates(ids, texts) == expected


def test_dedup_decides_the_same_whatever_the_order_of_the_candidate_groups():
    """A cluster returns the groups in the order its partitions finish (graphs/runtime/ray_key_groups.py)."""
    rng = random.Random(5)
    texts: list[str] = []
    for _ in range(200):
        texts.append(
            perturb(rng, rng.choice(texts), rng.choice([0, 2, 10]))
            if texts and rng.random() < 0.4
            else random_text(rng)
        )
    ids = [f"t{row}" for row in range(len(texts))]
    ids[120] = ids[0]  # a repeated id (row 0 is kept)
    bands = candidate_bands(0.8, 128)
    keys = row_keys(ids, texts, bands, 128, MINHASH_SEED)
    whole = candidate_groups(keys)
    expected = find_near_duplicates(ids, texts)
    for _ in range(3):
        rng.shuffle(whole)
        result = decide_near_duplicates(whole, ids.__getitem__, texts.__getitem__, threshold=0.8, id_column=len(bands))
        assert result.matches == expected
    assert ("t0", "t0") in {(match.removed_id, match.kept_id) for match in expected} and len(expected) > 40


def test_dedup_reads_back_only_texts_whose_bands_meet():
    rng = random.Random(2)
    texts = [random_text(rng, 120, vocabulary=3000) for _ in range(200)]  # no two share a band by chance
    texts += [perturb(rng, texts[i], 1) for i in range(0, 20, 2)]  # 10 planted copies
    read_back = []

    def text_of(row):
        read_back.append(row)
        return texts[row]

    result = deduplicate(((f"d{row}", text) for row, text in enumerate(texts)), text_of)
    assert [m.removed_id for m in result.matches] == [f"d{row}" for row in range(200, 210)]
    assert set(read_back) == set(range(0, 20, 2)) | set(range(200, 210))  # the copies and their originals only


def test_unique_rows_leave_out_every_occurrence_of_an_id_once_removed():
    """As before streaming: a row whose id an earlier row had is never unique, even when the
    earlier one was removed and this text is new."""
    rng = random.Random(4)
    first, other = random_text(rng), random_text(rng)
    records = [("x", first), ("y", perturb(rng, first, 1)), ("y", other), ("x", first)]
    result = deduplicate(records, lambda row: records[row][1])
    assert [(m.removed_id, m.kept_id) for m in result.matches] == [("y", "x"), ("x", "x")]
    assert result.dropped == {1, 2, 3}


def test_jsonl_rows_stream_and_read_back_by_row(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_bytes('\ufeff{"a": 1}\n\n{"a": "é"}\n{"a": 3}'.encode("utf-8"))
    rows = JsonlRows(path)
    assert list(rows) == [(1, {"a": 1}), (3, {"a": "é"}), (4, {"a": 3})] and len(rows) == 3
    assert [rows.record(row) for row in (2, 0, 1)] == [{"a": 3}, {"a": 1}, {"a": "é"}]
    with pytest.raises(IndexError):
        rows.record(3)
    rows.close()
    path.write_text('{"a": 1}\n[2]\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"rows\.jsonl:2: expected a JSON object"):
        list(JsonlRows(path))


class CountingItems:
    """Index items read by position, counting the reads."""

    def __init__(self, items):
        self.items, self.reads = items, 0

    def __len__(self):
        return len(self.items)

    def __getitem__(self, position):
        self.reads += 1
        return self.items[position]


class RecordingStore:
    def __init__(self):
        self.upserts = []

    def stored_texts(self, ids):
        return {}

    def upsert(self, ids, vectors, texts, metadatas):
        self.upserts.append(list(ids))


def test_embedding_reads_each_item_once_in_the_order_of_their_lengths():
    rng = random.Random(0)
    items = [IndexItem(f"i{n}", "x" * rng.randrange(1, 6)) for n in range(23)]
    reader, store = CountingItems(items), RecordingStore()
    lengths = [len(item.text) for item in items]
    assert embed_into(store, reader, HashingEmbedder(), 4, text_lengths=lengths) == 23
    assert reader.reads == 23  # the lengths came from the caller: no pass over the texts
    by_length = [item.id for item in sorted(items, key=lambda item: len(item.text))]
    assert [chunk_id for batch in store.upserts for chunk_id in batch] == by_length
    with pytest.raises(ValueError, match="2 text lengths for 23 items"):
        embed_into(store, reader, HashingEmbedder(), 4, text_lengths=[1, 2])


def test_embedded_items_reach_the_store_in_groups_as_large_as_chroma_takes(monkeypatch):
    """Each write makes Chroma save its whole HNSW index (0.85 s at a million items): items embedded
    in batches of 4 are written 10 at a time, in order, with their own texts and vectors."""
    monkeypatch.setattr("benchsmith.tools.retrieval.indexing.MAX_UPSERT_BATCH", 10)
    items = [IndexItem(f"i{n:02}", f"text {n:02}", {"n": n}) for n in range(27)]
    written = []

    class Store(RecordingStore):
        def upsert(self, ids, vectors, texts, metadatas):
            written.append((list(ids), [row.tolist() for row in vectors], list(texts), list(metadatas)))

    embedder = HashingEmbedder()
    assert embed_into(Store(), items, embedder, 4) == 27
    assert [len(ids) for ids, *_ in written] == [10, 10, 7]
    for ids, vectors, texts, metadatas in written:
        assert texts == [f"text {chunk_id[1:]}" for chunk_id in ids]
        assert metadatas == [{"n": int(chunk_id[1:])} for chunk_id in ids]
        assert vectors == embedder.encode(texts).tolist()


def test_what_was_embedded_before_a_failure_is_written_and_a_failed_write_is_raised(monkeypatch):
    monkeypatch.setattr("benchsmith.tools.retrieval.indexing.MAX_UPSERT_BATCH", 10)
    items = [IndexItem(f"i{n:02}", f"text {n:02}") for n in range(27)]
    store = RecordingStore()
    with pytest.raises(RuntimeError, match="injected embedding failure on batch 4"):
        embed_into(store, items, HashingEmbedder(fail_on_call=4), 4)
    assert [len(ids) for ids in store.upserts] == [10, 2]  # three batches of 4 embedded, all written

    class FailingStore(RecordingStore):
        def upsert(self, ids, vectors, texts, metadatas):
            raise ConnectionError("chroma went away")

    with pytest.raises(ConnectionError, match="chroma went away"):
        embed_into(FailingStore(), items, HashingEmbedder(), 4)


def write_mixed_corpus(root):
    """Pages with a shared footer (corpus-level boilerplate), headings, near-duplicate and exact
    copies, a navigation-only page (filtered) and a repeated paragraph."""
    rng = random.Random(9)
    root.mkdir(parents=True)
    footer = "Copyright 2024 Example Docs. Built with care by the example team."
    bodies = []
    for number in range(14):
        body = "\n\n".join(random_text(rng, 60) + "." for _ in range(3))
        if number in (5, 9):
            body = perturb(rng, bodies[number - 4], 1)
        bodies.append(body)
        (root / f"page{number:02}.md").write_text(f"# Page {number}\n\n{body}\n\n{footer}\n", encoding="utf-8")
    (root / "copy.md").write_text(f"# Page 3\n\n{bodies[3]}\n\n{footer}\n", encoding="utf-8")
    (root / "menu.md").write_text("Home\n\nAbout\n\nBlog\n\nContact\n\nSign in\n", encoding="utf-8")
    return root


def test_ingest_stages_write_what_the_in_memory_functions_give(tmp_path):
    corpus = write_mixed_corpus(tmp_path / "corpus")
    workspace = Workspace.resolve(tmp_path / "ws")
    embedder = HashingEmbedder()
    context = IngestContext(
        workspace=str(workspace.root), embedder=register_embedder(embedder), chunk_size=300, min_chars=20, batch_size=4
    )
    run_job(
        builder,
        job="ingest",
        workspace=workspace,
        run_id="s",
        context=context,
        inputs={"run_id": "s", "sources": [str(corpus)], "collection": "docs"},
        settings={"sources": [str(corpus)], "collection": "docs"},
    )
    run_dir = RunDirectory(workspace, "s")

    documents = clean_documents(load_sources([str(corpus)]).documents)
    assert documents
    assert all("Copyright 2024" not in document.text for document in documents)  # the footer went
    chunks = chunk_documents(documents, 300, 20)
    chunk_records = [c.to_json() for c in chunks]
    matches = find_near_duplicates([c.id for c in chunks], [c.text for c in chunks])
    removed = {m.removed_id for m in matches}
    assert len(removed) >= 3  # the two near-copies and the exact copy
    unique = [c for c in chunks if c.id not in removed]
    for chunk, score in zip(unique, InformationDensityScorer().score([c.text for c in unique])):
        chunk.quality = round(float(score), 4)
    kept = [c.to_json() for c in unique if c.quality >= 0.5]
    assert len(kept) < len(unique)  # the menu was filtered

    assert load_jsonl(run_dir.file("cleaned.jsonl")) == [d.to_json() for d in documents]
    assert load_jsonl(run_dir.file("chunks.jsonl")) == chunk_records
    assert load_jsonl(run_dir.file("duplicates.jsonl")) == [m.to_json() for m in matches]
    assert load_jsonl(run_dir.file("kept.jsonl")) == kept
    assert not run_dir.file("marked.jsonl").exists()  # the clean stage's scratch file is gone


def test_a_repeated_document_id_stops_the_load_and_leaves_no_run(tmp_path):
    workspace = Workspace.resolve(tmp_path / "ws")
    first, second = tmp_path / "a", tmp_path / "b"
    for folder in (first, second):
        folder.mkdir()
        (folder / "same.md").write_text("# Same\n\n" + "A sentence about retrieval and ranking. " * 5, encoding="utf-8")
    context = IngestContext(workspace=str(workspace.root), embedder=register_embedder(HashingEmbedder()))
    with pytest.raises(InputError, match=r"document id 'same.md' repeats"):
        run_job(
            builder,
            job="ingest",
            workspace=workspace,
            run_id="twice",
            context=context,
            inputs={"run_id": "twice", "sources": [str(first), str(second)], "collection": "docs"},
            settings={"sources": [str(first), str(second)], "collection": "docs"},
        )
    assert not RunDirectory(workspace, "twice").path.exists()  # bad input found by the first step: no run
