# Benchmarks (bench/): wrk on 127.0.0.1 only, every run bounded; each
# figure is a ratio or a percentile measured against a baseline in the same run. bench/RESULTS.md
# records full runs. Included by the root Makefile; bench-proxy is in mk/deploy.mk.

# `make test` runs every benchmark's --smoke mode (the real code path, tiny sizes, 1 s wrk runs),
# so a benchmark that stops working fails the build. deploy-tools (mk/deploy.mk) installs wrk and
# nginx first; a smoke run fails, with the command to run, where they are missing.
TEST_ALONGSIDE += bench-smoke

.PHONY: bench-smoke bench-releases bench-orgs bench-events bench-grpc-ceiling bench-update-keys bench-downloads bench-upload-s3 bench-feeds bench-insights

bench-smoke: install deploy-tools ## Every benchmark's --smoke run, on one throwaway PostgreSQL (part of make test)
	$(PY) bench/smoke.py

bench-releases: install deploy-tools ## Benchmark the update check vs a bare aiohttp handler (10 / 1,000 / 100,000 releases)
	$(PY) bench/releases/bench.py $(BENCH_RELEASES_ARGS)

bench-orgs: install deploy-tools ## Benchmark the orgs overview (100 pins, 10,000 members, 1,000 repos; p99 <= 20 ms)
	$(PY) bench/orgs/bench.py $(BENCH_ORGS_ARGS)

bench-events: install ## Benchmark event delivery: outbox → relay → gateway → OnEvent (rate, p99, backlog drain)
	$(PY) bench/events/bench.py $(BENCH_EVENTS_ARGS)

bench-grpc-ceiling: install ## Bare OnEvent calls between two Python gRPC processes: the ceiling of event delivery here
	$(PY) bench/events/grpc_ceiling.py

# Pages (docs/pages.md "Speed"): the organization page at 16 connections, the download page
# against the update check.
.PHONY: bench-pages

bench-pages: install deploy-tools ## Benchmark the pages (org page p99 <= 20 ms at 16 connections; download page >= 0.8 of the update check)
	$(PY) bench/pages/bench.py $(BENCH_PAGES_ARGS)
# accounts: argon2 cost, the sign-in end to end, a signed-in page against the anonymous one
.PHONY: bench-accounts

bench-accounts: install deploy-tools ## Benchmark sign-in (argon2 cost, POST /user/login) and a signed-in page vs the anonymous one (>= 0.7)
	$(PY) bench/accounts/bench.py $(BENCH_ACCOUNTS_ARGS)
# update keys: the keyed update check of a private repository against the token one (same run)
bench-update-keys: install deploy-tools ## Benchmark the update check with ?key= vs with a token (ratio, target >= 0.8)
	$(PY) bench/releases/update_keys.py $(BENCH_UPDATE_KEYS_ARGS)

bench-downloads: install deploy-tools ## 10 MiB downloads: nginx X-Accel-Redirect and the service direct vs nginx static (>= 0.8)
	$(PY) bench/releases/downloads.py $(BENCH_DOWNLOADS_ARGS)

bench-upload-s3: install ## Peak RSS of the releases service receiving a 1 GiB upload into S3 (moto server; < 100 MB)
	$(PY) bench/releases/upload_rss.py --storage s3 $(BENCH_UPLOAD_ARGS)

# update feeds: each feed's throughput against the update check's (same run)
bench-feeds: install deploy-tools ## Benchmark every update feed route vs a bare aiohttp handler, side by side (target >= 0.85)
	$(PY) bench/releases/feeds.py $(BENCH_FEEDS_ARGS)

# Profiling (bench/RESULTS.md says what each profile showed): py-spy, pinned, into the venv only
# when asked for, e.g. `make profile-tools && .venv/bin/py-spy record --pid PID -d 10 -f raw -o x`.
.PHONY: profile-tools
profile-tools: install $(VENV)/.py-spy ## Install py-spy (pinned) to profile a benchmark's service process

$(VENV)/.py-spy: constraints.txt
	$(PY) $(PIP_INSTALL) -c constraints.txt py-spy
	@touch $@

.PHONY: bench-micro-cache
bench-micro-cache: install deploy-tools ## nginx micro-cache vs nginx serving the same bytes statically (>= 0.7), p99 vs the service alone, service requests a second (<= 1)
	$(PY) bench/proxy/micro_cache.py $(BENCH_MICRO_CACHE_ARGS)

.PHONY: bench-insights

bench-insights: install deploy-tools ## Insights API over a year of daily rows, 200 versions x 6 platforms (p99 < 50 ms)
	$(PY) bench/releases/insights.py $(BENCH_INSIGHTS_ARGS)
