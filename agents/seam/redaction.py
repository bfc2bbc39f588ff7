"""Secrets out of text: :func:`redact` masks API keys before text reaches a record, a log or an error.

It masks the value of ``OPENAI_API_KEY`` (read at call time) and every key the seam was given
(:func:`register_secret`), any ``Authorization: …`` header value, ``Bearer …`` tokens,
``sk-…``-style keys, ``api_key=…`` / ``"api-key": "…"`` pairs and the user:password part of URLs.
Graphs call it on error texts before writing run records.
"""

from __future__ import annotations

import os
import re
import threading

MASK = "[REDACTED]"
API_KEY_ENV = "OPENAI_API_KEY"
# Shorter values are placeholders ("x", "EMPTY"); masking every "x" would garble the text.
MIN_SECRET_CHARS = 8

_registered: set[str] = set()
_lock = threading.Lock()

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # The whole header value, up to the end of the line or a closing quote.
    (re.compile(r"(?i)(authorization[\"']?\s*[:=]\s*[\"']?)[^\"'\r\n,}]+"), rf"\1{MASK}"),
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=\-]+"), rf"\1{MASK}"),
    (re.compile(r"(?i)\b((?:x-)?api[_-]?key[\"']?\s*[:=]\s*[\"']?)[^\s\"'&,}]+"), rf"\1{MASK}"),
    (re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}"), MASK),
    (re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s@:]+:[^/\s@]+@"), rf"\1{MASK}@"),
)


def register_secret(value: str | None) -> None:
    """Mask ``value`` wherever :func:`redact` sees it from now on (this process)."""
    if value and len(value) >= MIN_SECRET_CHARS:
        with _lock:
            _registered.add(value)


def known_secrets() -> list[str]:
    """The literal secrets masked: registered keys and the current ``OPENAI_API_KEY``, longest first."""
    with _lock:
        secrets = set(_registered)
    if (key := os.environ.get(API_KEY_ENV)) and len(key) >= MIN_SECRET_CHARS:
        secrets.add(key)
    return sorted(secrets, key=len, reverse=True)


def redact(text: str) -> str:
    """``text`` with every secret the seam knows, and anything shaped like a credential, masked."""
    if not text:
        return text
    for secret in known_secrets():
        text = text.replace(secret, MASK)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text
