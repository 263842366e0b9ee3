# The two commands of the README: `make demo` and `make test`. Both create .venv and install.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
PORT   ?= 8501

.PHONY: install demo test lint serve clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

## make demo: build the offline demo database and serve the dashboard on :8501
demo: $(STAMP)
	$(BIN)/arena init-db
	$(BIN)/arena serve --port $(PORT)

## make test: the whole suite (unit, loopback HTTP, SQLite + PostgreSQL, real browser)
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/pytest -q

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

serve: $(STAMP)
	$(BIN)/arena serve --port $(PORT)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis test-artifacts
