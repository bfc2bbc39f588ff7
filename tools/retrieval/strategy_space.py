"""The strategy space of a configuration search (``benchsmith select``), and its configurations.

Six dimensions, each a list of levels (the first level is the baseline):

* ``chunking``: ``whole`` or ``size=N[,overlap=N][,merge=N][,split_above=N]`` (tools/retrieval/chunking_strategies.py);
* ``retriever``: the ``--retriever`` grammar of tools/retrieval/retriever_specs.py (``bm25``,
  ``dense[:MODEL]``, ``hybrid:rrf(dense,bm25)``, ``hybrid:wsum(dense=0.7,bm25=0.3)``...); the
  user's own retrievers given there (``SPEC`` or ``SPEC@raw``, each alone) are no levels but fixed
  configurations (:class:`OutsideConfiguration`), kept apart under the space's ``outside``;
* ``rewrite``: ``none`` (the query as asked; a conversational one with its history),
  ``rewrite`` (a model's self-contained rewrite, agents/rewriter.py) or ``expand:N`` (the
  query plus up to N alternative queries a model writes, their results fused by RRF);
* ``rerank``: ``none`` or a cross-encoder (name, path or registered name);
* ``filter``: ``none`` or metadata predicates (tools/retrieval/metadata_filters.py);
* ``top_k``: chunks the configuration hands to the generator.

Search: ``grid`` (every combination) or ``staged``, greedy per dimension in a given order
(SEARA searched 96 candidate pipelines this way): stage 1 varies the first dimension of the
order with every other at its baseline, keeps its best level, stage 2 varies the next, and so on.

A space is kept as plain JSON (graph input, run settings): ``{"search", "order", <dimension>:
[level labels]}``; every label is canonical, so equal settings always give equal names.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchsmith.stores.errors import InputError
from benchsmith.tools.defaults import MAX_TOP_K
from benchsmith.tools.retrieval.chunking_strategies import ChunkingSpec, parse_chunking
from benchsmith.tools.retrieval.metadata_filters import NONE, MetadataFilter, parse_filter
from benchsmith.tools.retrieval.outside_retrievers import is_outside_spec
from benchsmith.tools.retrieval.retriever_specs import RetrieverSpec, parse_retriever

DIMENSIONS = ("chunking", "retriever", "rewrite", "rerank", "filter", "top_k")
DEFAULT_LEVELS: dict[str, list[Any]] = {
    "chunking": ["whole"],
    "retriever": ["bm25"],
    "rewrite": [NONE],
    "rerank": [NONE],
    "filter": [NONE],
    "top_k": [10],
}
SEARCH_MODES = ("grid", "staged")
EXPAND = re.compile(r"expand:(\d+)")
MAX_EXPANSIONS = 10
FILE_UNSAFE = re.compile(r"[^A-Za-z0-9._=-]+")
SPACE_KEYS = {*DIMENSIONS, "search", "order", "outside"}
RAW = "raw"  # the history mode of an outside retriever that builds its own query (query_building.py)
OWN_LEVEL = "(its own)"  # an outside configuration's chunking, reranking and filters


@dataclass(frozen=True)
class RewriteSpec:
    kind: str  # none, rewrite, expand
    expansions: int = 0  # expand: alternative queries asked for

    @property
    def label(self) -> str:
        return f"expand:{self.expansions}" if self.kind == "expand" else self.kind


def parse_rewrite(text: str) -> RewriteSpec:
    text = str(text).strip()
    if text in (NONE, "rewrite"):
        return RewriteSpec(text)
    match = EXPAND.fullmatch(text)
    if match and 1 <= int(match.group(1)) <= MAX_EXPANSIONS:
        return RewriteSpec("expand", int(match.group(1)))
    raise InputError(f"unknown rewrite {text!r}: use none, rewrite or expand:N (1 ≤ N ≤ {MAX_EXPANSIONS})")


@dataclass(frozen=True)
class SelectConfiguration:
    """One candidate pipeline: a level of every dimension."""

    chunking: ChunkingSpec
    retriever: RetrieverSpec
    rewrite: RewriteSpec
    rerank: str | None
    filter: MetadataFilter
    top_k: int

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> SelectConfiguration:
        rerank = str(settings["rerank"])
        return cls(
            parse_chunking(settings["chunking"]),
            parse_retriever(str(settings["retriever"])),
            parse_rewrite(settings["rewrite"]),
            None if rerank == NONE else rerank,
            parse_filter(settings["filter"]),
            int(settings["top_k"]),
        )

    def settings(self) -> dict[str, Any]:
        return {
            "chunking": self.chunking.label,
            "retriever": self.retriever.label,
            "rewrite": self.rewrite.label,
            "rerank": self.rerank or NONE,
            "filter": self.filter.label,
            "top_k": self.top_k,
        }

    @property
    def name(self) -> str:
        """``chunks(size=512) hybrid:rrf(dense,bm25) rewrite(expand:3) rerank(MODEL) filter(...) k=10``;
        dimensions at none are left out."""
        parts = [f"chunks({self.chunking.label})", self.retriever.label]
        if self.rewrite.kind != NONE:
            parts.append(f"rewrite({self.rewrite.label})")
        if self.rerank:
            parts.append(f"rerank({self.rerank})")
        if self.filter.predicates:
            parts.append(f"filter({self.filter.label.replace(' ', '')})")
        parts.append(f"k={self.top_k}")
        return " ".join(parts)

    @property
    def file_stem(self) -> str:
        return file_stem_of(self.name)


def file_stem_of(name: str) -> str:
    """A file name for a configuration: readable, and unique by a hash of the full name (two names
    may differ only in characters a file name cannot hold)."""
    readable = FILE_UNSAFE.sub("_", name).strip("_")[:120]
    return f"{readable}-{hashlib.sha1(name.encode('utf-8')).hexdigest()[:8]}"


def outside_label(text: str) -> str | None:
    """The canonical label of a retriever level that is the user's own retriever alone
    (``SPEC`` or ``SPEC@raw``), else None; a fusion with one is refused: select cannot fuse the
    ids of another index with its chunks'."""
    text = str(text).strip()
    base, _, mode = text.rpartition("@")
    raw = mode == RAW and is_outside_spec(base)
    spec = parse_retriever(base if raw else text)
    if spec.kind == "outside":
        return spec.label + (f"@{RAW}" if raw else "")
    own = [part.label for part in spec.components if part.kind == "outside"]
    if own:
        raise InputError(
            f"strategy space: retriever {spec.label!r} fuses your own retriever ({own[0]}) with select's, which "
            "select cannot do: your retriever answers with ids and passages of its own index, not select's "
            f"chunks. Give it alone (--retriever {own[0]}): it is then one more configuration, judged beside "
            "select's"
        )
    return None


