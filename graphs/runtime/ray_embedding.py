"""An in-process embedder (a sentence-transformers model, a registered one) run by Ray actors, one per
CPU of the cluster, each holding the model: ingestion's embed stage with ``--ray``
(graphs/ingest.py). The stage's own process stays the one writer of the collection and keeps the
embedding cache; each ``encode`` call's texts are cut into slices, one slice per actor call.

An actor lost with its node is not restarted on the spot (the cluster may have no CPU free for it
until a node joins): its slices go to the actors left, so nothing is lost and, the slices being
pure functions of their texts, nothing is stored twice. Only when no actor is left is a new one
asked for, to run when the cluster has room.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from benchsmith.graphs.runtime.ray_items import _ray, connect
from benchsmith.graphs.runtime.resources import embedder_for, register_objects, registered_objects


class _EmbeddingActor:
    """On a node: the embedder of ``spec``, the driver's registered embedders known by name."""

    def __init__(self, spec: str, registered: dict[str, dict[str, Any]]):
        register_objects(registered)
        self.embedder = embedder_for(spec)

    def name(self) -> str:
        return str(self.embedder.name)

    def encode(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self.embedder.encode(texts), dtype=np.float32)


class RayEmbedder:
    """``spec``'s embedder on actors of the Ray cluster at ``address``; ``slice_size`` texts per call.
    :meth:`close` ends the actors."""

    def __init__(self, spec: str, address: str, slice_size: int):
        connect(address)
        ray = _ray()
        self.spec, self.slice_size = spec, slice_size
        self._remote = ray.remote(num_cpus=1, max_restarts=0)(_EmbeddingActor)
        self._registered = ray.put(registered_objects())
        self.actors = [self._started() for _ in range(max(1, int(ray.cluster_resources().get("CPU", 1))))]
        self.name = ray.get(self.actors[0].name.remote())

    def _started(self) -> Any:
        return self._remote.remote(self.spec, self._registered)

    @property
    def actor_count(self) -> int:
        return len(self.actors)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        ray = _ray()
        slices = [list(texts[start : start + self.slice_size]) for start in range(0, len(texts), self.slice_size)]
        vectors: dict[int, np.ndarray] = {}
        waiting = list(range(len(slices)))
        while waiting:
            calls = [(index, self.actors[turn % len(self.actors)]) for turn, index in enumerate(waiting)]
            references = [(index, actor, actor.encode.remote(slices[index])) for index, actor in calls]
            waiting = []
            for index, actor, reference in references:
                try:
                    vectors[index] = ray.get(reference)
                except ray.exceptions.RayActorError:  # its node was lost: the slice goes to another actor
                    waiting.append(index)
                    if actor in self.actors:
                        self.actors.remove(actor)
            if not self.actors:
                self.actors.append(self._started())
        if not slices:
            return np.zeros((0, 0), dtype=np.float32)
        return np.concatenate([vectors[index] for index in range(len(slices))])

    def close(self) -> None:
        ray = _ray()
        for actor in self.actors:
            ray.kill(actor)
        self.actors = []
