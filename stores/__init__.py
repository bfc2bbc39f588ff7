"""Everything that persists, in two rooms: formats/ (the files of the field) above persistence/
(workspace, runs, JSONL, SQLite, PostgreSQL, Chroma, caches).

Imports none of graphs/, agents/, tools/ or evals/.
"""
