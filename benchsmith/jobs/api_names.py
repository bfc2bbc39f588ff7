"""Errors raised through the Python API name the API's keywords, not the command line's flags.

The jobs word their :class:`~benchsmith.stores.errors.InputError` messages for the command line
(``--human PATH: not a BEIR directory``), which most users meet first. A caller of
``benchsmith.validate(human=...)`` gets ``human=PATH: not a BEIR directory`` instead: each flag is
replaced by the keyword of the function called, the one declared for it (a setting's ``cli``
metadata) or the parameter its name gives (``--retriever`` → ``retrievers``, ``--history`` →
``histories``). A command quoted whole in backticks stays as written.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable, Collection, Mapping
from typing import Any

from benchsmith.graphs.runtime.settings import flags_of, user_settings
from benchsmith.stores.errors import InputError

FLAG = re.compile(r"(?<![\w-])--([a-z][a-z0-9-]*)( (?=\S))?")
# Words after a flag that begin the sentence rather than give the flag's value.
SENTENCE_WORDS = frozenset(
    """must is are needs need and or to of with may makes describes sources values given was
has have takes expects names for only at in the a an when if cannot can first file files will does do not""".split()
)


def api_keyword(flag: str, parameters: Collection[str], declared: Mapping[str, str]) -> str | None:
    """The keyword of ``flag`` (``--x-y``) in a function taking ``parameters``; None when it has none."""
    if flag in declared:
        return declared[flag]
    base = flag.removeprefix("--").replace("-", "_")
    for candidate in (base, f"{base}s", f"{base[:-1]}ies" if base.endswith("y") else ""):
        if candidate in parameters:
            return candidate
    return None


def api_message(message: str, function: Callable[..., Any]) -> str:
    """``message`` with each command-line flag the function has a keyword for replaced by it:
    ``--flag VALUE`` as ``keyword=VALUE``, a bare ``--flag`` as ``keyword``."""
    parameters = inspect.signature(function).parameters
    context = getattr(function, "__settings_context__", None)
    declared = {flag: item.name for item in (user_settings(context) if context else ()) for flag in flags_of(item)}

    def replaced(match: re.Match[str]) -> str:
        keyword = api_keyword(f"--{match.group(1)}", parameters, declared)
        if keyword is None:
            return match.group(0)
        after = match.string[match.end() :]
        valued = match.group(2) and after.split(maxsplit=1)[0].lower().strip("(),:;") not in SENTENCE_WORDS
        return f"{keyword}=" if valued else f"{keyword}{match.group(2) or ''}"

    pieces = message.split("`")
    return "`".join(FLAG.sub(replaced, piece) if index % 2 == 0 else piece for index, piece in enumerate(pieces))


def speaking_the_api(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` whose InputErrors name its keywords (the same error type, the same traceback)."""

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except InputError as error:
            worded = api_message(str(error), function)
            if worded == str(error):
                raise
            raise type(error)(worded).with_traceback(error.__traceback__) from None

    return call
