"""Retriever specs and the evaluation configurations built from them.

Spec grammar (the ``--retriever`` option):

* ``bm25``
* ``dense`` (the default embedder) or ``dense:MODEL`` (any sentence-transformers name or path, or
  ``openai:<model>`` for an embedding server)
* ``hybrid:METHOD(A,B[,...])`` with METHOD ``rrf`` or ``combsum`` and components ``bm25``,
  ``dense[:MODEL]`` or outside retrievers; ``hybrid:wsum(dense=0.7,bm25=0.3)`` gives each component a weight.
* the user's own retriever (kind ``outside``, tools/retrieval/outside_retrievers.py): ``http://HOST/PATH``
  (the documented JSON contract), ``py:package.module:object`` (a LangChain ``BaseRetriever`` or a
  callable ``(query, history, k) -> [(doc_id, score)]``) or a name given to ``register_retriever``.
  With the history mode ``raw`` it gets the current question and the earlier turns as they are
  (the system builds its own query); with any other mode, the query benchsmith built.

A configuration is a retriever, a history mode and an optional reranker; its name reads
``<retriever>[+rerank]@<history>``, e.g. ``hybrid:rrf(dense,bm25)@oracle``. A TREC run file
of the user's own system is a configuration too (:class:`RunFileConfiguration`), named by its
file name and measured as it is.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchsmith.stores.errors import InputError
from benchsmith.tools.retrieval.fusion import FUSION_METHODS, FusionMethod, is_fusion_method
from benchsmith.tools.retrieval.outside_retrievers import is_outside_spec, resolve_retriever
from benchsmith.tools.retrieval.query_building import HistoryMode

HYBRID = re.compile(r"hybrid:(\w+)\((.*)\)")
FILE_UNSAFE = re.compile(r"[^A-Za-z0-9._=-]+")


@dataclass(frozen=True)
class RetrieverSpec:
    kind: str  # bm25, dense, hybrid, outside
    model: str | None = None  # dense: the embedder; outside: its spec (URL, py:module:object, registered name)
    method: FusionMethod | None = None  # hybrid: rrf, combsum, wsum
    components: tuple[RetrieverSpec, ...] = ()
    weights: tuple[float, ...] | None = None

    @property
    def label(self) -> str:
        if self.kind == "dense":
            return f"dense:{self.model}" if self.model else "dense"
        if self.kind == "hybrid":
            parts = [
                component.label + (f"={weight:g}" if self.weights else "")
                for component, weight in zip(self.components, self.weights or [None] * len(self.components))
            ]
            return f"hybrid:{self.method}({','.join(parts)})"
        if self.kind == "outside":
            return str(self.model)
        return self.kind


def parse_retriever(text: str) -> RetrieverSpec:
    text = text.strip()
    if is_outside_spec(text):
        return RetrieverSpec("outside", model=text)
    if text == "bm25":
        return RetrieverSpec("bm25")
    if text == "dense" or text.startswith("dense:"):
        model = text.partition(":")[2] or None
        return RetrieverSpec("dense", model=None if model in (None, "default") else model)
    match = HYBRID.fullmatch(text)
    if match:
        method, inner = match.groups()
        if not is_fusion_method(method):
            raise InputError(
                f"--retriever {text!r}: unknown fusion method {method!r} (use {', '.join(FUSION_METHODS)})"
            )
        parts = [part.strip() for part in inner.split(",") if part.strip()]
        weights: list[float] = []
        components = []
        for part in parts:
            name, _, weight = part.partition("=")
            component = parse_retriever(name)
            if component.kind == "hybrid":
                raise InputError(f"--retriever {text!r}: fuse bm25 and dense runs, not hybrids")
            components.append(component)
            if weight:
                try:
                    weights.append(float(weight))
                except ValueError:
                    raise InputError(f"--retriever {text!r}: weight {weight!r} is not a number") from None
        if len(components) < 2:
            raise InputError(f"--retriever {text!r}: fusion needs at least two retrievers")
        if method == "wsum" and len(weights) != len(components):
            raise InputError(
                f"--retriever {text!r}: wsum needs a weight for each retriever, e.g. wsum(dense=0.7,bm25=0.3)"
            )
        if method != "wsum" and weights:
            raise InputError(f"--retriever {text!r}: only wsum takes weights")
        return RetrieverSpec(
            "hybrid", method=method, components=tuple(components), weights=tuple(weights) if weights else None
        )
    raise InputError(
        f"unknown retriever {text!r}: use bm25, dense[:MODEL], hybrid:rrf(dense,bm25), http://HOST/PATH, "
        "py:package.module:object or a registered retriever's name"
    )


def check_outside_retrievers(specs: Sequence[RetrieverSpec]) -> None:
    """Each outside retriever (alone or fused) resolves: a registered name, a URL, or a
    ``py:module:object`` that imports and is a LangChain retriever or a callable (else an InputError)."""
    for spec in specs:
        for part in (spec, *spec.components):
            if part.kind == "outside":
                resolve_retriever(str(part.model))


@dataclass(frozen=True)
class Configuration:
    retriever: RetrieverSpec
    history: HistoryMode
    rerank: bool = False

    @property
    def name(self) -> str:
        return f"{self.retriever.label}{'+rerank' if self.rerank else ''}@{self.history.label}"

    @property
    def file_stem(self) -> str:
        return FILE_UNSAFE.sub("_", self.name)

    @property
    def stage(self) -> int:
        """0: first-stage retrievers; 1: fusions of them; 2: reranked configurations."""
        return 2 if self.rerank else (1 if self.retriever.kind == "hybrid" else 0)

    @property
    def inputs(self) -> list[Configuration]:
        """The configurations whose runs this one is computed from."""
        if self.rerank:
            return [Configuration(self.retriever, self.history)]
        return [Configuration(component, self.history) for component in self.retriever.components]


def takes_history(retriever: RetrieverSpec) -> bool:
    """Whether the retriever can take the conversation as it is (history mode ``raw``): an outside
    retriever, or a fusion of outside retrievers only."""
    parts = retriever.components or (retriever,)
    return all(part.kind == "outside" for part in parts)


def expand_configurations(
    retrievers: list[RetrieverSpec], histories: list[HistoryMode], rerank: bool
) -> list[Configuration]:
    """Every retriever × history (× reranked), plus the components fusions need, ordered by
    stage so that each configuration's inputs come before it; no duplicates. The history mode
    ``raw`` goes only to the retrievers that build their own query (:func:`takes_history`)."""
    if any(history.kind == "raw" for history in histories) and not any(map(takes_history, retrievers)):
        raise InputError(
            "--history raw hands the conversation to your own retriever, which builds its own query: give one "
            "(http://HOST/PATH, py:module:object or a registered name)"
        )
    requested = [
        Configuration(retriever, history)
        for history in histories
        for retriever in retrievers
        if history.kind != "raw" or takes_history(retriever)  # raw is for systems that build their own query
    ]
    if lacking := [r.label for r in retrievers if not any(c.retriever == r for c in requested)]:
        raise InputError(
            f"{', '.join(lacking)} build no query of their own: give them a history mode besides raw "
            "(full, last:K, current, rewrite or oracle)"
        )
    if rerank:
        requested += [Configuration(c.retriever, c.history, rerank=True) for c in requested]
    everything: dict[Configuration, None] = {}

    def add(configuration: Configuration) -> None:
        for needed in configuration.inputs:
            add(needed)
        everything.setdefault(configuration)

    for configuration in requested:
        add(configuration)
    return sorted(everything, key=lambda configuration: configuration.stage)


@dataclass(frozen=True)
class RunFileConfiguration:
    """A TREC run file of the user's own system, evaluated as it is beside the retrievers."""

    path: str  # where the user's file is
    name: str  # its file name
    rerank: bool = False  # run files are measured as given, never reranked

    @property
    def file_stem(self) -> str:
        return "run-" + FILE_UNSAFE.sub("_", self.name)  # never the stem of a retriever's run file

    @property
    def stage(self) -> int:
        return 0

    @property
    def inputs(self) -> list[Configuration]:
        return []


def run_file_configurations(paths: Sequence[str], taken: Collection[str] = ()) -> list[RunFileConfiguration]:
    """One configuration per run file, named by its file name; two files of one name, or a file
    named like a retriever configuration, are refused (rename one)."""
    configurations: dict[str, RunFileConfiguration] = {}
    for path in paths:
        name = Path(path).name
        if name in configurations:
            raise InputError(
                f"--run {path} and --run {configurations[name].path} share the name {name!r}, which "
                "names their results: rename one"
            )
        if name in taken:
            raise InputError(
                f"--run {path}: its file name {name!r} is also a retriever configuration's name: rename it"
            )
        configurations[name] = RunFileConfiguration(str(path), name)
    return list(configurations.values())
