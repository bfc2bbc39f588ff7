"""Retrieval: embedding and indexing, BM25, dense search, fusion, reranking, query building,
retriever specs, pooling, and the strategy space of a configuration search."""
