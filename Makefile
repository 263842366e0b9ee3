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

## make demo: build the offline demo database (data/demo.db: a simulated 8-week season through
## the real jobs; built once, `rm data/demo.db` to rebuild) and serve the dashboard on :8501.
## It never touches data/arena.db, the default database of real runs.
demo: $(STAMP)
	@if [ -f data/demo.db ]; then echo "reusing data/demo.db (delete it to rebuild the demo)"; \
	else rm -f data/demo.build.db data/demo.build.db-wal data/demo.build.db-shm \
	  && ARENA_DATABASE_URL=sqlite:///data/demo.build.db $(BIN)/arena init-db \
	  && ARENA_DATABASE_URL=sqlite:///data/demo.build.db $(BIN)/arena demo --weeks 8 \
	  && mv data/demo.build.db data/demo.db; fi
	ARENA_DATABASE_URL=sqlite:///data/demo.db $(BIN)/arena serve --port $(PORT)

## make demo-extensions: the same, under the protocol extensions: stated_probability and three
## replicates per family (every cohort stamped with both; the Stated probability and Replicates
## pages show their figures), in data/demo-extensions.db.
demo-extensions: $(STAMP)
	@if [ -f data/demo-extensions.db ]; then \
	  echo "reusing data/demo-extensions.db (delete it to rebuild the demo)"; \
	else rm -f data/demo-extensions.build.db data/demo-extensions.build.db-wal \
	    data/demo-extensions.build.db-shm \
	  && ARENA_DATABASE_URL=sqlite:///data/demo-extensions.build.db $(BIN)/arena init-db \
	  && ARENA_DATABASE_URL=sqlite:///data/demo-extensions.build.db $(BIN)/arena demo --weeks 8 \
	    --extensions stated_probability --replicates 3 \
	  && mv data/demo-extensions.build.db data/demo-extensions.db; fi
	ARENA_DATABASE_URL=sqlite:///data/demo-extensions.db $(BIN)/arena serve --port $(PORT)

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
