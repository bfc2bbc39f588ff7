"""The configuration search of ``benchsmith select`` (SEARA): the graph (graph.py), its state and
files (state.py), what its nodes read (inputs.py), what it retrieves with (retrieval.py), how its
pool is judged (judging.py) and measured (results.py), and its report node (report.py)."""
