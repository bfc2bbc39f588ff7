"""Pieces of the output schemas that agents build for the size of a call (pydantic's create_model)."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, Field, create_model

SchemaFactory = TypeVar("SchemaFactory", bound=Callable[..., Any])
Schema = TypeVar("Schema", bound=BaseModel)


def sized(base: type[Schema], **fields: Any) -> type[Schema]:
    """``base`` with its ``fields`` (and ``__validators__``) made for one call's size, under the base's name: the
    schema a model is given; the base is the type its reply is read as."""
    made: type[Schema] = create_model(base.__name__, __base__=base, **fields)
    return made


def one_class_per_size(factory: SchemaFactory) -> SchemaFactory:
    """The schema ``factory`` makes for a size, made once and kept: two calls for one size get the same class. An
    ``lru_cache`` does not promise that: two threads that miss together each build a class, and a reply
    validated as one is no instance of the other (the audit's two judge threads: "scripted reply DocumentChoice
    is not a DocumentChoice"); nor does one that evicts. Sizes are a call's counts, so the classes kept are few."""
    made: dict[tuple[Any, ...], Any] = {}
    lock = threading.Lock()

    @functools.wraps(factory)
    def made_once(*size: Any) -> Any:
        with lock:
            if size not in made:
                made[size] = factory(*size)
            return made[size]

    return made_once  # type: ignore[return-value]


def exactly(count: int, item: Any, description: str | None = None) -> tuple[Any, Any]:
    """A create_model field: a list of exactly ``count`` ``item`` values (another length fails
    validation, and the call is retried)."""
    return list[item], Field(min_length=count, max_length=count, description=description)
