# Pages in a real browser (tests-e2e/pages/): Debian's Chromium, driven by Playwright for Python
# (pinned in constraints.txt; its own browser download does not work here), and axe-core from npm
# (tests-e2e/pages/package-lock.json). Included by the root Makefile; part of `make test`.
PAGES_DIR := tests-e2e/pages

TEST_PREREQUISITES += pages-tools

.PHONY: pages-tools

pages-tools: $(PAGES_DIR)/node_modules/.installed ## Install Chromium with apt-get (only when missing, only as root) and axe-core with npm ci
	@if ! test -x /usr/bin/chromium; then \
		if [ "$$(id -u)" != 0 ]; then \
			echo "pages-tools: chromium missing (not root: run 'apt-get install -y chromium';" \
				"tests-e2e/pages skip without it)" >&2; \
		else \
			echo "pages-tools: apt-get install chromium"; \
			{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
				--no-install-recommends chromium fonts-dejavu-core >/dev/null; } \
				|| echo "pages-tools: WARNING: apt-get failed; tests-e2e/pages will skip" >&2; \
		fi; \
	fi

$(PAGES_DIR)/node_modules/.installed: $(PAGES_DIR)/package.json $(PAGES_DIR)/package-lock.json
	cd $(PAGES_DIR) && npm ci --no-audit --no-fund --loglevel=error
	@touch $@
