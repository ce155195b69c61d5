# Tools the tests take from Debian and from npm, installed by the project's own files (the CI
# machine is bare). Included by the root Makefile.
#
# Debian: each fragment appends `command:package[+package...]` to APT_TOOLS; `apt-tools` installs
# whatever is missing with one `apt-get update` and one `apt-get install` (only as root: elsewhere
# it says what to install, and the tests that need a missing tool skip, saying so).
APT_TOOLS ?=

.PHONY: apt-tools

apt-tools: ## Install the Debian packages the tests need (APT_TOOLS), only when missing, only as root
	@missing=""; \
	for pair in $(APT_TOOLS); do \
		cmd=$${pair%%:*}; packages=$${pair#*:}; \
		command -v $$cmd >/dev/null 2>&1 || test -x /usr/sbin/$$cmd \
			|| missing="$$missing $${packages//+/ }"; \
	done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" != 0 ]; then \
		echo "apt-tools: missing:$$missing (not root: run 'apt-get install -y$$missing'" \
			"yourself; the tests that need them skip)" >&2; exit 0; \
	fi; \
	echo "apt-tools: apt-get install$$missing"; \
	{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends $$missing >/dev/null; } \
		|| echo "apt-tools: WARNING: apt-get failed; the tests that need$$missing skip" >&2

# npm: a folder of tests with a package.json and its package-lock.json gets `npm ci` when the lock
# file changes (the stamp). --ignore-scripts: no package there needs an install script, and none
# may download anything.
%/node_modules/.installed: %/package.json %/package-lock.json
	cd $* && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	@touch $@
