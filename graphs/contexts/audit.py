"""The settings of an audit (graphs/audit/)."""

from __future__ import annotations

from dataclasses import dataclass

from benchsmith.evals.defaults import DEFAULT_MIN_VOTES
from benchsmith.evals.measures.question_form import DEFAULT_MANY_DOCUMENTS
from benchsmith.graphs.contexts.evaluate import SPLIT_DESCRIPTION
from benchsmith.graphs.runtime.bounds import MAX_ITEMS, MAX_JUDGES, MAX_NEGATIVES, MAX_POOL_DEPTH
from benchsmith.graphs.runtime.ray_options import RayOptions
from benchsmith.graphs.runtime.settings import (
    ModelOptions,
    StoreOptions,
    concurrency_field,
    seed_field,
    setting_field,
    share_field,
)
from benchsmith.tools.defaults import DEFAULT_EMBEDDER

DEFAULT_NEGATIVES = 4
DEFAULT_LABEL_POOL_DEPTH = 5
DEFAULT_LABEL_AGREEMENT = 0.8
TURN_FILE_CORPUS_DESCRIPTION = "The BEIR corpus.jsonl of a benchmark given as a turn JSONL file."


@dataclass(kw_only=True)
class AuditContext(RayOptions, StoreOptions, ModelOptions):
    """Settings of one audit (not checkpointed: the CLI passes them again on resume)."""

    split: str = setting_field("test", SPLIT_DESCRIPTION)
    corpus: str | None = setting_field(None, TURN_FILE_CORPUS_DESCRIPTION)
    negatives: int = setting_field(
        DEFAULT_NEGATIVES, "Hard negatives shown with the gold document in each pool.", low=1, high=MAX_NEGATIVES
    )
    sample: int | None = setting_field(
        None, "Audit a seeded random sample of this many instances; empty: all of them.", low=1, high=MAX_ITEMS
    )
    seed: int = seed_field("Seed for the sample, the pool orders and model calls.")
    position_check: bool = setting_field(
        False, "Show each pool a second time, rotated, to measure the judges' position bias."
    )
    min_votes: int = setting_field(
        DEFAULT_MIN_VOTES,
        "Judges that must pick an unlabelled document (and be a majority) to confirm it as missing "
        "gold; with fewer judges, candidates are only suspected.",
        low=1,
        high=MAX_JUDGES,
    )
    label_pool_depth: int = setting_field(
        DEFAULT_LABEL_POOL_DEPTH,
        "Chunks each retriever (BM25 and the dense one) adds to the pool a labelled turn is checked "
        "on: an unanswerable turn is rejected when the judges find an answering chunk there, an "
        "underspecified turn without candidates must fit two of them. 5 each pools up to 10 chunks, "
        "the 10 synthesis's label judge reads.",
        low=1,
        high=MAX_POOL_DEPTH,
    )
    label_agreement: float = share_field(
        "The verdict notes a turn label (unanswerable, underspecified, multi-passage, partial) whose "
        "share of turns the judges confirm is below this; 0.8 is a starting point, not a measured "
        "limit.",
        default=DEFAULT_LABEL_AGREEMENT,
    )
    many_documents: int = setting_field(
        DEFAULT_MANY_DOCUMENTS,
        "A question quoting a span found in at least this many corpus documents is ill-formed "
        "(it could be about any of them) and counts as noise.",
        low=1,
        high=MAX_POOL_DEPTH,
    )
    embedder: str = setting_field(
        DEFAULT_EMBEDDER,
        "Embedder of the dense retriever that finds hard negatives (a sentence-transformers name "
        "or path, openai:<model>, or a registered name).",
    )
    concurrency: int = concurrency_field("Instances judged at once.")
