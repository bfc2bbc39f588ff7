"""The strategy space of `benchsmith select`: chunking strategies, metadata filters, levels,
grid and staged configurations, names and space files."""

from __future__ import annotations

import re
from itertools import pairwise

import pytest

from benchsmith.jobs.select import strategy_space
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.space_files import read_space_file
from benchsmith.tools.corpus.documents import Document
from benchsmith.tools.retrieval.chunking_strategies import ChunkingSpec, chunk_corpus, parse_chunking
from benchsmith.tools.retrieval.metadata_filters import parse_filter
from benchsmith.tools.retrieval.strategy_space import (
    SelectConfiguration,
    build_space,
    grid_settings,
    parse_rewrite,
    planned_settings,
    space_from_mapping,
    stage_settings,
)

WORDS = re.compile(r"\S+")
SENTENCES = " ".join(f"Sentence {number} tells one short thing about the harbour." for number in range(30))


def document(text: str = SENTENCES, doc_id: str = "d") -> Document:
    return Document(doc_id, "src", "Title", "text", text)


# ---------------------------------------------------------------------------------------
# Chunking strategies.


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("whole", "whole"),
        ("size=512", "size=512"),
        ("overlap=64, size=512", "size=512,overlap=64"),
        ("size=300,merge=80,split_above=2000", "size=300,merge=80,split_above=2000"),
    ],
)
def test_chunking_specs_read_in_any_order_and_print_canonically(text, label):
    assert parse_chunking(text).label == label
    assert parse_chunking(parse_chunking(text).label) == parse_chunking(text)


def test_chunking_specs_from_yaml_forms():
    assert parse_chunking({"size": 256, "overlap": 32}) == ChunkingSpec(size=256, overlap=32)
    assert parse_chunking({"whole": True}) == ChunkingSpec()
    assert parse_chunking(128) == ChunkingSpec(size=128)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("size=100,overlap=100", "overlap must be at least 0 and below the size"),
        ("size=100,stride=3", "unknown key 'stride'"),
        ("overlap=10", "give a size"),
        ("size=abc", "whole number"),
        ("size=100,split_above=50", "split_above must be at least the size"),
        ("chunky", "is not KEY=VALUE"),
    ],
)
def test_bad_chunking_specs_are_named(text, message):
    with pytest.raises(InputError, match=re.escape(message)):
        parse_chunking(text)


def span_of(chunk_id: str) -> tuple[str, int, int]:
    path, _, span = chunk_id.rpartition(":")
    start, _, end = span.partition("-")
    return path, int(start), int(end)


def test_chunks_are_named_by_path_and_byte_span_and_a_whole_beir_passage_by_its_id():
    documents = [document(doc_id="long.md"), document("Short text.", doc_id="short.txt")]
    whole = chunk_corpus(documents, ChunkingSpec())
    assert [chunk.id for chunk in whole] == [f"long.md:0-{len(SENTENCES)}", "short.txt:0-11"]
    assert whole[0].text == SENTENCES
    split = chunk_corpus(documents, ChunkingSpec(size=200))
    long_chunks = [chunk for chunk in split if chunk.doc_id == "long.md"]
    assert len(long_chunks) > 1 and split[-1].id == "short.txt:0-11"
    for chunk in long_chunks:
        path, start, end = span_of(chunk.id)
        assert path == "long.md" and SENTENCES.encode()[start:end].decode() == chunk.text
    assert max(len(chunk.text) for chunk in split) <= 200
    assert [word for chunk in long_chunks for word in WORDS.findall(chunk.text)] == WORDS.findall(
        SENTENCES
    )  # nothing lost, nothing repeated without overlap
    passages = [Document("p1", "corpus.jsonl", "Harbour", "beir", SENTENCES)]
    assert [(chunk.id, chunk.text) for chunk in chunk_corpus(passages, ChunkingSpec())] == [
        ("p1", f"Harbour {SENTENCES}")
    ]
    assert {span_of(chunk.id)[0] for chunk in chunk_corpus(passages, ChunkingSpec(size=200))} == {"p1"}


