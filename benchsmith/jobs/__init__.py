"""The jobs as Python functions: each checks its settings before any work starts, runs its
graph as a resumable run (graphs/runtime/runner.py) and returns a typed result. The CLI and the
package's API (``benchsmith.ingest(...)`` and its siblings) both call these."""
