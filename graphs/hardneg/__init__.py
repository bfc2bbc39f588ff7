"""Multi-condition queries with hard negatives (MultiConIR): the build graph (build.py), the rows it
builds (rows.py) and what it exports from them (exports.py); the scoring graph (score.py) and the
scoring steps it runs (scoring.py)."""
