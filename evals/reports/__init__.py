"""Reports: the document model with its Markdown and HTML renderers, each job's report, plots."""