def test_two_documents_of_one_path_are_refused():
    with pytest.raises(InputError, match="repeats"):
        chunk_corpus([document(doc_id="a.md"), document(doc_id="a.md")], ChunkingSpec(size=200))


def test_overlap_repeats_the_end_of_a_chunk_at_the_start_of_the_next():
    chunks = chunk_corpus([document()], ChunkingSpec(size=200, overlap=60))
    assert len(chunks) > 2
    for first, second in pairwise(chunks):
        tail = first.text.split(". ")[-1].rstrip(".")
        assert tail and tail in second.text
        assert span_of(second.id)[1] < span_of(first.id)[2]  # the spans overlap too
        assert SENTENCES.encode()[span_of(second.id)[1] : span_of(second.id)[2]].decode() == second.text


def test_split_above_keeps_shorter_documents_whole():
    medium = " ".join(f"Line {n} of a medium document." for n in range(12))  # ~350 characters
    spec = ChunkingSpec(size=100, split_above=500)
    assert [chunk.id for chunk in chunk_corpus([document(medium, "medium")], spec)] == [f"medium:0-{len(medium)}"]
    assert len(chunk_corpus([document(doc_id="long")], spec)) > 1


def test_merging_joins_small_pieces_to_their_neighbours():
    text = "\n\n".join(["A heading", "A paragraph long enough to stand on its own as a chunk of text here."] * 3)
    unmerged = chunk_corpus([document(text)], ChunkingSpec(size=80))
    assert min(len(chunk.text) for chunk in unmerged) < 20  # short chunks are kept, not dropped
    chunks = chunk_corpus([document(text)], ChunkingSpec(size=80, merge_below=20))
    assert chunks
    assert all(len(chunk.text) >= 20 for chunk in chunks)
    assert [chunk.text for chunk in chunks] == [text[span_of(chunk.id)[1] : span_of(chunk.id)[2]] for chunk in chunks]
    assert [word for chunk in chunks for word in WORDS.findall(chunk.text)] == WORDS.findall(text)


# ---------------------------------------------------------------------------------------
# Metadata filters.


def test_filters_parse_and_select_chunks():
    metadata = {
        "doc_id": "json.decoder",
        "title": "json.decoder",
        "source": "/lib/json/decoder.py",
        "kind": "stdlib",
        "position": 2,
        "chars": 480,
    }
    assert parse_filter("title^JSON & chars>=400").allows(metadata)
    assert not parse_filter("title^json & chars>500").allows(metadata)
    assert parse_filter("source~decoder").allows(metadata) and not parse_filter("kind!=stdlib").allows(metadata)
    assert parse_filter("none").label == "none" and parse_filter("none").allows({})
    assert parse_filter(" doc_id = json.decoder ").label == "doc_id=json.decoder"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("author=me", "unknown field 'author'"),
        ("chars>=many", "compares numbers"),
        ("title", "is not FIELD OP VALUE"),
    ],
)
def test_bad_filters_are_named(text, message):
    with pytest.raises(InputError, match=re.escape(message)):
        parse_filter(text)


# ---------------------------------------------------------------------------------------
# Spaces and configurations.


def test_a_space_takes_defaults_and_canonical_levels():
    space = build_space({"retriever": ["bm25", "dense:default", "hybrid:rrf(dense, bm25)"], "top_k": ["5", 10, 5]})
    assert space["retriever"] == ["bm25", "dense", "hybrid:rrf(dense,bm25)"]
    assert space["top_k"] == [5, 10] and space["chunking"] == ["whole"] and space["rewrite"] == ["none"]
    assert len(grid_settings(space)) == 6


