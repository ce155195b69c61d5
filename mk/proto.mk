# The plugin contract (proto/plugin/v1), its generated Python code, the plugin
# SDK and the example plugins. Included by the root Makefile, which defines
# VENV, PY, BIN and the `install` target.

# Editable installs for the root Makefile's `install`: the generated stubs
# (import plugin.v1), the SDK (import forge_plugin_sdk) and the Python example
# plugin (import event_recorder, console script forge-event-recorder).
PROTO_PACKAGES = proto/gen/python sdk/python plugins/event-recorder

# `make test` also checks the contract, lints the SDK, and installs the Node
# example's packages so its test runs instead of skipping.
TEST_CHECKS += proto-check sdk-lint
TEST_TOOLS += node-deps

BUF = $(abspath $(BIN)/buf)
# proto/tools/protoc and protoc-gen-grpc-python run grpc_tools with this Python.
PROTO_ENV = FORGE_PROTO_PYTHON=$(abspath $(PY))
PROTO_GEN_DIR = proto/gen/python
NODE_HELLO = plugins/node-hello
# npm writes this hidden lockfile on every install: it is the stamp that says
# node_modules is at least as new as package-lock.json.
NODE_HELLO_STAMP = $(NODE_HELLO)/node_modules/.package-lock.json

.PHONY: proto proto-check proto-lint proto-breaking proto-stale sdk-lint node-deps

proto: install ## Regenerate the plugin.v1 Python code (proto/gen/python)
	@# Remove the old output first so a deleted .proto leaves no stale module.
	find $(PROTO_GEN_DIR)/plugin -name '*_pb2*' -type f -delete
	cd proto && $(PROTO_ENV) $(BUF) generate

proto-check: proto-lint proto-breaking proto-stale ## buf lint + format, buf breaking against main, generated code current

proto-lint: install ## buf lint and buf format --diff on proto/
	cd proto && $(BUF) lint
	cd proto && $(BUF) format --diff --exit-code

# Compares the working tree with the main branch; on main itself this compares
# with the last commit. Skipped (not failed) while main has nothing to compare.
proto-breaking: install ## buf breaking: the contract against the main branch
	@if ! git rev-parse --verify --quiet refs/heads/main >/dev/null; then \
		echo "proto-breaking: skipped: this repository has no main branch yet"; \
	elif ! git cat-file -e main:proto/buf.yaml 2>/dev/null; then \
		echo "proto-breaking: skipped: the main branch has no proto/ yet"; \
	else \
		echo "$(BUF) breaking proto --against '.git#branch=main,subdir=proto'"; \
		$(BUF) breaking proto --against '.git#branch=main,subdir=proto'; \
	fi

# Regenerates into a temporary folder and diffs it with the committed files
# (only the generated *_pb2* files: __init__.py, py.typed and pyproject.toml
# are maintained by hand).
proto-stale: install ## The generated Python code is what proto/ generates now
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	(cd proto && $(PROTO_ENV) $(BUF) generate -o "$$tmp/new") || exit 1; \
	mkdir -p "$$tmp/new/gen/python" "$$tmp/old"; \
	(cd $(PROTO_GEN_DIR) && find . -name '*_pb2*' -type f ! -path '*/__pycache__/*') | \
		while read -r f; do mkdir -p "$$tmp/old/$$(dirname "$$f")"; cp "$(PROTO_GEN_DIR)/$$f" "$$tmp/old/$$f"; done; \
	if diff -ru "$$tmp/old" "$$tmp/new/gen/python"; then \
		echo "proto-stale: $(PROTO_GEN_DIR) is up to date"; \
	else \
		echo "proto-stale: $(PROTO_GEN_DIR) is stale: run 'make proto' and commit the result" >&2; exit 1; \
	fi

sdk-lint: install ## ruff and mypy --strict for the plugin SDK and the Python example plugin
	$(BIN)/ruff check sdk plugins proto/tools
	$(BIN)/ruff format --check sdk plugins proto/tools
	$(BIN)/mypy --strict -p forge_plugin_sdk -p event_recorder
	$(BIN)/mypy --strict proto/tools/protoc_gen_grpc_python.py

node-deps: $(NODE_HELLO_STAMP) ## Install the Node example plugin's packages (npm ci) when missing or outdated

$(NODE_HELLO_STAMP): $(NODE_HELLO)/package.json $(wildcard $(NODE_HELLO)/package-lock.json)
	@if ! command -v npm >/dev/null 2>&1; then \
		echo "node-deps: npm not found; the Node example plugin's test will be skipped"; \
	else \
		cd $(NODE_HELLO) && \
		if [ -f package-lock.json ]; then npm ci --ignore-scripts --no-audit --no-fund; \
		else npm install --ignore-scripts --no-audit --no-fund; fi && \
		touch node_modules/.package-lock.json; \
	fi
