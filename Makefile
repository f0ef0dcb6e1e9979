# The two commands a newcomer runs: `make demo` and `make test`.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin

.PHONY: demo test lint check bench setup system-deps clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

system-deps:
	./scripts/system-deps.sh

demo: setup
	$(BIN)/prdigest digest acme/lumen --week 2026-W29 \
		--snapshot examples/snapshot.json --config examples/prdigest.toml --format text

test: setup system-deps
	$(BIN)/pytest

lint: setup
	$(BIN)/ruff check .
	$(BIN)/mypy

check: lint test

bench: setup
	$(BIN)/python -m bench.digest

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
