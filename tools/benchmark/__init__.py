"""What a benchmark is made of: how a conversation walks the corpus, the overlap retry and
polish checks of its questions, paraphrase variants and test sets, hard-negative documents,
nugget support and fact matching of judgments."""