@dataclass(frozen=True)
class OutsideConfiguration:
    """The user's own retriever as one fixed configuration of a search: asked for its top K
    (the space's first top_k level) per query, its chunking, filters and reranking its own."""

    spec: str  # the retriever spec (URL, py:module:object, registered name)
    history: str  # "full": select's query (the question with its conversation); "raw": the question and the turns
    top_k: int

    @classmethod
    def from_label(cls, label: str, top_k: int) -> OutsideConfiguration:
        spec, _, mode = label.rpartition("@")
        return cls(spec, RAW, top_k) if mode == RAW and is_outside_spec(spec) else cls(label, "full", top_k)

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> OutsideConfiguration:
        return cls(str(settings["retriever"]), str(settings["history"]), int(settings["top_k"]))

    def settings(self) -> dict[str, Any]:
        """The dimensions as the report's tables show them (its own chunking, reranking and filters)."""
        return {
            "chunking": OWN_LEVEL,
            "retriever": self.spec,
            "rewrite": RAW if self.history == RAW else NONE,
            "rerank": OWN_LEVEL,
            "filter": OWN_LEVEL,
            "top_k": self.top_k,
            "history": self.history,
            "outside": True,
        }

    @property
    def name(self) -> str:
        """``outside(http://HOST/PATH) k=10``, ``outside(SPEC@raw) k=10``."""
        return f"outside({self.spec}{'@' + RAW if self.history == RAW else ''}) k={self.top_k}"

    @property
    def file_stem(self) -> str:
        return file_stem_of(self.name)


def outside_configurations(space: Mapping[str, Any]) -> list[OutsideConfiguration]:
    """The space's outside configurations, each at its first top_k level."""
    return [OutsideConfiguration.from_label(label, space["top_k"][0]) for label in space.get("outside", [])]


def _levels(dimension: str, values: Any) -> list[Any]:
    values = values if isinstance(values, list | tuple) else [values]
    if not values:
        raise InputError(f"strategy space: {dimension} needs at least one level")
    labels: list[Any] = []
    for value in values:
        if dimension == "chunking":
            label: Any = parse_chunking(value).label
        elif dimension == "retriever":
            label = parse_retriever(str(value)).label
        elif dimension == "rewrite":
            label = parse_rewrite(value).label
        elif dimension == "rerank":
            label = str(value).strip() if value not in (None, False) else NONE
            if not label:
                raise InputError("strategy space: an empty rerank level; use none or a cross-encoder")
        elif dimension == "filter":
            label = parse_filter(None if value in (None, False) else str(value)).label
        else:  # top_k
            if (
                isinstance(value, bool)
                or not isinstance(value, int | str)
                or not str(value).strip().isdigit()
                or not 1 <= int(value) <= MAX_TOP_K
            ):
                raise InputError(f"strategy space: top_k must be whole numbers within [1, {MAX_TOP_K}], got {value!r}")
            label = int(value)
        if label not in labels:
            labels.append(label)
    return labels


