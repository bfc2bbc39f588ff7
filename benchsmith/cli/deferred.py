"""Job functions that load when first called, so that starting the CLI (``benchsmith --help``)
loads no model client, Chroma, torch or scipy: only the command that runs pays for its job.

Each command module binds its jobs with :func:`deferred` at module level, so they stay module
attributes (a test can replace ``benchsmith.cli.audit.run_audit``) without being imported.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import Any


def deferred(module: str, name: str) -> Callable[..., Any]:
    """A stand-in for ``module.name`` that imports the module on its first call."""

    @functools.cache
    def target() -> Callable[..., Any]:
        found: Callable[..., Any] = getattr(importlib.import_module(module), name)
        return found

    def call(*args: Any, **kwargs: Any) -> Any:
        return target()(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"{module}.{name}, imported on first call."
    return call