def test_staged_stages_vary_one_dimension_from_the_kept_levels():
    space = build_space(
        {"retriever": ["bm25", "dense"], "chunking": ["whole", "size=300"], "top_k": [3, 5, 10]},
        search="staged",
        order=["top_k", "chunking", "retriever"],
    )
    first = stage_settings(space, 0, {})
    assert [s["top_k"] for s in first] == [3, 5, 10] and {s["retriever"] for s in first} == {"bm25"}
    second = stage_settings(space, 1, {"top_k": 10})
    assert [(s["chunking"], s["top_k"]) for s in second] == [("whole", 10), ("size=300", 10)]
    assert len(planned_settings(space)) == 1 + 2 + 1 + 1  # baseline + further levels of each dimension
    assert len(planned_settings({**space, "search": "grid"})) == 12


def test_staged_without_order_takes_the_varied_dimensions_in_dimension_order():
    space = build_space({"top_k": [3, 5], "retriever": ["bm25", "dense"]}, search="staged")
    assert space["order"] == ["retriever", "top_k"]


@pytest.mark.parametrize(
    ("levels", "options", "message"),
    [
        ({"reranker": ["x"]}, {}, "unknown dimension(s) reranker"),
        ({"top_k": [0]}, {}, "top_k must be whole numbers within [1, 1000]"),
        ({"top_k": [1001]}, {}, "top_k must be whole numbers within [1, 1000]"),
        ({"rewrite": ["expand:99"]}, {}, "unknown rewrite 'expand:99'"),
        ({"top_k": [1, 2]}, {"search": "random"}, "search must be grid or staged"),
        (
            {"top_k": [1, 2], "retriever": ["bm25", "dense"]},
            {"search": "staged", "order": ["top_k"]},
            "missing retriever",
        ),
    ],
)
def test_bad_spaces_are_named(levels, options, message):
    with pytest.raises(InputError, match=re.escape(message)):
        build_space(levels, **options)


def test_names_are_readable_and_file_stems_unique():
    settings = {
        "chunking": "size=512,overlap=64",
        "retriever": "hybrid:rrf(dense,bm25)",
        "rewrite": "expand:2",
        "rerank": "cross-encoder/ms-marco",
        "filter": "title~json",
        "top_k": 10,
    }
    configuration = SelectConfiguration.from_settings(settings)
    assert configuration.name == (
        "chunks(size=512,overlap=64) hybrid:rrf(dense,bm25) rewrite(expand:2) "
        "rerank(cross-encoder/ms-marco) filter(title~json) k=10"
    )
    assert SelectConfiguration.from_settings(configuration.settings()) == configuration
    other = SelectConfiguration.from_settings({**settings, "filter": "title^json"})
    assert configuration.file_stem != other.file_stem  # "~" and "^" both become "_" in a file name
    assert re.fullmatch(r"[A-Za-z0-9._=-]+", configuration.file_stem)
    plain = SelectConfiguration.from_settings({**settings, "rewrite": "none", "rerank": "none", "filter": "none"})
    assert plain.name == "chunks(size=512,overlap=64) hybrid:rrf(dense,bm25) k=10"


def test_rewrite_levels():
    assert parse_rewrite("expand:3").expansions == 3 and parse_rewrite("rewrite").kind == "rewrite"


def test_space_files_and_flags_that_replace_their_dimensions(tmp_path):
    path = tmp_path / "space.yaml"
    path.write_text(
        "search: staged\norder: [top_k, retriever, chunking]\nretriever: [bm25, dense]\n"
        "chunking:\n  - whole\n  - {size: 300, overlap: 30}\ntop_k: [3, 5]\n",
        encoding="utf-8",
    )
    space = strategy_space(path)
    assert space["chunking"] == ["whole", "size=300,overlap=30"] and space["search"] == "staged"
    assert space["order"] == ["top_k", "retriever", "chunking"]
    replaced = strategy_space(path, retrievers=["bm25"], order=["top_k", "chunking"])
    assert replaced["retriever"] == ["bm25"] and replaced["order"] == ["top_k", "chunking"]
    assert strategy_space(None)["retriever"] == ["bm25"]
    with pytest.raises(InputError, match=r"space.yaml: unknown key"):
        space_from_mapping(read_space_file(path) | {"colour": "blue"}, str(path))
