"""The deployment files do what they claim, checked without a container engine: compose's
one-shot `migrate` command, the files the gateway and nginx are given, the Kubernetes rendering."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import asyncpg
import pytest
import yaml
from forge_gateway.plugins.config import load_plugins_file
from forge_testing.plugin import run_sync

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = yaml.safe_load((ROOT / "compose.yaml").read_text())
TEMPLATE = (ROOT / "deploy/nginx/forge.conf.template").read_text()


def _services() -> dict[str, Any]:
    services: dict[str, Any] = COMPOSE["services"]
    return services


async def _account_names(database_url: str) -> list[str]:
    conn = await asyncpg.connect(database_url)
    try:
        return [r["name"] for r in await conn.fetch("SELECT name FROM core.accounts")]
    finally:
        await conn.close()


def _rendered(*files: str) -> dict[str, Any]:
    """The compose FILES as `docker-compose config` renders them with no environment at all (what
    `docker compose up` runs on a machine where nothing is set)."""
    compose = shutil.which("docker-compose")
    if compose is None:
        pytest.skip("docker-compose is not installed (make deploy-tools)")
    argv = [compose, *(arg for name in files for arg in ("-f", str(ROOT / name))), "config"]
    done = subprocess.run(
        argv, env={"PATH": os.environ.get("PATH", "")}, cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    config: dict[str, Any] = yaml.safe_load(done.stdout)
    return config


def _demo_credentials() -> list[str]:
    """Every password and token of the demo world: public, in this repository."""
    world = json.loads((ROOT / "demo/world.json").read_text())
    known = [user["password"] for user in world["users"] if user.get("password")]
    known += [token for user in world["users"] for token in user.get("tokens", [])]
    assert len(known) >= 8
    return known


def _run_migrate(config: dict[str, Any], database_url: str, tmp_path: Path) -> str:
    """The rendered `migrate` service's shell line, run against DATABASE_URL: its output."""
    command = config["services"]["migrate"]["command"][0]
    command = command.replace("/app/demo/world.json", str(ROOT / "demo/world.json"))
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "STORAGE_PATH": str(tmp_path / "storage"),
        # `forge` and `python` of the image are the venv's here.
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "LOG_LEVEL": "WARNING",
    }
    done = subprocess.run(["sh", "-c", command], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_compose_default_holds_no_known_credential(database_url: str, tmp_path: Path) -> None:
    """`docker compose up` as it is: no demo password or token anywhere in what compose runs, no
    world loaded (the database the migrate job leaves has no account, so nobody can sign in until
    the operator creates the first admin), and nginx published on the loopback only."""
    config = _rendered("compose.yaml")
    text = yaml.safe_dump(config)
    for known in [*_demo_credentials(), "demo/world.json", "forge load"]:
        assert known not in text
    _run_migrate(config, database_url, tmp_path)
    assert run_sync(_account_names(database_url)) == []
    ports = config["services"]["nginx"]["ports"]
    published = [p if isinstance(p, str) else f"{p['host_ip']}:{p['published']}:" for p in ports]
    assert published and all(p.startswith("127.0.0.1:8080:") for p in published), published
    # the one way to publish everywhere is asked for by name
    everywhere = subprocess.run(
        ["docker-compose", "-f", str(ROOT / "compose.yaml"), "config"],
        env={"PATH": os.environ.get("PATH", ""), "FORGE_BIND": "0.0.0.0"},
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert "0.0.0.0:8080:80" in everywhere.stdout


def test_compose_demo_world_only_with_its_override_file(database_url: str, tmp_path: Path) -> None:
    """`docker compose -f compose.yaml -f compose.demo.yaml up`: migrate loads the demo world into
    the empty database, and only once (a second start loads nothing over it)."""
    config = _rendered("compose.yaml", "compose.demo.yaml")
    assert "/app/demo/world.json" in config["services"]["migrate"]["command"][0]
    assert "loaded" in _run_migrate(config, database_url, tmp_path)
    loaded = run_sync(_account_names(database_url))
    assert "alice" in loaded
    assert "nothing loaded" in _run_migrate(config, database_url, tmp_path)
    assert sorted(run_sync(_account_names(database_url))) == sorted(loaded)


def test_compose_nginx_fills_every_template_placeholder() -> None:
    placeholders = set(re.findall(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", TEMPLATE))
    nginx = _services()["nginx"]
    assert placeholders <= set(nginx["environment"])
    assert "/etc/nginx/templates/default.conf.template" in " ".join(nginx["volumes"])
    # Every upstream names a compose service on the port it serves on.
    for key, service in (
        ("RELEASES_UPSTREAM", "releases"),
        ("ORGS_UPSTREAM", "orgs"),
        ("GATEWAY_UPSTREAM", "gateway"),
    ):
        assert nginx["environment"][key] == f"{service}:8080"
        assert _services()[service]["command"][-1] == "8080"


def test_compose_services_wait_for_migrate_and_check_readyz() -> None:
    for name in ("releases", "orgs", "gateway"):
        service = _services()[name]
        assert service["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
        assert "/readyz" in " ".join(service["healthcheck"]["test"])
        assert service["command"][:3] == ["serve", "--service", name]


def test_plugins_files_are_valid_gateway_configuration() -> None:
    """deploy/plugins.json (compose) names event-recorder at its compose address."""
    plugins = load_plugins_file(ROOT / "deploy/plugins.json")
    assert [(p.name, p.address) for p in plugins] == [("event-recorder", "event-recorder:50051")]
    assert "event-recorder" in _services()
    assert load_plugins_file(ROOT / "deploy/k8s/base/plugins.json") == []


def test_kubernetes_nginx_config_is_the_current_rendering() -> None:
    rendered = subprocess.run(
        [sys.executable, str(ROOT / "deploy/nginx/render.py"), "--k8s"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert rendered == (ROOT / "deploy/k8s/base/nginx/forge.conf").read_text(), "make deploy-render"


@pytest.mark.parametrize("service", ["releases", "orgs", "gateway"])
def test_kubernetes_gives_requests_in_flight_their_time_after_sigterm(service: str) -> None:
    # docs/architecture.md "Stopping": preStop sleeps while the endpoint is removed, then SIGTERM
    # lets requests in flight finish for SHUTDOWN_TIMEOUT seconds, all within the grace period.
    documents = list(yaml.safe_load_all((ROOT / f"deploy/k8s/base/{service}.yaml").read_text()))
    (deployment,) = [d for d in documents if d and d["kind"] == "Deployment"]
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    command = container["lifecycle"]["preStop"]["exec"]["command"]
    assert command[0] == "/bin/sleep"
    config = yaml.safe_load((ROOT / "deploy/k8s/base/config.yaml").read_text())["data"]
    needed = int(command[1]) + float(config["SHUTDOWN_TIMEOUT"]) + 5
    assert pod["terminationGracePeriodSeconds"] >= needed
