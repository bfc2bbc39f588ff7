"""`benchsmith label` or `benchsmith review` in a process of its own, as a user starts it, with the
test collection's hashing embedder registered (the collection was embedded with it):
``python -m tests.label_server label|review ARGS...``."""

import sys

from benchsmith.cli import app
from benchsmith.graphs.runtime.resources import register_embedder
from tests.embedders import HashingEmbedder

if __name__ == "__main__":
    register_embedder(HashingEmbedder())
    app(sys.argv[1:], standalone_mode=True)
