"""The one type of a progress callback, ``on_progress(done, total)``: ``done`` items of ``total``
finished, ``total`` None where it is not known in advance (files found while loading). Tools
call it; graphs pass graphs/runtime/progress.py's ``progress_reporter``, which streams the event. It
lives in stores/, the floor that both tools and graphs may import (tests/test_architecture.py).
"""

from __future__ import annotations

from collections.abc import Callable

ProgressCallback = Callable[[int, int | None], None]
