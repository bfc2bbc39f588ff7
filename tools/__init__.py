"""Deterministic operations the graph nodes call: loading, cleaning, chunking, dedup,
quality filtering and embedding. Imports stores/ only."""
