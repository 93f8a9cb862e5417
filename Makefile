# The README's two commands: `make start` (open the course) and `make test` (run every test).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Where `make start` and `make voila` listen. The names are the project's own: a HOST or PORT that the
# shell already has (many set HOST to the machine's name) must not put Voila, which has no token, on
# the network. GRPO_LAB_HOST=0.0.0.0 make voila serves the whole network on purpose.
GRPO_LAB_HOST ?= 127.0.0.1
GRPO_LAB_PORT ?= 8888
START_NOTEBOOK := notebooks/00_start_here.ipynb
# Voila starts one kernel (about 430 MB) per page load: shut down those of closed tabs after 5 idle
# minutes (kernels with a tab still open are kept, however long the class talks)
VOILA_CULLING := --MappingKernelManager.cull_idle_timeout=300 --MappingKernelManager.cull_interval=60 \
	--MappingKernelManager.cull_connected=False
# the JupyterHub route (deploy/jupyterhub/jupyterhub_config.py): its proxy comes from npm, pinned
HUB_PROXY_VERSION := 5.3.0
HUB_PROXY := build/hub-proxy/node_modules/.bin/configurable-http-proxy
# the classroom page: the lab notebook without its cells tagged voila-skip (the prediction checks train
# seven runs), served with kernels warmed in advance (grpo_lab/lab/voila_page/warm/voila.py; GRPO_LAB_POOL
# of them, default 3, about 430 MB each)
CLASSROOM_NOTEBOOK := build/classroom/03_interactive_lab.ipynb
VOILA_PAGE := --Voila.config_file_paths=grpo_lab/lab/voila_page/warm
# Jupyter refuses to run as root unless told to (containers and CI machines often run as root)
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--ServerApp.allow_root=True,)

.PHONY: start test test-fast voila hub hub-proxy html install install-dev lint benchmarks pretrain clean

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

# default_url: the URL Jupyter prints (when no browser opens) leads to 00_start_here too
start: install
	@echo "JupyterLab on http://$(GRPO_LAB_HOST):$(GRPO_LAB_PORT)/ (GRPO_LAB_HOST, GRPO_LAB_PORT change it), opening $(START_NOTEBOOK)"
	$(BIN)/jupyter lab --ServerApp.ip=$(GRPO_LAB_HOST) --ServerApp.port=$(GRPO_LAB_PORT) --ServerApp.root_dir=. $(ALLOW_ROOT) \
		--LabApp.default_url=/lab/tree/$(START_NOTEBOOK) $(START_NOTEBOOK)

voila: install
	$(BIN)/python grpo_lab/lab/voila_page/classroom_page.py notebooks/03_interactive_lab.ipynb $(CLASSROOM_NOTEBOOK)
	@echo "Voila on http://$(GRPO_LAB_HOST):$(GRPO_LAB_PORT)/ (no token: anyone who can reach that address can use it);"
	@echo "for a projector, the large plot: http://$(GRPO_LAB_HOST):$(GRPO_LAB_PORT)/?plot=large"
	@echo "a page opens at once on each warm kernel: wait for 'grpo-lab: a warm kernel is ready' in the log (once a kernel)"
	$(BIN)/voila --Voila.ip=$(GRPO_LAB_HOST) --port=$(GRPO_LAB_PORT) $(VOILA_CULLING) $(VOILA_PAGE) $(CLASSROOM_NOTEBOOK)

# every student their own lab: a local JupyterHub, run as root, that logs in the accounts the teacher
# made (deploy/jupyterhub/accounts.py: a password each, stored hashed in build/hub/accounts.json, and
# a system user each with a private home) and runs each student's server, which shows only the lab in
# Voila, as that student's own system user; its database and accounts live in build/hub
$(HUB_PROXY):
	npm install --prefix build/hub-proxy --no-audit --no-fund --loglevel=error configurable-http-proxy@$(HUB_PROXY_VERSION)

hub-proxy: $(HUB_PROXY)

hub: install-dev $(HUB_PROXY)
	@test -f build/hub/accounts.json || { echo "make hub: no accounts yet: sudo $(BIN)/python deploy/jupyterhub/accounts.py NAME... (prints each student's password once)"; exit 1; }
	@echo "JupyterHub on http://$(GRPO_LAB_HOST):$(GRPO_LAB_PORT)/ (students log in with the passwords deploy/jupyterhub/accounts.py printed)"
	cd build/hub && GRPO_LAB_HUB=local GRPO_LAB_HUB_URL=http://$(GRPO_LAB_HOST):$(GRPO_LAB_PORT) \
		$(CURDIR)/$(BIN)/python -m jupyterhub -f $(CURDIR)/deploy/jupyterhub/jupyterhub_config.py

test: install-dev
	$(BIN)/python -m pytest

# the quick loop while editing: every test but the learning runs, notebooks, browser and slow ones
test-fast: install-dev
	$(BIN)/python -m pytest -m "not learning and not notebook and not browser and not slow"

# executed copies of the notebooks for reading offline (teaching mode; FAST=1 for fast mode)
html: install-dev
	$(BIN)/python scripts/render_html.py $(if $(FAST),--fast,)

lint: install-dev
	$(BIN)/ruff check grpo_lab tests benchmarks scripts notebooks/solutions deploy
	$(BIN)/ruff format --check grpo_lab tests benchmarks scripts deploy

benchmarks: install-dev
	$(BIN)/python benchmarks/run_all.py

pretrain: install
	$(BIN)/python -m grpo_lab pretrain

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache tests/artifacts
