"""The deployment files do what they claim, checked without a container engine: compose's
one-shot `migrate` command, the files the gateway and nginx are given, the Kubernetes rendering."""

from __future__ import annotations

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
from forge_common.embedded_pg import free_port
from forge_gateway.plugins.config import load_plugins_file
from forge_testing.plugin import run_sync
from forge_testing.processes import NotReady, stop_process, wait_until_ready

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


def test_compose_migrate_loads_the_demo_world_once(database_url: str, tmp_path: Path) -> None:
    """The `migrate` service's shell line, run twice: migrate + load, then migrate + skip."""
    command = _services()["migrate"]["command"][0]
    assert "/app/demo/world.json" in command  # where deploy/Dockerfile puts demo/
    command = command.replace("/app/demo/world.json", str(ROOT / "demo/world.json"))
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "STORAGE_PATH": str(tmp_path / "storage"),
        # `forge` and `python` of the image are the venv's here.
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "LOG_LEVEL": "WARNING",
    }
    first = subprocess.run(["sh", "-c", command], env=env, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    assert "loaded" in first.stdout
    loaded = run_sync(_account_names(database_url))
    assert loaded
    second = subprocess.run(["sh", "-c", command], env=env, capture_output=True, text=True)
    assert second.returncode == 0, second.stderr
    assert "nothing loaded" in second.stdout
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


# --- `docker compose up` with no environment (docs/deploy.md "Compose") ---

FORGE_SERVICES = ("migrate", "releases", "orgs", "gateway")
SECRET_NAMES = ("EVENTS_SECRET", "URL_SIGNING_SECRET")


def _compose_config_with_no_environment() -> dict[str, Any]:
    """compose.yaml as `docker-compose config` renders it with an empty environment."""
    compose = shutil.which("docker-compose")
    if compose is None:
        pytest.skip("docker-compose is not installed (make deploy-tools)")
    done = subprocess.run(
        [compose, "-f", str(ROOT / "compose.yaml"), "config"],
        env={"PATH": os.environ.get("PATH", "")},
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    config: dict[str, Any] = yaml.safe_load(done.stdout)
    return config


def _with_secrets(
    service: dict[str, Any], argv: list[str], secrets_dir: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """ARGV under the service's entry point wrapper, as the container runs it."""
    assert service["entrypoint"][0] == "with-secrets"
    return subprocess.run(
        ["sh", str(ROOT / "deploy/with-secrets.sh"), *argv],
        env={**env, "FORGE_SECRETS_DIR": str(secrets_dir)},
        capture_output=True,
        text=True,
        timeout=60,
    )


def _local_env(service: dict[str, Any], database_url: str, storage: Path) -> dict[str, str]:
    """The service's rendered environment, pointed at this machine: the test database, folder
    storage instead of the MinIO container, and this venv's `forge`."""
    env = {k: str(v) for k, v in service["environment"].items() if not k.startswith("AWS_")}
    env.pop("STORAGE_URL", None)
    env.pop("STORAGE_REDIRECT", None)
    return {
        **env,
        "DATABASE_URL": database_url,
        "STORAGE_PATH": str(storage),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "LOG_LEVEL": "WARNING",
    }


def test_compose_starts_with_no_environment_and_keeps_generated_secrets(
    database_url: str, tmp_path: Path
) -> None:
    """`docker compose up` with nothing set: every forge process gets EVENTS_SECRET and
    URL_SIGNING_SECRET from the volume `secrets` (made on the first start, the same for every
    process and after a restart), and the releases service, which refuses to start alone
    without them, starts and answers /readyz."""
    config = _compose_config_with_no_environment()
    services = config["services"]
    assert "secrets" in config["volumes"]
    for name in FORGE_SERVICES:
        service = services[name]
        assert service["environment"]["EVENTS_SECRET"] == ""
        assert "secrets:/var/lib/forge/secrets" in " ".join(
            f"{v['source']}:{v['target']}" if isinstance(v, dict) else v for v in service["volumes"]
        )
        assert service["entrypoint"][0] == "with-secrets"
    secrets_dir = tmp_path / "secrets"
    secrets_dir.mkdir()
    storage = tmp_path / "storage"

    # the one-shot migrate service, as compose runs it (first start: makes the secrets)
    migrate = services["migrate"]
    command = migrate["command"][0].replace("/app/demo/world.json", str(ROOT / "demo/world.json"))
    env = _local_env(migrate, database_url, storage)
    done = _with_secrets(migrate, [*migrate["entrypoint"][1:], command], secrets_dir, env)
    assert done.returncode == 0, done.stderr
    made = {name: (secrets_dir / name).read_text() for name in SECRET_NAMES}
    assert all(len(value) == 64 for value in made.values())
    assert all((secrets_dir / name).stat().st_mode & 0o077 == 0 for name in SECRET_NAMES)

    releases = services["releases"]
    env = _local_env(releases, database_url, storage)
    port = free_port()
    argv = [*releases["entrypoint"][1:], *releases["command"]]
    argv[argv.index("--port") + 1] = str(port)
    argv[argv.index("serve") + 1 : argv.index("serve") + 1] = ["--host", "127.0.0.1"]
    log = tmp_path / "releases.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            ["sh", str(ROOT / "deploy/with-secrets.sh"), *argv],
            env={**env, "FORGE_SECRETS_DIR": str(secrets_dir)},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        ready = f"http://127.0.0.1:{port}/readyz"
        run_sync(wait_until_ready(ready, exit_code=process.poll, within=30))
    except NotReady:
        pytest.fail(log.read_text(errors="replace"))
    finally:
        stop_process(process)

    # what each process sees: the volume's values, kept across restarts; the environment wins
    show = [sys.executable, "-c", "import os; print(os.environ['EVENTS_SECRET'])"]
    for name in ("releases", "orgs", "gateway"):
        env = _local_env(services[name], "", storage)
        seen = _with_secrets(services[name], show, secrets_dir, env)
        assert seen.stdout.strip() == made["EVENTS_SECRET"], seen.stderr
    given = _local_env(releases, database_url, storage) | {"EVENTS_SECRET": "from-the-env"}
    assert _with_secrets(releases, show, secrets_dir, given).stdout.strip() == "from-the-env"
    assert {name: (secrets_dir / name).read_text() for name in SECRET_NAMES} == made
