"""Test-session setup: everything offline, nothing written outside tmp dirs."""

import os

# Set before any test imports sentence-transformers or chromadb: no hub, no telemetry.
for name, value in (
    ("HF_HUB_OFFLINE", "1"),
    ("TRANSFORMERS_OFFLINE", "1"),
    ("HF_HUB_DISABLE_PROGRESS_BARS", "1"),
    ("TOKENIZERS_PARALLELISM", "false"),
    ("ANONYMIZED_TELEMETRY", "False"),
):
    os.environ.setdefault(name, value)
os.environ.pop("BENCHSMITH_WORKSPACE", None)
# pytest-xdist runs two workers on the two cores: one math thread per process (and for the
# subprocesses it starts), or torch's spinning threads fight the other worker's for the cores.
if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, "1")
# pytest-xdist's workers start with COLUMNS=80, which the CLI's console (created at import)
# would keep for good: give them the terminal width the session itself had, set or not.
if "PYTEST_XDIST_WORKER" in os.environ:
    if columns := os.environ.get("BENCHSMITH_TESTS_COLUMNS"):
        os.environ["COLUMNS"] = columns
    elif columns is not None:
        os.environ.pop("COLUMNS", None)
else:
    os.environ["BENCHSMITH_TESTS_COLUMNS"] = os.environ.get("COLUMNS", "")

import pytest  # noqa: E402

from benchsmith.graphs.runtime.resources import clear_registry  # noqa: E402
from tests.openai_server import openai_server  # noqa: E402,F401  (the loopback model server fixture)
from tests.postgres_server import database, postgres_url  # noqa: E402,F401  (a PostgreSQL server's fixtures)


@pytest.fixture(autouse=True)
def forget_registered_objects():
    """A model or embedder a test registers by name must not answer for that name in the next test;
    the test collections' own embedder (a stateless HashingEmbedder, which module-scoped collections
    were built with in an earlier test) answers for its name in every test: synthesis embeds an
    unanswerable turn's question with the collection's embedder (its dense pool)."""
    yield
    clear_registry()
    register_test_embedder()  # before the next test's module-scoped fixtures, which come before this fixture


def register_test_embedder() -> None:
    from benchsmith.graphs.runtime.resources import register_embedder
    from tests.embedders import HashingEmbedder

    register_embedder(HashingEmbedder())


register_test_embedder()  # for the first test's module-scoped fixtures


# pytest-xdist workers (`-n 3` in pyproject.toml: three keep the two cores busy while tests wait on
# servers and subprocesses): the longest tests start first so that no worker is left with one at
# the end (work stealing hands the queued rest to whichever worker is free). xdist_group marks
# would pin tests to one worker, but pytest-xdist 3.8 renames `item._nodeid`, which pytest 9 no
# longer reads: they have no effect, so module-scoped fixtures are built once per worker that runs
# their tests.
LONGEST_FIRST = (
    "test_examples_run_as_written_in_order",
    "test_demo_runs_every_job_offline",
    "test_demo_sized_run_on_the_standard_library",
)


def start_order(item: pytest.Item) -> int:
    if item.get_closest_marker("slow") is None:
        return len(LONGEST_FIRST) + 1
    return next(
        (rank for rank, name in enumerate(LONGEST_FIRST) if item.originalname.startswith(name)), len(LONGEST_FIRST)
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=start_order)  # stable: the collection order otherwise
