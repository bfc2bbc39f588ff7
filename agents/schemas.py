"""Pieces of the output schemas that agents build for the size of a call (pydantic's create_model)."""

from __future__ import annotations

from typing import Any

from pydantic import Field


def exactly(count: int, item: Any, description: str | None = None) -> tuple[Any, Any]:
    """A create_model field: a list of exactly ``count`` ``item`` values (another length fails
    validation, and the call is retried)."""
    return list[item], Field(min_length=count, max_length=count, description=description)
