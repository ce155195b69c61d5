"""The Kubernetes overlays (deploy/k8s/overlays), rendered with kubectl kustomize offline:
asset bytes in S3 with no ReadWriteMany volume; dev single replicas with an in-cluster MinIO; prod
autoscaled with the S3 credentials from a Secret. make deploy-check validates their schemas."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
OVERLAYS = ROOT / "deploy/k8s/overlays"


def render(overlay: str) -> list[dict[str, Any]]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed")
    out = subprocess.run(
        [
            kubectl,
            "kustomize",
            "--load-restrictor",
            "LoadRestrictionsNone",
            str(OVERLAYS / overlay),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [doc for doc in yaml.safe_load_all(out) if doc]


def by_kind(docs: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for d in docs if d["kind"] == kind}


def releases_env(docs: list[dict[str, Any]]) -> tuple[dict[str, str], list[str]]:
    config = by_kind(docs, "ConfigMap")["forge-config"]["data"]
    pod = by_kind(docs, "Deployment")["releases"]["spec"]["template"]["spec"]
    secrets = [s["secretRef"]["name"] for s in pod["containers"][0]["envFrom"] if "secretRef" in s]
    return config, secrets


def test_overlays_list_every_resource_of_the_base() -> None:
    base = yaml.safe_load((ROOT / "deploy/k8s/kustomization.yaml").read_text())
    mirror = yaml.safe_load((OVERLAYS / "base/kustomization.yaml").read_text())
    assert mirror["resources"] == [f"../../{name}" for name in base["resources"]]
    assert mirror["images"] == base["images"]


@pytest.mark.parametrize("overlay", ["dev", "prod"])
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
