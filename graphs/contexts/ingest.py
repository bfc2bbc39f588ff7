"""The settings of an ingestion (graphs/ingest.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from benchsmith.agents.defaults import BASELINE
from benchsmith.graphs.runtime.bounds import MAX_CHUNK_SIZE, MAX_INDEX_BATCH, MAX_NUM_PERM, MIN_CHUNK_SIZE
from benchsmith.graphs.runtime.ray_options import RayOptions
from benchsmith.graphs.runtime.settings import ModelOptions, StoreOptions, setting_field, share_field
from benchsmith.tools.corpus.quality import DEFAULT_MIN_QUALITY
from benchsmith.tools.defaults import (
    DEFAULT_CHUNK_SIZE,
    DEFAULT_DEDUP_NUM_PERM,
    DEFAULT_DEDUP_THRESHOLD,
    DEFAULT_EMBEDDER,
    DEFAULT_INDEX_BATCH_SIZE,
    DEFAULT_MIN_CHARS,
)

QualityScorerName = Literal["heuristic", "llm"]


@dataclass(kw_only=True)
class IngestContext(RayOptions, StoreOptions, ModelOptions):
    """Settings of one ingestion (not checkpointed: the CLI passes them again on resume)."""

    include: tuple[str, ...] = setting_field(
        (),
        "Read only the files of a source folder whose path (relative to the folder) matches one of "
        "these globs (fnmatch; ** also matches no folder; a folder's pattern matches the files under "
        "it). Repeat for several; the others are listed as skipped. None: every file.",
    )
    exclude: tuple[str, ...] = setting_field(
        (),
        "Skip the files of a source folder whose path (relative to the folder) matches one of these "
        "globs (as --include), listed as skipped with the pattern. Repeat for several.",
    )
    chunk_size: int = setting_field(
        DEFAULT_CHUNK_SIZE,
        "Target chunk size in characters; no chunk is longer, no word is split.",
        low=MIN_CHUNK_SIZE,
        high=MAX_CHUNK_SIZE,
    )
    min_chars: int = setting_field(
        DEFAULT_MIN_CHARS, "Chunks shorter than this are dropped.", low=1, high=MAX_CHUNK_SIZE
    )
    dedup_threshold: float = share_field(
        "Jaccard similarity of character 5-grams from which a chunk is a near-duplicate.",
        default=DEFAULT_DEDUP_THRESHOLD,
    )
    num_perm: int = setting_field(DEFAULT_DEDUP_NUM_PERM, "MinHash permutations.", low=1, high=MAX_NUM_PERM)
    min_quality: float = share_field(
        "Chunks scoring below this quality (0..1) are filtered out.", default=DEFAULT_MIN_QUALITY
    )
    quality: QualityScorerName = field(  # field() itself: ruff's RUF009 flags any other call under a Literal alias
        default="heuristic",
        metadata={
            "description": "Quality scorer: 'heuristic' (information density, no model) or 'llm' (asks the llm model)."
        },
    )
    llm: str = setting_field(
        BASELINE, "Model of the 'llm' quality scorer: openai:<model> (e.g. openai:gpt-4o-mini) or a registered name."
    )
    embedder: str = setting_field(
        DEFAULT_EMBEDDER,
        "Embedder of the collection (one collection per embedder): a sentence-transformers model name "
        "or path, openai:<model> for an OpenAI-compatible embedding server "
        "(BENCHSMITH_EMBEDDINGS_BASE_URL, else OPENAI_BASE_URL: TEI, vLLM, Ollama, OpenAI), batched, "
        "cached in the workspace and counted in the run's usage, or a registered name.",
    )
    batch_size: int = setting_field(
        DEFAULT_INDEX_BATCH_SIZE,
        "Chunks embedded and stored per batch (the resume granularity).",
        low=1,
        high=MAX_INDEX_BATCH,
    )
