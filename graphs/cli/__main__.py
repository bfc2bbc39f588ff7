"""``python -m benchsmith.graphs.cli``: the same as the ``benchsmith`` command."""

from benchsmith.graphs.cli import app

app()
