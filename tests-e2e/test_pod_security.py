"""Pod Security offline (deploy/pod_security.py, run by `make deploy-check`): the documented
one-off `kubectl run` pods (docs/deploy.md "First admin") and every pod template of the base and
the overlays pass the `restricted` level the namespace enforces; the first-admin command as it was
documented before (no securityContext) is refused, and so is each weakness the level forbids."""

from __future__ import annotations

import copy
import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from .test_k8s_overlays import overlays, render

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", ROOT / "docs/deploy.md", ROOT / "deploy/README.md"]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("pod_security", ROOT / "deploy/pod_security.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


pod_security = _load()
LEVELS = pod_security.namespace_levels(
    list(yaml.safe_load_all((ROOT / "deploy/k8s/base/namespace.yaml").read_text()))
)
# docs/deploy.md "First admin" before the pod had a security context
OLD_FIRST_ADMIN = """```sh
printf '%s' "$ADMIN_PASSWORD" | kubectl -n forge run forge-admin --rm -i --restart=Never \\
  --image=registry.example.com/acme/forge:0.1.0 \\
  --overrides='{"spec":{"containers":[{"name":"forge-admin","image":"registry.example.com/acme/forge:0.1.0","stdin":true,"args":["admin","user","create","--username","admin","--email","admin@example.com","--password-stdin","--admin"],"envFrom":[{"configMapRef":{"name":"forge-config"}},{"secretRef":{"name":"forge-secrets"}}]}]}}'
```
"""


def _documented_pods() -> list[dict[str, Any]]:
    return [pod for doc in DOCS for pod in pod_security.kubectl_run_pods(doc.read_text())]


def test_the_namespace_enforces_restricted() -> None:
    assert LEVELS == {"forge": "restricted"}


def test_every_documented_one_off_pod_passes_the_namespace_policy() -> None:
    pods = _documented_pods()
    assert "forge-admin" in {p["metadata"]["name"] for p in pods}
    assert all(p["metadata"]["namespace"] == "forge" for p in pods)
    assert pod_security.check(pods, LEVELS) == []
    admin = next(p for p in pods if p["metadata"]["name"] == "forge-admin")
    container = admin["spec"]["containers"][0]  # the override replaced kubectl's container
    assert container["args"][:3] == ["admin", "user", "create"] and container["stdin"] is True


def test_the_first_admin_command_as_documented_before_is_refused() -> None:
    pods = pod_security.kubectl_run_pods(OLD_FIRST_ADMIN)
    problems = pod_security.check(pods, LEVELS)
    assert any("allowPrivilegeEscalation" in p for p in problems)
    assert any("runAsNonRoot" in p for p in problems)
    assert any("seccompProfile" in p for p in problems)
    assert any("drop ALL" in p for p in problems)


@pytest.mark.parametrize("overlay", ["base", *overlays()])
def test_every_pod_template_passes_the_namespace_policy(overlay: str) -> None:
    docs = render(overlay)
    templates = [d for d in docs if pod_security.pod_specs(d) is not None]
    assert {"releases", "orgs", "gateway", "nginx", "forge-migrate"} <= {
        d["metadata"]["name"] for d in templates
    }
    assert pod_security.check(docs, LEVELS) == []


WEAKNESSES = {
    "privileged": ("containers", 0, "securityContext", "privileged", True),
    "escalation": ("containers", 0, "securityContext", "allowPrivilegeEscalation", True),
    "root user": ("securityContext", "runAsUser", 0),
    "root allowed": ("containers", 0, "securityContext", "runAsNonRoot", False),
    "unconfined seccomp": ("securityContext", "seccompProfile", {"type": "Unconfined"}),
    "a capability": ("containers", 0, "securityContext", "capabilities", {"add": ["NET_ADMIN"]}),
    "host network": ("hostNetwork", True),
    "host path": ("volumes", [{"name": "h", "hostPath": {"path": "/"}}]),
    "host port": ("containers", 0, "ports", [{"containerPort": 80, "hostPort": 80}]),
}  # fmt: skip


@pytest.mark.parametrize("weakness", sorted(WEAKNESSES))
def test_each_weakness_the_level_forbids_is_refused(weakness: str) -> None:
    (pod,) = [p for p in _documented_pods() if p["metadata"]["name"] == "forge-admin"]
    pod = copy.deepcopy(pod)
    *path, key, value = WEAKNESSES[weakness]
    where = pod["spec"]
    for step in path:
        where = where[step]
    where[key] = value
    assert pod_security.check([pod], LEVELS) != []
