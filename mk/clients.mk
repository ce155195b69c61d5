# Real update clients for tests-e2e/clients/ (issue 12): npm packages from the project's own lock
# file, and Debian's minisign, which checks the Tauri signatures. Included by the root Makefile.

CLIENTS_DIR := tests-e2e/clients/updaters

TEST_PREREQUISITES += clients-tools

.PHONY: clients-tools

clients-tools: $(CLIENTS_DIR)/node_modules/.package-lock.json ## npm ci the update clients; apt-get minisign when missing (root only)
	@command -v minisign >/dev/null 2>&1 && exit 0; \
	if [ "$$(id -u)" != 0 ]; then \
		echo "clients-tools: minisign missing (run 'apt-get install -y minisign'; its test skips)" >&2; \
		exit 0; \
	fi; \
	{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends minisign >/dev/null; } \
		|| echo "clients-tools: WARNING: apt-get failed; the minisign check will skip" >&2

# --ignore-scripts: no package here needs an install script (and none may download anything)
$(CLIENTS_DIR)/node_modules/.package-lock.json: $(CLIENTS_DIR)/package-lock.json $(CLIENTS_DIR)/package.json
	cd $(CLIENTS_DIR) && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	@touch $@
