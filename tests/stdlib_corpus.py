"""The standard-library demo corpus, loaded once per test session (about 5 s)."""

from functools import lru_cache

from benchsmith.tools.corpus.documents import Document
from benchsmith.tools.corpus.loaders import load_sources


@lru_cache(maxsize=1)
def stdlib_documents() -> tuple[Document, ...]:
    return tuple(load_sources(["stdlib"]).documents)
