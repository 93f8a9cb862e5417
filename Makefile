# The README's two commands: `make start` (open the course) and `make test` (run every test).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8888
# Jupyter refuses to run as root unless told to (containers and CI machines often run as root)
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--ServerApp.allow_root=True,)

.PHONY: start test voila html install install-dev lint benchmarks pretrain clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip

# torch first, pinned: a newer or unpinned torch would pull a multi-GB CUDA build
$(VENV)/.installed-lab: $(BIN)/python pyproject.toml
	$(BIN)/pip install "torch==2.13.0"
	$(BIN)/pip install -e ".[lab]"
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed-lab
	$(BIN)/pip install "torch==2.13.0" -e ".[lab,dev,trl]"
	touch $@

install: $(VENV)/.installed-lab
install-dev: $(VENV)/.installed-dev

start: install
	$(BIN)/jupyter lab --ServerApp.ip=$(HOST) --ServerApp.port=$(PORT) --ServerApp.root_dir=. $(ALLOW_ROOT) notebooks/00_start_here.ipynb

voila: install
	$(BIN)/voila --Voila.ip=$(HOST) --port=$(PORT) notebooks/03_interactive_lab.ipynb

test: install-dev
	$(BIN)/python -m pytest

# executed copies of the notebooks for reading offline (teaching mode; FAST=1 for fast mode)
html: install-dev
	$(BIN)/python scripts/render_html.py $(if $(FAST),--fast,)

lint: install-dev
	$(BIN)/ruff check grpo_lab tests benchmarks scripts notebooks/solutions

benchmarks: install-dev
	$(BIN)/python benchmarks/run_all.py

pretrain: install
	$(BIN)/python -m grpo_lab pretrain

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache tests/artifacts
