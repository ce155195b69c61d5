# The forge services: `make run` to try it, `make test` to check it. `make help` lists the rest.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
BIN := $(VENV)/bin
PORT ?= 8080
SERVICE_PACKAGES := services/common services/releases services/orgs services/plugin-gateway
# development only, never in the image: the test helpers and the publishing client
DEV_PACKAGES := services/testing services/publisher
PROTO_PACKAGES :=

# Fragments owned by parts of the system (proto generation, benchmarks, end-to-end tools).
-include mk/*.mk

EDITABLES := $(SERVICE_PACKAGES) $(DEV_PACKAGES) $(PROTO_PACKAGES)
INSTALL_STAMP := $(VENV)/.installed
INSTALL_INPUTS := constraints.txt requirements-dev.txt $(wildcard $(addsuffix /pyproject.toml,$(EDITABLES)))

.PHONY: help install run test lint fmt pytest clean

help: ## Show this help
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  \033[36m%-14s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

install: $(INSTALL_STAMP) ## Create .venv with every package and tool (pinned by constraints.txt)

$(INSTALL_STAMP): $(INSTALL_INPUTS)
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@# Our packages build with the pinned setuptools in the venv: no per-package build downloads.
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt pip setuptools wheel
	$(PY) -m pip install --quiet --disable-pip-version-check --no-build-isolation \
		-c constraints.txt -r requirements-dev.txt $(addprefix -e ,$(EDITABLES))
	@# No PostgreSQL binaries on this machine: the embedded database comes from the pgserver wheel.
	@if ! command -v pg_config >/dev/null && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then \
		$(PY) -m pip install --quiet --disable-pip-version-check pgserver; fi
	@touch $@

# `make run` serves from a venv of its own holding what the image holds (the services, the plugin
# contract and SDK, the example plugin): no test helpers, no tools.
RUN_VENV := .venv-run
RUN_PACKAGES := $(SERVICE_PACKAGES) $(PROTO_PACKAGES)
RUN_STAMP := $(RUN_VENV)/.installed

$(RUN_STAMP): constraints.txt $(wildcard $(addsuffix /pyproject.toml,$(RUN_PACKAGES)))
	@test -x $(RUN_VENV)/bin/python || $(PYTHON) -m venv $(RUN_VENV)
	$(RUN_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -c constraints.txt pip setuptools wheel
	$(RUN_VENV)/bin/python -m pip install --quiet --disable-pip-version-check --no-build-isolation \
		-c constraints.txt $(addprefix -e ,$(RUN_PACKAGES))
	@if ! command -v pg_config >/dev/null && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then \
		$(RUN_VENV)/bin/python -m pip install --quiet --disable-pip-version-check pgserver; fi
	@touch $@

run: $(RUN_STAMP) ## Start everything on http://localhost:8080/ (PORT=N to change; embedded PostgreSQL unless DATABASE_URL is set)
	$(RUN_VENV)/bin/forge dev --world demo/world.json --port $(PORT)

lint: install ## ruff and mypy --strict
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy services/common/src services/releases/src services/orgs/src services/plugin-gateway/src \
		services/testing/src services/publisher/src

fmt: install ## Format the code
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

pytest: install ## Run every test (no lint)
	$(BIN)/pytest -q $(PYTEST_ARGS)

test: install lint $(TEST_PREREQUISITES) ## Lint, check the contract, run every test
	$(BIN)/pytest -q $(PYTEST_ARGS)

clean: ## Remove .venv, .venv-run and .data (the make-run database)
	rm -rf $(VENV) $(RUN_VENV) .data
