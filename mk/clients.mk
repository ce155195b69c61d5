# Real clients for tests-e2e/clients/: the update clients (electron-updater, update-electron-app,
# the Tauri signer) and the Gitea and GitHub API clients (gitea-js, @octokit/rest) from one package-lock.json (npm ci: mk/tools.mk), and Debian's minisign, which checks the
# Tauri signatures. PyGithub comes with requirements-dev.txt. Included by the root Makefile.

CLIENTS_DIR := tests-e2e/clients
APT_TOOLS += minisign:minisign

TEST_PREREQUISITES += clients-tools

.PHONY: clients-tools

clients-tools: apt-tools $(CLIENTS_DIR)/node_modules/.installed ## npm ci the real clients of tests-e2e/clients; apt-get minisign when missing (root only)
