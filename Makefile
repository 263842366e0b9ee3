# The commands of the README: `make demo`, `make check` (after each change) and `make test`
# (everything, as CI runs it). All create .venv and install.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
PORT   ?= 8501
# pytest-xdist workers for `make test`: one per core, at most 4 (each worker starts its own
# PostgreSQL cluster, dashboard servers and chromium); `make test WORKERS=0` runs serially.
WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); echo $$(( n < 4 ? n : 4 )))

# The fast tier: tests/tiers.py marks every test from what it uses; this leaves out PostgreSQL,
# the browser, played seasons and per-test processes (ARENA_TEST_NO_POSTGRES makes a cluster
# start fail loudly, so a test that reaches PostgreSQL unmarked cannot slip in). Its property
# tests draw a quarter of their examples (ARENA_TEST_EXAMPLES, tests/examples.py); `make test`
# draws them all.
FAST   := not postgres and not browser and not season and not slow and not live
# Bytecode caches on: an environment with PYTHONDONTWRITEBYTECODE=1 (some sandboxes and CI
# images set it) makes every pytest worker, `arena` subprocess and dashboard server compile the
# whole package from source again; the suite's collection alone takes twice the CPU.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: install system-deps demo demo-extensions check test lint serve clean

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

## make check: lint, format, types, then the fast tier (what a contributor runs after each change)
check: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	@# mypy beside the tests: a cold mypy (a fresh clone) is ~40 s of one core, and the
	@# workers leave a core idle while they collect and at the tail; both must pass.
	@$(BIN)/mypy > $(VENV)/mypy.out 2>&1 & mypy=$$!; \
	ARENA_TEST_NO_POSTGRES=1 ARENA_TEST_EXAMPLES=0.25 \
	  $(BIN)/pytest -q -n $(WORKERS) --dist worksteal -m '$(FAST)'; \
	tests=$$?; wait $$mypy; types=$$?; cat $(VENV)/mypy.out; \
	[ $$tests -eq 0 ] && [ $$types -eq 0 ]

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
