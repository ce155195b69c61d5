# Fuzzing: schemathesis against the three OpenAPI documents, and tests-e2e/fuzz/forms.py against
# every page form, on the real services (tests-e2e/fuzz/run.py: a throwaway PostgreSQL, a small
# world, `forge serve --all`). Included by
# the root Makefile. Seeded (FUZZ_SEED, default in run.py) and bounded; see run.py.

# schemathesis, pinned with its dependencies in constraints.txt, lives in a venv of its own: its
# pytest plugins (schemathesis, hypothesis) stay out of the test suite's pytest.
FUZZ_VENV := .venv-fuzz
FUZZ_STAMP := $(FUZZ_VENV)/.installed

# `make test` runs the smoke run (about a minute of fuzzing in all).
TEST_ALONGSIDE += fuzz-smoke
TEST_TOOLS += fuzz-tools

.PHONY: fuzz-tools fuzz-smoke fuzz

fuzz-tools: $(FUZZ_STAMP) ## Install schemathesis (pinned) into .venv-fuzz

$(FUZZ_STAMP): constraints.txt mk/fuzz.mk
	@test -x $(FUZZ_VENV)/bin/python || $(PYTHON) -m venv $(FUZZ_VENV)
	$(FUZZ_VENV)/bin/python $(PIP_INSTALL) -c constraints.txt \
		pip schemathesis
	@touch $@

fuzz-smoke: install $(FUZZ_STAMP) ## schemathesis and the page forms, about a minute and a half: 3 documents x (anonymous, owner), the forms, the orgs document by password, seeded (part of make test)
	FUZZ_SCHEMATHESIS=$(abspath $(FUZZ_VENV))/bin/schemathesis $(PY) tests-e2e/fuzz/run.py $(FUZZ_ARGS)

fuzz: install $(FUZZ_STAMP) ## schemathesis and the page forms for about twelve minutes (FUZZ_SEED=N, FUZZ_ARGS=--only orgs|forms)
	FUZZ_SCHEMATHESIS=$(abspath $(FUZZ_VENV))/bin/schemathesis $(PY) tests-e2e/fuzz/run.py --full $(FUZZ_ARGS)
