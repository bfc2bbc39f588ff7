"""The runtime the graphs share, below every graph: the runner (checkpointer, resume, run records),
resources (settings, clients, seams, work items, the registry), fan-out, progress events and the
retrieval indexes of a corpus. Nothing here imports a graph, the API or the CLI."""
