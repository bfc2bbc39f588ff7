"""Everything that persists: workspace layout, run directories, JSONL files, Chroma
collections, the LangGraph checkpointer and the LLM response cache.

Imports none of graphs/, agents/, tools/ or evals/.
"""
