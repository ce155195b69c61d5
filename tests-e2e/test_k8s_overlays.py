"""The Kubernetes base and overlays (deploy/k8s), rendered offline with plain `kubectl kustomize`
(as `kubectl apply -k`, Argo CD and Flux do: no --load-restrictor): asset bytes in S3 with no
ReadWriteMany volume; dev single replicas with an in-cluster MinIO; prod autoscaled with the S3
credentials from a Secret; the example of docs/deploy.md. make deploy-check validates their
schemas."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
K8S = ROOT / "deploy/k8s"
OVERLAYS = K8S / "overlays"
SECRET_VALUE = re.compile(r"CHANGE-ME|-secret\b")


def render(overlay: str) -> list[dict[str, Any]]:
    """`kubectl kustomize deploy/k8s/overlays/OVERLAY` (or the base), exactly so."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed")
    folder = K8S / "base" if overlay == "base" else OVERLAYS / overlay
    done = subprocess.run(
        [kubectl, "kustomize", str(folder)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def by_kind(docs: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for d in docs if d["kind"] == kind}


def releases_env(docs: list[dict[str, Any]]) -> tuple[dict[str, str], list[str]]:
    config = by_kind(docs, "ConfigMap")["forge-config"]["data"]
    pod = by_kind(docs, "Deployment")["releases"]["spec"]["template"]["spec"]
    secrets = [s["secretRef"]["name"] for s in pod["containers"][0]["envFrom"] if "secretRef" in s]
    return config, secrets


def overlays() -> list[str]:
    return sorted(p.name for p in OVERLAYS.iterdir() if (p / "kustomization.yaml").exists())


def test_every_overlay_is_checked_and_documented() -> None:
    assert {"dev", "prod", "example"} <= set(overlays())
    deploy_md = (ROOT / "docs/deploy.md").read_text()
    for name in overlays():
        assert f"deploy/k8s/overlays/{name}" in deploy_md


@pytest.mark.parametrize("overlay", ["base", *overlays()])
def test_renders_with_plain_kustomize_and_carries_no_secret(overlay: str) -> None:
    """No overlay reaches outside its folder's tree, and no secret value is in the repository:
    every process reads the Secrets the operator created (docs/deploy.md "Secrets")."""
    docs = render(overlay)
    assert by_kind(docs, "Secret") == {}
    for doc in docs:
        assert not SECRET_VALUE.search(yaml.safe_dump(doc)), doc["metadata"]["name"]


@pytest.mark.parametrize("overlay", ["dev", "prod", "example"])
def test_overlays_keep_assets_in_s3_without_a_shared_volume(overlay: str) -> None:
    docs = render(overlay)
    for claim in by_kind(docs, "PersistentVolumeClaim").values():
        assert "ReadWriteMany" not in claim["spec"]["accessModes"]
    pod = by_kind(docs, "Deployment")["releases"]["spec"]["template"]["spec"]
    assert [v["name"] for v in pod["volumes"]] == ["tmp"]
    config, _ = releases_env(docs)
    assert config["STORAGE_URL"].startswith("s3://")
    assert all(d["metadata"].get("namespace") == "forge" for d in docs if d["kind"] != "Namespace")


def test_dev_runs_one_replica_of_everything_and_minio() -> None:
    docs = render("dev")
    deployments = by_kind(docs, "Deployment")
    assert {name: d["spec"]["replicas"] for name, d in deployments.items()} == dict.fromkeys(
        ["gateway", "nginx", "orgs", "releases", "minio"], 1
    )
    assert by_kind(docs, "HorizontalPodAutoscaler") == {}
    config, secrets = releases_env(docs)
    assert config["AWS_ENDPOINT_URL"] == "http://minio:9000"
    assert config["STORAGE_REDIRECT"] == "off"
    assert any(name.startswith("minio-credentials") for name in secrets)
    assert "minio-bucket" in by_kind(docs, "Job")
    assert "minio" in by_kind(docs, "Service")


def test_prod_autoscales_and_reads_s3_credentials_from_a_secret() -> None:
    docs = render("prod")
    autoscalers = by_kind(docs, "HorizontalPodAutoscaler")
    assert {"releases", "orgs", "nginx"} <= set(autoscalers)
    deployments = by_kind(docs, "Deployment")
    for name in autoscalers:
        assert "replicas" not in deployments[name]["spec"]  # the autoscaler owns the count
    config, secrets = releases_env(docs)
    assert "forge-s3" in secrets and "AWS_ENDPOINT_URL" not in config
    assert config["STORAGE_REDIRECT"] == "on"
    sweep = by_kind(docs, "CronJob")["storage-sweep"]
    container = sweep["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    assert container["args"] == ["storage", "sweep"]


def test_example_runs_three_fixed_release_replicas_of_its_own_image_behind_tls() -> None:
    docs = render("example")
    deployments = by_kind(docs, "Deployment")
    assert deployments["releases"]["spec"]["replicas"] == 3
    assert "releases" not in by_kind(docs, "HorizontalPodAutoscaler")  # nothing else owns it
    for deployment in deployments.values():
        for container in deployment["spec"]["template"]["spec"]["containers"]:
            if container["name"] != "nginx":
                assert container["image"].startswith("registry.example.com/acme/forge:")
    config, secrets = releases_env(docs)
    assert config["APP_URL"].startswith("https://")
    assert {"forge-secrets", "forge-s3"} <= set(secrets)
    (ingress,) = by_kind(docs, "Ingress").values()
    host = ingress["spec"]["rules"][0]["host"]
    assert ingress["spec"]["tls"] == [{"hosts": [host], "secretName": "forge-tls"}]
    assert config["APP_URL"] == f"https://{host}/"
    backend = ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend["name"] == "nginx" and backend["name"] in by_kind(docs, "Service")


INSIGHTS_LOG = "/var/log/forge-insights/hits.log"


def _mounts(container: dict[str, Any]) -> dict[str, str]:
    return {m["name"]: m["mountPath"] for m in container.get("volumeMounts", [])}


@pytest.mark.parametrize("overlay", ["base", *overlays()])
def test_the_nginx_pod_counts_its_micro_cache_hits_with_a_sidecar(overlay: str) -> None:
    """docs/insights.md "In Kubernetes": nginx logs the checks it answers from its micro-cache
    to a file in a volume of the pod, which a native sidecar running our image reads and counts
    in the releases service's database."""
    docs = render(overlay)
    deployments = by_kind(docs, "Deployment")
    pod = deployments["nginx"]["spec"]["template"]["spec"]
    (sidecar,) = pod["initContainers"]
    (nginx,) = pod["containers"]
    assert sidecar["restartPolicy"] == "Always"  # started before nginx, stopped after it
    assert sidecar["args"][:2] == ["insights", "count-proxy-log"]
    releases = deployments["releases"]["spec"]["template"]["spec"]["containers"][0]
    assert sidecar["image"] == releases["image"]
    env = {e["name"]: e for e in sidecar["env"]}
    assert env["INSIGHTS_PROXY_LOG"]["value"] == INSIGHTS_LOG
    database = env["DATABASE_URL"]["valueFrom"]["secretKeyRef"]
    _, secrets = releases_env(docs)
    assert (
        database == {"name": "forge-secrets", "key": "DATABASE_URL"} and "forge-secrets" in secrets
    )
    # its health is its own: a database outage must not take nginx out of the Service
    assert "readinessProbe" not in sidecar
    probe = sidecar["livenessProbe"]["httpGet"]
    assert probe["path"] == "/healthz"
    assert probe["port"] in [p["name"] for p in sidecar["ports"]]
    assert str(sidecar["ports"][0]["containerPort"]) == sidecar["args"][-1]
    assert {"requests", "limits"} <= set(sidecar["resources"])
    # one volume, the same folder in both; bounded
    folder = INSIGHTS_LOG.rsplit("/", 1)[0]
    assert _mounts(sidecar)["insights-log"] == _mounts(nginx)["insights-log"] == folder
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["insights-log"]["emptyDir"]["sizeLimit"]
    # the same user as nginx (it frees the counted part of nginx's file), nothing more
    assert "runAsUser" not in sidecar.get("securityContext", {}) and pod["securityContext"]
    assert sidecar["securityContext"]["readOnlyRootFilesystem"] is True
    # nginx's config logs its micro-cache hits there, and nowhere else
    (config,) = [
        d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"].startswith("nginx-")
    ]
    logs = re.findall(r"access_log (\S+) forge_insights", config["data"]["forge.conf"])
    assert logs and set(logs) == {INSIGHTS_LOG}


@pytest.mark.parametrize(
    ("overlay", "hops"), [("base", 1), ("dev", 1), ("prod", 1), ("example", 2)]
)
def test_the_services_know_each_clients_address_behind_their_proxies(
    overlay: str, hops: int
) -> None:
    """Sign-in throttling counts the client's address (docs/accounts.md "The client's address"):
    X-Forwarded-For believed from the pod network only, over nginx's entry (one hop) or, behind
    the example's Ingress, the controller's too (two); never "the last entry" for everybody."""
    from forge_common.config import Settings

    config, _ = releases_env(render(overlay))
    assert "TRUST_FORWARDED_FOR" not in config
    settings = Settings.from_env({**config, "DATABASE_URL": "postgresql://x/y"})
    assert settings.trusted_proxy_hops == hops
    assert settings.trusted_proxies and all(net.is_private for net in settings.trusted_proxies)
