"""How state is kept: the workspace, run records and claims, the atomic writer, JSONL files and
record logs, SQLite, PostgreSQL, Chroma, the checkpointer, caches, usage ledger, work items."""
