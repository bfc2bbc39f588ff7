"""One module per workflow (state, context, nodes, builder, a Studio-ready ``graph``),
the shared runner that adds the SQLite checkpointer and resume logic, and the CLI."""
