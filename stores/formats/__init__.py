"""The files of the field, read and written: BEIR, TREC, CAsT, ECAsT, MTRAG, MultiConIR,
Hugging Face datasets, Stack Exchange dumps, query, QA-pair and labelled-question files."""
