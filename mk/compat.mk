# The Gitea- and GitHub-shaped release APIs (docs/compat.md). Included by the root Makefile.

# Their real clients (tests-e2e/clients/apis/) are installed by clients-tools (mk/clients.mk).

.PHONY: bench-compat

bench-compat: install deploy-tools ## Benchmark the Gitea/GitHub lists and latest against version 2's (ratio >= 0.8)
	$(PY) bench/compat/bench.py $(BENCH_COMPAT_ARGS)
