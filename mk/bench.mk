# Release benchmarks (issue 3): the update check against a minimal aiohttp handler returning the
# same bytes, with wrk on 127.0.0.1 (bounded: -t2 -c64 -d10s per run). Included by the root Makefile.

.PHONY: bench-releases

bench-releases: install ## Benchmark the update check vs a bare aiohttp handler (10 / 1,000 / 100,000 releases)
	@command -v wrk >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = 0 ]; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; \
		else echo "bench-releases: wrk is missing: apt-get install -y wrk" >&2; exit 1; fi; }
	$(PY) bench/releases/bench.py $(BENCH_RELEASES_ARGS)
