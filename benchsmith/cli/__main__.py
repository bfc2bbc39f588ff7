"""``python -m benchsmith.cli``: the same as the ``benchsmith`` command."""

from benchsmith.cli import app

app()
