# Pages in a real browser (tests-e2e/pages/): Debian's Chromium, driven by Playwright for Python
# (pinned in constraints.txt; its own browser download does not work here), and axe-core from npm
# (tests-e2e/pages/package-lock.json; npm ci: mk/tools.mk). Included by the root Makefile; the
# suite's smoke is part of `make test`, the whole suite of `make test-full`.
PAGES_DIR := tests-e2e/pages
APT_TOOLS += chromium:chromium+fonts-dejavu-core

TEST_TOOLS += pages-tools

.PHONY: pages-tools

pages-tools: apt-tools $(PAGES_DIR)/node_modules/.installed ## Install Chromium with apt-get (only when missing, only as root) and axe-core with npm ci
