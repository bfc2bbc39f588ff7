"""The settings of a paraphrase run (graphs/paraphrase/)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from benchsmith.agents.defaults import BASELINE
from benchsmith.graphs.contexts.audit import TURN_FILE_CORPUS_DESCRIPTION
from benchsmith.graphs.contexts.evaluate import SPLIT_DESCRIPTION
from benchsmith.graphs.runtime.bounds import MAX_TEST_SETS, MAX_VARIANTS
from benchsmith.graphs.runtime.ray_options import RayOptions
from benchsmith.graphs.runtime.settings import (
    ModelOptions,
    StoreOptions,
    concurrency_field,
    seed_field,
    setting_field,
    share_field,
)
from benchsmith.tools.benchmark.test_sets import DEFAULT_TEST_SETS
from benchsmith.tools.defaults import DEFAULT_EMBEDDER, DEFAULT_MAX_SENTENCE_SCORE, DEFAULT_PARAPHRASE_MIN_SIMILARITY

DEFAULT_PER_TURN = 5
DEFAULT_MIN_JUDGE_SCORE = 4


@dataclass(kw_only=True)
class ParaphraseContext(RayOptions, StoreOptions, ModelOptions):
    """Settings of one paraphrase run (not checkpointed: the CLI passes them again on resume)."""

    llm: str = setting_field(
        BASELINE,
        "Model of the rewriter, paraphraser and context restorer: 'baseline' (offline, deterministic "
        "rewordings: the plumbing path), openai:<model> or a registered name.",
    )
    per_turn: int | None = setting_field(
        None,
        "Paraphrases generated per turn (with import_ecast: also generate); empty: 5, or 0 (only "
        "import) with import_ecast.",
        low=0,
        high=MAX_VARIANTS,
        show_default="5, or 0 with --import-ecast",
    )
    import_ecast: str | None = setting_field(
        None,
        "Join the paraphrases of an ECAsT.csv (TURN_ID, MANUAL PARAPHRASE, RAW PARAPHRASE) to the "
        "benchmark's turns, kept as given, instead of generating; rows of other turns are counted "
        "as unjoined.",
    )
    judges: tuple[str, ...] = setting_field(
        (),
        "A judge model rating each generated variant's equivalence and conversational fit (1-5). "
        "Repeat for an ensemble; none: no judge.",
        cli="--judge",
    )
    min_judge_score: int = setting_field(
        DEFAULT_MIN_JUDGE_SCORE,
        "A judged variant is kept when the judges' mean equivalence and mean fit both reach this.",
        low=1,
        high=5,
    )
    overlap_metric: Literal["bleu", "chrf"] = setting_field(
        "bleu", "Sentence measure (sacrebleu) that finds near-duplicates: bleu or chrf."
    )
    max_sentence_score: float = setting_field(
        DEFAULT_MAX_SENTENCE_SCORE,
        "A variant whose sentence BLEU/chrF (0-100, the overlap metric) with its source or a kept "
        "variant exceeds this is dropped as a near-duplicate.",
        low=0.0,
        high=100.0,
        old_cli="--max-overlap",
    )
    min_similarity: float = share_field(
        "A variant whose embedding cosine to its source is below this is dropped (0: no check).",
        default=DEFAULT_PARAPHRASE_MIN_SIMILARITY,
    )
    embedder: str = setting_field(
        DEFAULT_EMBEDDER,
        "Embedder of the meaning check (a sentence-transformers name or path, openai:<model>, or a registered name).",
    )
    test_sets: int = setting_field(
        DEFAULT_TEST_SETS, "Test sets R1..Rn drawn (one variant per turn each, seeded).", low=1, high=MAX_TEST_SETS
    )
    seed: int = seed_field("Seed of the test sets and the model calls.")
    corpus: str | None = setting_field(
        None, f"{TURN_FILE_CORPUS_DESCRIPTION} Optional: paraphrasing reads no document."
    )
    qrels: str | None = setting_field(
        None, "TREC qrels of the benchmark (CAsT ships them apart), shared by the test sets."
    )
    split: str = setting_field("test", SPLIT_DESCRIPTION)
    concurrency: int = concurrency_field("Turns paraphrased at once.")

    def __post_init__(self) -> None:
        # An unset per_turn depends on import_ecast: importing alone generates nothing.
        if self.per_turn is None:
            self.per_turn = self.paraphrases_per_turn

    @property
    def paraphrases_per_turn(self) -> int:
        """``per_turn``, or what an unset one stands for: 5, or 0 with ``import_ecast``."""
        if self.per_turn is not None:
            return self.per_turn
        return 0 if self.import_ecast else DEFAULT_PER_TURN
