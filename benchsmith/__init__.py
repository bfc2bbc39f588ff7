"""benchsmith: build, audit and use retrieval benchmarks for RAG systems.

The folders of the repository (graphs/, agents/, tools/, stores/, evals/) are installed
under this one package: ``benchsmith.graphs``, ``benchsmith.agents`` and so on.
"""
