# The forge services: `make run` to try it, `make test` to check it. `make help` lists the rest.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
BIN := $(VENV)/bin
PORT ?= 8080
# the world file `make run` loads into an empty database; `make run WORLD=` starts empty instead
WORLD ?= demo/world.json
SERVICE_PACKAGES := services/common services/releases services/orgs services/plugin-gateway
# the publishing client (`forge release ...`): installed by `make run`, never in the server's image
CLIENT_PACKAGES := services/publisher
# development only, never in the image nor in `make run`'s install: the test helpers
DEV_PACKAGES := services/testing
PROTO_PACKAGES :=

# Fragments owned by parts of the system (proto generation, benchmarks, end-to-end tools).
-include mk/*.mk

EDITABLES := $(SERVICE_PACKAGES) $(CLIENT_PACKAGES) $(PROTO_PACKAGES)
# Two stamps: what running needs (make run: our packages and their dependencies), then the tools
# and test helpers lint and the tests add (make install, make test). A fresh clone's `make run`
# installs only the first (docs/architecture.md "make run and make test").
RUN_STAMP := $(VENV)/.installed-run
INSTALL_STAMP := $(VENV)/.installed
RUN_INPUTS := constraints.txt $(wildcard $(addsuffix /pyproject.toml,$(EDITABLES)))
# --no-compile: Python compiles a module the first time it is imported; compiling every file of
# every package at install took half of a clean clone's install (61 s against 31 s here).
PIP_INSTALL := -m pip install --quiet --disable-pip-version-check --no-compile
# ... and keeps what it compiled in __pycache__, unless PYTHONDONTWRITEBYTECODE says not to, as
# container images often do: then every process compiles again what it imports, and pytest
# rewrites every test module's asserts in each worker (docs/decisions.md "What make test runs").
unexport PYTHONDONTWRITEBYTECODE

.PHONY: help install install-run run shell test test-full checks lint fmt pytest reset clean

help: ## Show this help
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_.-]+:.*## / {printf "  \033[36m%-20s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

install-run: $(RUN_STAMP) ## Create .venv with only what running needs (what make run installs)

install: $(INSTALL_STAMP) ## Create .venv with every package and tool (pinned by constraints.txt)

$(RUN_STAMP): $(RUN_INPUTS)
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@# Our packages build with the pinned setuptools in the venv: no per-package build downloads.
	$(PY) $(PIP_INSTALL) -c constraints.txt pip setuptools wheel
	$(PY) $(PIP_INSTALL) --no-build-isolation \
		-c constraints.txt $(addprefix -e ,$(EDITABLES))
	@# No PostgreSQL binaries on this machine: the embedded database comes from the pgserver wheel.
	@if ! command -v pg_config >/dev/null && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then \
		$(PY) $(PIP_INSTALL) pgserver; fi
	@touch $@

$(INSTALL_STAMP): $(RUN_STAMP) requirements-dev.txt $(wildcard $(addsuffix /pyproject.toml,$(DEV_PACKAGES)))
	$(PY) $(PIP_INSTALL) --no-build-isolation \
		-c constraints.txt -r requirements-dev.txt $(addprefix -e ,$(DEV_PACKAGES))
	@touch $@

run: $(RUN_STAMP) ## Start everything on http://localhost:8080/ (PORT=N for another port, WORLD= for no demo world; embedded PostgreSQL unless DATABASE_URL is set)
	$(BIN)/forge dev $(if $(WORLD),--world $(WORLD),--empty) --port $(PORT)

shell: $(RUN_STAMP) ## A shell with .venv activated (`forge` on the PATH)
	@echo "forge: .venv activated; 'exit' to leave"
	@VIRTUAL_ENV=$(abspath $(VENV)) PATH="$(abspath $(BIN)):$$PATH" $${SHELL:-/bin/bash} -i

lint: install ## ruff and mypy --strict
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy services/common/src services/releases/src services/orgs/src services/plugin-gateway/src \
		services/testing/src services/publisher/src

fmt: install ## Format the code
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# pytest runs in worker processes (pytest-xdist), each test file in one worker (its module-scoped
# stacks start once): most tests wait on processes, PostgreSQL and sockets more than they compute,
# so more workers than the 2 cores pay (README.md "Tests"). The tests marked `alone` hold a time
# bound, so they run afterwards in one process, with no other test beside them (pytest's exit
# status 5: none selected). PYTEST_WORKERS=0 runs everything in one process.
PYTEST_WORKERS ?= 4
# The long end-to-end suites keep a smoke run in `make test`; their other tests are marked `full`
# and run with PYTEST_FULL=1, as `make test-full` sets it (docs/decisions.md "What make test
# runs" lists each suite, its smoke and what only the full run holds).
PYTEST_FULL ?=
NOT_FULL := $(if $(PYTEST_FULL),,and not full)

pytest: install ## Run the tests (no lint), in PYTEST_WORKERS processes (4; 0: one process); PYTEST_FULL=1: the full suites too
ifeq ($(PYTEST_WORKERS),0)
	$(BIN)/pytest -q -p no:xdist -m "$(if $(PYTEST_FULL),,not full)" $(PYTEST_ARGS)
else
	$(BIN)/pytest -q -n $(PYTEST_WORKERS) --dist loadfile -m "not alone $(NOT_FULL)" $(PYTEST_ARGS)
	$(BIN)/pytest -q -p no:xdist -m "alone $(NOT_FULL)" $(PYTEST_ARGS) || test $$? -eq 5
endif

# `make test` in two steps, each running side by side what can: first the tools the tests use
# (TEST_TOOLS: apt-get, npm ci, the fuzzing venv) beside pip's install, which keeps one core busy;
# then pytest beside the checks (lint and TEST_CHECKS one after another, as two mypy runs share a
# cache; TEST_CHECKS_BESIDE beside them) and the smoke runs of TEST_ALONGSIDE (bench-smoke,
# fuzz-smoke). A failed check fails `make test` when the rest has ended; its output is printed
# when it ends, the first minute or so (--output-sync: each target's output whole).
test: ## Lint, check the contract, run the tests with the long suites' smoke (what CI runs)
	@$(MAKE) --no-print-directory -j --output-sync=target install $(TEST_TOOLS)
	@$(MAKE) --no-print-directory -j --output-sync=target \
		checks $(TEST_CHECKS_BESIDE) pytest $(TEST_ALONGSIDE)

checks: install ## Lint and the contract checks (TEST_CHECKS), one after another
	@$(MAKE) --no-print-directory -j1 lint $(TEST_CHECKS)

test-full: ## make test with every test of the long end-to-end suites (marker `full`)
	@$(MAKE) --no-print-directory test PYTEST_FULL=1

reset: ## Remove .data only: the make-run database and assets (the next make run loads the demo again)
	rm -rf .data

clean: reset ## Remove .data and .venv (everything make created; the next make installs again)
	rm -rf $(VENV)
