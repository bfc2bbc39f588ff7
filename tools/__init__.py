"""Deterministic operations the graph nodes call, in rooms from the top down: benchmark/,
retrieval/, corpus/, text/ (a room imports its own and those below it). Imports stores/ only."""
