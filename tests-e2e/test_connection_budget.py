"""docs/deploy.md "PostgreSQL connections": the most connections the production recipe
(deploy/k8s/overlays/example) opens, from the pool sizes in the code times the replicas in the
manifests (an autoscaler's maximum, plus the pod a rolling update adds), is the figure the
document gives; and the migrate Job does not drift under GitOps."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from forge_common.db import POOL_MAX_SIZE
from forge_gateway.options import DeliveryOptions
from forge_releases.insights.beside_nginx import POOL_SIZE as SIDECAR_POOL_SIZE

from .test_k8s_overlays import by_kind, overlays, render

ROOT = Path(__file__).resolve().parents[1]
LISTEN = 1  # each process's one LISTEN connection (forge_common.notifications)
# per pod of each Deployment: the request pool and LISTEN; the gateway's delivery worker adds its
# own pool; the nginx pod's insights sidecar has a small pool and LISTEN (its release cache)
PER_POD = {
    "releases": POOL_MAX_SIZE + LISTEN,
    "orgs": POOL_MAX_SIZE + LISTEN,
    "gateway": POOL_MAX_SIZE + LISTEN + DeliveryOptions().pool_size,
    "nginx": SIDECAR_POOL_SIZE + LISTEN,
}
ONE_OFF = {"forge-migrate": 1, "storage-sweep": 1, "forge-admin": 1}  # one connection each


def _most_pods(deployment: dict[str, Any], autoscaler: dict[str, Any] | None) -> int:
    replicas = autoscaler["spec"]["maxReplicas"] if autoscaler else deployment["spec"]["replicas"]
    surge = deployment["spec"]["strategy"]["rollingUpdate"]["maxSurge"]
    if isinstance(surge, str):  # a percentage, rounded up as Kubernetes does
        surge = math.ceil(replicas * int(surge.rstrip("%")) / 100)
    return int(replicas + surge)


def budget(docs: list[dict[str, Any]]) -> dict[str, int]:
    deployments = by_kind(docs, "Deployment")
    autoscalers = by_kind(docs, "HorizontalPodAutoscaler")
    assert set(deployments) == set(PER_POD), "a Deployment the budget does not know"
    found = {
        name: _most_pods(deployment, autoscalers.get(name)) * PER_POD[name]
        for name, deployment in deployments.items()
    }
    jobs = {**by_kind(docs, "Job"), **by_kind(docs, "CronJob")}
    assert set(jobs) <= set(ONE_OFF)
    return found | {name: ONE_OFF[name] for name in jobs} | {"forge-admin": 1}


def test_the_documented_connection_budget_is_what_the_recipe_opens() -> None:
    found = budget(render("example"))
    deploy_md = (ROOT / "docs/deploy.md").read_text()
    documented = re.search(r"at most \*\*(\d+) connections\*\*", deploy_md)
    assert documented is not None
    assert sum(found.values()) == int(documented.group(1)), found
    for name, count in found.items():  # and the table's rows
        assert re.search(rf"\| `{name}` \|[^\n]*\| {count} \|", deploy_md), (name, count)


def test_the_migrate_job_does_not_drift_under_gitops() -> None:
    for overlay in ["base", *overlays()]:
        job = by_kind(render(overlay), "Job")["forge-migrate"]
        # deleted a day after it finished, a GitOps tool would create it again: a daily migrate
        assert "ttlSecondsAfterFinished" not in job["spec"]
        annotations = job["metadata"]["annotations"]
        assert annotations["kustomize.toolkit.fluxcd.io/force"] == "enabled"
        assert "Replace=true" in annotations["argocd.argoproj.io/sync-options"]
