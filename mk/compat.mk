# The Gitea- and GitHub-shaped release APIs (docs/compat.md). Included by the root Makefile.
#
# Real Gitea and GitHub API clients (tests-e2e/clients/apis/): gitea-js, @octokit/rest and
# electron-updater from npm (package-lock.json), run by tests-e2e/clients/apis/test_api_clients.py
# in `make test`. npm ci reruns only when the lock file changes (the stamp). PyGithub comes with
# requirements-dev.txt.
CLIENTS_APIS_DIR := tests-e2e/clients/apis

TEST_PREREQUISITES += clients-apis

.PHONY: clients-apis

clients-apis: $(CLIENTS_APIS_DIR)/node_modules/.installed ## Install the npm API clients of the compat tests

$(CLIENTS_APIS_DIR)/node_modules/.installed: $(CLIENTS_APIS_DIR)/package.json $(CLIENTS_APIS_DIR)/package-lock.json
	cd $(CLIENTS_APIS_DIR) && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

.PHONY: bench-compat

bench-compat: install deploy-tools ## Benchmark the Gitea/GitHub lists and latest against version 2's (ratio >= 0.8)
	$(PY) bench/compat/bench.py $(BENCH_COMPAT_ARGS)
