"""Documents and chunks: loading source trees, cleaning, chunking, dedup, quality filtering,
clustering, corpus statistics, held-out chunks."""
