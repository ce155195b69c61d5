# The orgs overview benchmark (issue 5): p50/p99 of GET /api/v1/orgs/big/overview with wrk.
# Included by the root Makefile.

.PHONY: bench-orgs

bench-orgs: install ## Benchmark the orgs overview (100 pins, 10,000 members, 1,000 repos; p99 <= 20 ms)
	@command -v wrk >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = 0 ]; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; \
		else echo "bench-orgs: wrk is missing: apt-get install -y wrk" >&2; exit 1; fi; }
	$(PY) bench/orgs/bench.py $(BENCH_ORGS_ARGS)
