# Real clients for tests-e2e/clients/: the update clients (electron-updater, update-electron-app,
# the Tauri signer) and the Gitea and GitHub API clients (gitea-js, @octokit/rest) from one
# package-lock.json (npm ci: mk/tools.mk), Debian's minisign, which checks the Tauri signatures,
# and Debian's zsync (AppImage updates, test_zsync.py). Also the publishers (electron-publish,
# @electron-forge/publisher-github) and iproute2's `ip`, with which test_electron_publish_tls.py
# makes its own network namespace.
# PyGithub comes with requirements-dev.txt. Included by the root Makefile.

CLIENTS_DIR := tests-e2e/clients
APT_TOOLS += minisign:minisign ip:iproute2 zsync:zsync
# the Linux repositories (test_linux_repos.py): Sequoia's sqv as Debian 13's apt verifies, and
# real dnf and rpmbuild (dpkg-deb, apt-get and gpg come with Debian itself)
APT_TOOLS += sqv:sqv dnf:dnf+dnf-plugins-core rpmbuild:rpm

TEST_TOOLS += clients-tools

.PHONY: clients-tools

clients-tools: apt-tools $(CLIENTS_DIR)/node_modules/.installed ## npm ci the real clients of tests-e2e/clients; apt-get minisign when missing (root only)
