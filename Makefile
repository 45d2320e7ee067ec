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
# skip with the reason without it). llama-cpp-python is built from source once per machine into
# a wheel kept under ~/.cache/mirage-guard (CPU only, all cores: ~5 min on 2 idle cores, ~30 min
# under load), then installed from there. The build is portable (AVX2, no -march=native, no
# AVX-512/AMX): a native build on a CPU with AMX segfaulted at its first completion here (exit
# 139, in libggml-cpu), and pip's own wheel cache would hand such a build back on every install.
LLAMA_CPP_VERSION := 0.3.36
LLAMA_WHEELS      := $(HOME)/.cache/mirage-guard/wheels/llama-cpp-python-$(LLAMA_CPP_VERSION)-portable
LLAMA_CMAKE_ARGS  := -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF

$(BIN)/.llmserver: $(BIN)/.installed
	test -n "$$(ls $(LLAMA_WHEELS)/*.whl 2>/dev/null)" || CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) \
		CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/python -m pip wheel --quiet --no-cache-dir \
		--no-deps -w $(LLAMA_WHEELS) 'llama-cpp-python==$(LLAMA_CPP_VERSION)'
	$(BIN)/python -m pip install --quiet --force-reinstall --no-deps --only-binary llama-cpp-python \
		--find-links $(LLAMA_WHEELS) 'llama-cpp-python==$(LLAMA_CPP_VERSION)'
	$(BIN)/python -m pip install --quiet -e '.[llmserver]'
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