def build_space(
    levels: Mapping[str, Any], search: str = "grid", order: Sequence[str] = (), outside: Sequence[str] = ()
) -> dict[str, Any]:
    """A checked, canonical space from levels per dimension (missing dimensions take their default).
    The user's own retrievers among the retriever levels (and ``outside``) are kept apart under
    ``outside``, present only when there are some: fixed configurations, not levels (select's
    retriever levels default to bm25 when those are all)."""
    unknown = sorted(set(levels) - set(DIMENSIONS))
    if unknown:
        raise InputError(f"strategy space: unknown dimension(s) {', '.join(unknown)} (use {', '.join(DIMENSIONS)})")
    if search not in SEARCH_MODES:
        raise InputError(f"strategy space: search must be grid or staged, got {search!r}")
    space: dict[str, Any] = {"search": search}
    given = levels.get("retriever", DEFAULT_LEVELS["retriever"])
    given = [*(given if isinstance(given, list | tuple) else [given]), *outside]
    own = [label for label in map(outside_label, given) if label is not None]
    if own:
        select_levels = [value for value in given if outside_label(value) is None]
        levels = {**levels, "retriever": select_levels or DEFAULT_LEVELS["retriever"]}
    for dimension in DIMENSIONS:
        space[dimension] = _levels(dimension, levels.get(dimension, DEFAULT_LEVELS[dimension]))
    varied = [dimension for dimension in DIMENSIONS if len(space[dimension]) > 1]
    order = list(order)
    for dimension in order:
        if dimension not in DIMENSIONS:
            raise InputError(
                f"strategy space: order names unknown dimension {dimension!r} (use {', '.join(DIMENSIONS)})"
            )
    if len(set(order)) != len(order):
        raise InputError("strategy space: order names a dimension twice")
    if search == "staged":
        missing = [dimension for dimension in varied if dimension not in order]
        if order and missing:
            raise InputError(
                f"strategy space: the staged order must name every dimension with several levels; "
                f"missing {', '.join(missing)}"
            )
        order = [dimension for dimension in (order or varied) if dimension in varied]
    space["order"] = order
    if own:
        space["outside"] = list(dict.fromkeys(own))
    return space


def space_from_mapping(raw: Any, where: str) -> dict[str, Any]:
    """A space from a parsed YAML (or JSON) mapping; ``where`` names the file in errors."""
    if not isinstance(raw, Mapping):
        raise InputError(f"{where}: a strategy space is a mapping of dimensions to lists of levels")
    unknown = sorted(str(key) for key in raw if key not in SPACE_KEYS)
    if unknown:
        raise InputError(f"{where}: unknown key(s) {', '.join(unknown)} (use {', '.join(sorted(SPACE_KEYS))})")
    order = raw.get("order") or []
    if not isinstance(order, list):
        raise InputError(f"{where}: order is a list of dimensions")
    outside = raw.get("outside") or []
    if not isinstance(outside, list):
        raise InputError(f"{where}: outside is a list of your own retrievers")
    try:
        return build_space(
            {key: raw[key] for key in DIMENSIONS if key in raw},
            str(raw.get("search", "grid")),
            [str(dimension) for dimension in order],
            [str(spec) for spec in outside],
        )
    except InputError as error:
        raise InputError(f"{where}: {error}") from None


def baseline_settings(space: Mapping[str, Any]) -> dict[str, Any]:
    return {dimension: space[dimension][0] for dimension in DIMENSIONS}


def grid_settings(space: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every combination of levels, the first dimension varying slowest."""
    return [dict(zip(DIMENSIONS, combination)) for combination in itertools.product(*(space[d] for d in DIMENSIONS))]


def stage_settings(space: Mapping[str, Any], stage: int, chosen: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The configurations of a staged search's ``stage`` (0-based): the stage's dimension at each
    of its levels, the dimensions of earlier stages at their ``chosen`` levels, the rest at baseline."""
    dimension = space["order"][stage]
    fixed = {**baseline_settings(space), **{d: chosen[d] for d in space["order"][:stage]}}
    return [{**fixed, dimension: level} for level in space[dimension]]


def planned_settings(space: Mapping[str, Any]) -> list[dict[str, Any]]:
    """What a search may evaluate: the whole grid, or for a staged search every configuration
    any stage could reach (the baseline plus one more per further level of each ordered dimension)."""
    if space["search"] == "grid" or not space["order"]:
        return grid_settings(space) if space["search"] == "grid" else [baseline_settings(space)]
    settings = [baseline_settings(space)]
    for dimension in space["order"]:
        settings += [{**baseline_settings(space), dimension: level} for level in space[dimension][1:]]
    return settings


def stage_count(space: Mapping[str, Any]) -> int:
    return max(1, len(space["order"])) if space["search"] == "staged" else 1
