# The two commands of the README: `make demo` and `make test`. Both create .venv and install.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
PORT   ?= 8501
# pytest-xdist workers for `make test`: one per core, at most 4 (each worker starts its own
# PostgreSQL cluster, dashboard servers and chromium); `make test WORKERS=0` runs serially.
WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); echo $$(( n < 4 ? n : 4 )))

.PHONY: install system-deps demo demo-extensions test lint serve clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

## make demo: serve the dashboard on :8501 at once while the offline demo season (a simulated
## 8-week season through the real jobs) plays into data/demo.db behind it (log: data/demo.log;
## Home shows its progress). A finished season is reused (`rm data/demo.db` to rebuild); a
## half-played one is rebuilt. Ctrl-C stops both. It never touches data/arena.db.
demo: $(STAMP)
	$(BIN)/python -m arena.app.demo_launch --database data/demo.db --port $(PORT) -- --weeks 8

## make demo-extensions: the same, under the protocol extensions: stated_probability and three
## replicates per family (every cohort stamped with both; the Stated probability and Replicates
## pages show their figures), in data/demo-extensions.db.
demo-extensions: $(STAMP)
	$(BIN)/python -m arena.app.demo_launch --database data/demo-extensions.db --port $(PORT) \
	  -- --weeks 8 --extensions stated_probability --replicates 3

## make system-deps: chromium and a PostgreSQL server for the suite (apt-get when missing)
system-deps:
	@scripts/system-deps

## make test: lint, format, types, then the whole suite (unit, loopback HTTP, SQLite +
## PostgreSQL, real browser)
test: system-deps $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/pytest -q -n $(WORKERS) --dist worksteal

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

serve: $(STAMP)
	$(BIN)/arena serve --port $(PORT)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis test-artifacts
