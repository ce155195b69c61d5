"""`docker compose up` with no environment and no fixed secret (docs/deploy.md "Compose"), checked
without a container engine: compose.yaml holds no password, everything that reads the volume
`secrets` waits for the one-shot service that fills it, and deploy/with-secrets.sh (run here with
sh in a temporary folder, as the containers run it) makes each secret once, shares it between
processes racing on the first start, lets the environment win, and builds a DATABASE_URL that a
real PostgreSQL, initialised as the postgres image does from POSTGRES_PASSWORD_FILE, accepts."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import asyncpg
import pytest
import yaml
from forge_common.embedded_pg import find_bindir
from forge_testing.plugin import query, run_sync
from forge_testing.ports import free_port
from forge_testing.processes import NotReady, stop_process, wait_until_ready

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parent.parent
WITH_SECRETS = ROOT / "deploy/with-secrets.sh"
COMPOSE: dict[str, Any] = yaml.safe_load((ROOT / "compose.yaml").read_text())
SERVICES: dict[str, Any] = COMPOSE["services"]
FORGE_SERVICES = ("migrate", "releases", "orgs", "gateway")
# every file with-secrets makes in the volume
SECRET_NAMES = ("EVENTS_SECRET", "URL_SIGNING_SECRET", "POSTGRES_PASSWORD", "MINIO_ROOT_PASSWORD")
# where postgres, minio and minio-bucket mount the volume (read-only)
SECRETS_MOUNT = "/run/forge-secrets"


# --- compose.yaml as compose reads it with an empty environment ---

_INTERPOLATION = re.compile(
    r"\$\$|\$\{(?P<name>\w+)(?:(?P<op>:?[-?])(?P<default>[^}]*))?\}|\$(?P<bare>\w+)"
)


def _with_no_environment(text: str) -> str:
    """TEXT after compose's interpolation when nothing is set: `${X:-default}` is the default,
    `${X}` and `$X` are empty, `$$` is `$`."""

    def value(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        if (match.group("op") or "").endswith("-"):
            return match.group("default")
        return ""

    return _INTERPOLATION.sub(value, text)


def _environment(service: str) -> dict[str, str]:
    """The service's environment from compose.yaml (anchors merged), with no environment set."""
    raw = SERVICES[service].get("environment", {})
    return {key: _with_no_environment(str(value)) for key, value in raw.items()}


def _mounts(service: str) -> dict[str, str]:
    """The service's volumes: mount target -> source (named volume or path)."""
    mounts = {}
    for volume in SERVICES[service].get("volumes", []):
        source, target = volume.split(":")[:2]
        mounts[target] = source
    return mounts


# --- no fixed secret anywhere in compose.yaml ---

# an environment variable that holds a secret (a *_FILE variable holds a path to one)
_SECRET_NAME = re.compile(r"PASSWORD|SECRET|TOKEN|PASSPHRASE|PRIVATE_KEY|CREDENTIAL")
# a URL with a password in it: scheme://user:password@
_URL_PASSWORD = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:([^/\s@]+)@")


def _fixed_secrets(document: Any, where: str = "") -> Iterator[str]:
    """Every place in a compose document that holds a secret once the environment is empty: a
    secret-named variable with a value (a literal or a `${X:-default}`), or a password in a URL
    anywhere (an environment value, a command, a healthcheck)."""
    if isinstance(document, dict):
        for key, value in document.items():
            here = f"{where}.{key}" if where else str(key)
            scalar = isinstance(value, (str, int, float))
            if scalar and _names_secret(str(key)) and _with_no_environment(str(value)):
                yield f"{here}: {value}"
            yield from _fixed_secrets(value, here)
    elif isinstance(document, list):
        for index, item in enumerate(document):
            here = f"{where}[{index}]"
            if isinstance(item, str) and re.fullmatch(r"\w+=.*", item):  # KEY=value
                key, _, value = item.partition("=")
                if _names_secret(key) and _with_no_environment(value):
                    yield f"{here}: {item}"
            yield from _fixed_secrets(item, here)
    elif isinstance(document, str):
        for match in _URL_PASSWORD.finditer(_with_no_environment(document)):
            yield f"{where}: a password in {match.group(0)!r}"


def _names_secret(key: str) -> bool:
    return bool(_SECRET_NAME.search(key)) and not key.endswith("_FILE")


def test_compose_holds_no_fixed_secret() -> None:
    assert list(_fixed_secrets(COMPOSE)) == []


@pytest.mark.parametrize(
    "fixed",
    [
        {"services": {"postgres": {"environment": {"POSTGRES_PASSWORD": "forge"}}}},
        {"services": {"postgres": {"environment": ["POSTGRES_PASSWORD=forge"]}}},
        {"x-env": {"MINIO_ROOT_PASSWORD": "${MINIO_ROOT_PASSWORD:-forge-minio-secret}"}},
        {"x-env": {"AWS_SECRET_ACCESS_KEY": "${MINIO_ROOT_PASSWORD-forge-minio-secret}"}},
        {"x-env": {"DATABASE_URL": "postgresql://forge:forge@postgres:5432/forge"}},
        {"x-env": {"DATABASE_URL": "${DATABASE_URL:-postgresql://forge:forge@postgres/forge}"}},
        {"services": {"job": {"command": ["mc alias set f http://admin:hunter22@minio:9000"]}}},
    ],
)
def test_fixed_secret_check_finds_each_kind(fixed: dict[str, Any]) -> None:
    """The check above is not blind: the defaults compose.yaml had, and their variants, fail it."""
    assert list(_fixed_secrets(fixed)) != []
    allowed = {
        "x-env": {
            "EVENTS_SECRET": "${EVENTS_SECRET:-}",
            "POSTGRES_PASSWORD_FILE": "/run/forge-secrets/POSTGRES_PASSWORD",
            "DATABASE_URL": "postgresql://forge@postgres:5432/forge",
        }
    }
    assert list(_fixed_secrets(allowed)) == []


# --- the order: nothing reads the volume before the service `secrets` has filled it ---


def _waits_for(service: str, awaited: str) -> bool:
    """SERVICE starts only after AWAITED completed successfully, directly or through the
    services it waits for."""
    depends = SERVICES[service].get("depends_on", {})
    if depends.get(awaited, {}).get("condition") == "service_completed_successfully":
        return True
    return any(_waits_for(name, awaited) for name in depends)


def test_compose_makes_the_secrets_before_anything_reads_them() -> None:
    maker = SERVICES["secrets"]
    assert maker["entrypoint"] == ["with-secrets"] and maker["command"] == ["true"]
    assert maker["restart"] == "no" and "depends_on" not in maker
    assert _mounts("secrets")["/var/lib/forge/secrets"] == "secrets"
    readers = [
        name for name in SERVICES if name != "secrets" and "secrets" in _mounts(name).values()
    ]
    assert {"postgres", "minio", "minio-bucket", *FORGE_SERVICES} <= set(readers)
    for name in readers:
        assert _waits_for(name, "secrets"), f"{name} may start before the secrets exist"
    # the containers that are not ours read their password through the image's *_FILE variable,
    # from a file with-secrets makes, on a read-only mount of the volume
    for name, variable in (
        ("postgres", "POSTGRES_PASSWORD_FILE"),
        ("minio", "MINIO_ROOT_PASSWORD_FILE"),
    ):
        path = Path(_environment(name)[variable])
        assert str(path.parent) == SECRETS_MOUNT and path.name in SECRET_NAMES
        assert path.name == variable.removesuffix("_FILE")
        assert f"secrets:{SECRETS_MOUNT}:ro" in SERVICES[name]["volumes"]
        # the image refuses both set at once (postgres) or lets the file override (MinIO)
        assert variable.removesuffix("_FILE") not in _environment(name)
    assert f"secrets:{SECRETS_MOUNT}:ro" in SERVICES["minio-bucket"]["volumes"]
    # made by with-secrets whatever the shell exports (a DATABASE_URL for `make test`, AWS keys)
    for name in FORGE_SERVICES:
        assert SERVICES[name]["environment"]["DATABASE_URL"] == ""
    assert SERVICES["releases"]["environment"]["AWS_SECRET_ACCESS_KEY"] == ""


# --- with-secrets itself, with sh, in a temporary folder ---

# the image's PATH has its venv's python first (with-secrets percent-encodes with it)
_PATH = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
SHOW_ENVIRONMENT = [sys.executable, "-c", "import json, os; print(json.dumps(dict(os.environ)))"]


def _with_secrets(
    secrets_dir: Path, env: dict[str, str], argv: list[str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["sh", str(WITH_SECRETS), *(argv or SHOW_ENVIRONMENT)],
        env={"PATH": _PATH, **env, "FORGE_SECRETS_DIR": str(secrets_dir)},
        capture_output=True,
        text=True,
        timeout=60,
    )


def _seen(secrets_dir: Path, env: dict[str, str]) -> dict[str, str]:
    """The environment with-secrets hands to its command."""
    done = _with_secrets(secrets_dir, env)
    assert done.returncode == 0, done.stderr
    seen: dict[str, str] = json.loads(done.stdout)
    return seen


def _volume(secrets_dir: Path) -> dict[str, str]:
    return {path.name: path.read_text() for path in sorted(secrets_dir.iterdir())}


def test_with_secrets_makes_each_secret_once_and_keeps_it(tmp_path: Path) -> None:
    """The first start makes all four into the volume (only the owner may read them); the releases
    service's environment gets DATABASE_URL and AWS_SECRET_ACCESS_KEY from them, and the same
    values after a restart."""
    secrets_dir = tmp_path / "secrets"
    secrets_dir.mkdir()
    maker = SERVICES["secrets"]
    made = _with_secrets(secrets_dir, _environment("secrets"), [*maker["command"]])
    assert made.returncode == 0, made.stderr
    volume = _volume(secrets_dir)
    assert sorted(volume) == sorted(SECRET_NAMES)  # nothing else: no temporary file left
    for name, value in volume.items():
        assert re.fullmatch(r"[0-9a-f]{64}", value), name
        assert (secrets_dir / name).stat().st_mode & 0o077 == 0
    assert len(set(volume.values())) == len(volume)

    releases = _seen(secrets_dir, _environment("releases"))
    assert releases["EVENTS_SECRET"] == volume["EVENTS_SECRET"]
    assert releases["URL_SIGNING_SECRET"] == volume["URL_SIGNING_SECRET"]
    password = volume["POSTGRES_PASSWORD"]
    assert releases["DATABASE_URL"] == f"postgresql://forge:{password}@postgres:5432/forge"
    assert releases["AWS_SECRET_ACCESS_KEY"] == volume["MINIO_ROOT_PASSWORD"]
    assert releases["AWS_ACCESS_KEY_ID"] == _environment("minio")["MINIO_ROOT_USER"]
    # the passwords reach the process only inside what it uses
    assert "POSTGRES_PASSWORD" not in releases and "MINIO_ROOT_PASSWORD" not in releases
    # orgs stores nothing: no MinIO key for it
    orgs = _seen(secrets_dir, _environment("orgs"))
    assert "AWS_SECRET_ACCESS_KEY" not in orgs
    assert orgs["DATABASE_URL"] == releases["DATABASE_URL"]

    assert _seen(secrets_dir, _environment("releases")) == releases  # a restart
    assert _volume(secrets_dir) == volume


def test_with_secrets_lets_the_environment_win(tmp_path: Path) -> None:
    """Given values win. The two passwords the postgres and minio containers read from files are
    written into the volume (and kept for later starts without them); a password that is not
    URL-safe is percent-encoded in DATABASE_URL."""
    secrets_dir = tmp_path / "secrets"
    secrets_dir.mkdir()
    assert _with_secrets(secrets_dir, _environment("secrets"), ["true"]).returncode == 0
    before = _volume(secrets_dir)
    postgres_password = "p@ss:w/rd %é#?+"
    given = _environment("secrets") | {
        "POSTGRES_PASSWORD": postgres_password,
        "MINIO_ROOT_PASSWORD": "minio password",
    }
    assert _with_secrets(secrets_dir, given, ["true"]).returncode == 0
    after = _volume(secrets_dir)
    assert after["POSTGRES_PASSWORD"] == postgres_password
    assert after["MINIO_ROOT_PASSWORD"] == "minio password"
    assert after["EVENTS_SECRET"] == before["EVENTS_SECRET"]

    releases = _seen(secrets_dir, _environment("releases") | {"EVENTS_SECRET": "from-the-env"})
    assert releases["EVENTS_SECRET"] == "from-the-env"
    assert _volume(secrets_dir)["EVENTS_SECRET"] == before["EVENTS_SECRET"]
    url = urlsplit(releases["DATABASE_URL"])
    assert (url.username, url.hostname, url.port, url.path) == ("forge", "postgres", 5432, "/forge")
    assert url.password is not None and unquote(url.password) == postgres_password
    assert releases["AWS_SECRET_ACCESS_KEY"] == "minio password"
    # a DATABASE_URL already set is left alone (compose sets it empty, see below)
    own = _environment("releases") | {"DATABASE_URL": "postgresql://elsewhere/forge"}
    assert _seen(secrets_dir, own)["DATABASE_URL"] == "postgresql://elsewhere/forge"


def test_with_secrets_says_what_is_wrong(tmp_path: Path) -> None:
    secrets_dir = tmp_path / "secrets"
    secrets_dir.mkdir()
    (secrets_dir / "POSTGRES_PASSWORD").touch()
    done = _with_secrets(secrets_dir, _environment("releases"))
    assert done.returncode == 1 and done.stdout == ""
    empty = f"{secrets_dir}/POSTGRES_PASSWORD is empty: remove it to have it made again"
    assert done.stderr == f"with-secrets: {empty}\n"
    (secrets_dir / "POSTGRES_PASSWORD").unlink()
    no_parts = {"DATABASE_URL": ""}
    done = _with_secrets(secrets_dir, no_parts)
    assert done.returncode == 1 and done.stdout == ""
    assert "POSTGRES_USER, POSTGRES_HOST and POSTGRES_DB" in done.stderr


# `od` for with-secrets, holding every process at each secret it makes until all RACERS are there,
# so that all of them have found the secret missing and race to link their own value. The K-th
# call of each process is for the same secret (the same order, and nobody can find one made while
# somebody is still held before it), so the barrier for the K-th secret counts files K.RACER.
RACING_OD = r"""#!/bin/sh
k=$(( $(ls "$BARRIER" | grep -c "\.$RACER\$") + 1 ))
touch "$BARRIER/$k.$RACER"
deadline=$(( $(date +%s) + 20 ))
while [ "$(ls "$BARRIER" | grep -c "^$k\.")" -lt "$RACERS" ]; do
    [ "$(date +%s)" -lt "$deadline" ] || { echo "racing od: alone at secret $k" >&2; exit 1; }
    sleep 0.01
done
exec "$REAL_OD" "$@"
"""


def test_with_secrets_processes_racing_on_the_first_start_share_each_secret(
    tmp_path: Path,
) -> None:
    """Four processes start at once on an empty volume; each makes its own value of every secret
    and tries to link it: one wins per secret, and every process uses the winner's."""
    racers = 4
    secrets_dir = tmp_path / "secrets"
    secrets_dir.mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (tmp_path / "barrier").mkdir()
    od = bin_dir / "od"
    od.write_text(RACING_OD)
    od.chmod(0o755)
    real_od = shutil.which("od")
    assert real_od is not None
    base = _environment("releases") | {
        "PATH": f"{bin_dir}{os.pathsep}{_PATH}",
        "BARRIER": str(tmp_path / "barrier"),
        "RACERS": str(racers),
        "REAL_OD": real_od,
    }
    processes = [
        subprocess.Popen(
            ["sh", str(WITH_SECRETS), *SHOW_ENVIRONMENT],
            env={**base, "RACER": str(racer), "FORGE_SECRETS_DIR": str(secrets_dir)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for racer in range(racers)
    ]
    outputs = [process.communicate(timeout=60) for process in processes]
    for process, (_, stderr) in zip(processes, outputs, strict=True):
        assert process.returncode == 0, stderr
    # every process made its own value of every secret: the race did happen
    barrier = sorted(path.name for path in (tmp_path / "barrier").iterdir())
    expected = (f"{k}.{r}" for k in range(1, len(SECRET_NAMES) + 1) for r in range(racers))
    assert barrier == sorted(expected)

    volume = _volume(secrets_dir)
    assert sorted(volume) == sorted(SECRET_NAMES)
    keys = ("EVENTS_SECRET", "URL_SIGNING_SECRET", "DATABASE_URL", "AWS_SECRET_ACCESS_KEY")
    seen = [{key: json.loads(stdout)[key] for key in keys} for stdout, _ in outputs]
    assert all(one == seen[0] for one in seen)
    assert seen[0]["EVENTS_SECRET"] == volume["EVENTS_SECRET"]
    assert volume["POSTGRES_PASSWORD"] in seen[0]["DATABASE_URL"]
    assert seen[0]["AWS_SECRET_ACCESS_KEY"] == volume["MINIO_ROOT_PASSWORD"]


# --- the passwords reach PostgreSQL and MinIO's bucket job ---


class _PasswordPostgres:
    """A PostgreSQL cluster initialised as the postgres image does from POSTGRES_PASSWORD_FILE:
    `initdb --username=$POSTGRES_USER --pwfile=<the file's value>`, password authentication
    (scram-sha-256) for every connection."""

    def __init__(self, user: str, password: str) -> None:
        self.bindir = find_bindir()
        if self.bindir is None:
            pytest.skip("no PostgreSQL binaries (initdb) on this machine")
        # a folder of its own under /tmp, as the test clusters of forge_testing: a pytest started
        # meanwhile makes pytest's own temporary root 0700 again, out of the postgres user's reach
        self.folder = folder = Path(tempfile.mkdtemp(prefix="forge-compose-pg-"))
        self.port = free_port()
        if os.geteuid() == 0:  # initdb refuses root: run as the postgres user, in its folder
            shutil.chown(folder, "postgres")
        try:
            self._start(user, password)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise

    def _start(self, user: str, password: str) -> None:
        password_file = self.folder / "pwfile"
        password_file.write_text(password + "\n")  # the image writes printf "%s\n"
        if os.geteuid() == 0:
            shutil.chown(password_file, "postgres")
        self._run(
            "initdb", "-D", str(self.folder / "pgdata"), f"--username={user}",
            f"--pwfile={password_file}", "--auth=scram-sha-256", "-E", "UTF8",
            "--no-sync", "--no-instructions",
        )  # fmt: skip
        password_file.unlink()
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.folder}"
        self._run("pg_ctl", "-D", str(self.folder / "pgdata"), "-o", options,
                  "-l", str(self.folder / "log"), "-w", "start")  # fmt: skip

    def _run(self, *argv: str) -> None:
        assert self.bindir is not None
        command = [str(self.bindir / argv[0]), *argv[1:]]
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr or done.stdout

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.folder / "pgdata"), "-m", "fast", "-w", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


def _current_user(url: str) -> str:
    user: str = query(url, "SELECT current_user")[0][0]
    return user


async def _change_password(url: str, user: str, password: str) -> None:
    """What docs/deploy.md tells the operator: ALTER ROLE on the running database."""
    conn = await asyncpg.connect(url)
    try:
        alter = "SELECT format('ALTER ROLE %I PASSWORD %L', $1::text, $2::text)"
        statement = await conn.fetchval(alter, user, password)
        await conn.execute(statement)
    finally:
        await conn.close()


def test_compose_database_password_opens_postgres_initialised_from_the_file(
    tmp_path: Path,
) -> None:
    """The volume's POSTGRES_PASSWORD initialises the database; the DATABASE_URL with-secrets makes
    for the forge services signs in with it (and a wrong password does not: authentication is
    real). Changing it as docs/deploy.md says, to a password that is not URL-safe: ALTER ROLE,
    then POSTGRES_PASSWORD given to `docker compose up`, and the services sign in again."""
    secrets_dir = tmp_path / "secrets"
    secrets_dir.mkdir()
    assert _with_secrets(secrets_dir, _environment("secrets"), ["true"]).returncode == 0
    names = _environment("postgres")
    database = _PasswordPostgres(
        names["POSTGRES_USER"], (secrets_dir / "POSTGRES_PASSWORD").read_text()
    )
    try:
        here = _environment("releases") | {
            "POSTGRES_HOST": f"127.0.0.1:{database.port}",
            "POSTGRES_DB": "postgres",  # the image would create POSTGRES_DB; initdb alone does not
        }
        url = _seen(secrets_dir, here)["DATABASE_URL"]
        assert _current_user(url) == "forge"
        wrong = url.replace((secrets_dir / "POSTGRES_PASSWORD").read_text(), "0" * 64)
        with pytest.raises(asyncpg.InvalidPasswordError):
            _current_user(wrong)

        changed = "n3w p@ss:w/rd%é"
        run_sync(_change_password(url, "forge", changed))
        given = _environment("secrets") | {"POSTGRES_PASSWORD": changed}
        assert _with_secrets(secrets_dir, given, ["true"]).returncode == 0
        url = _seen(secrets_dir, here)["DATABASE_URL"]
        assert _current_user(url) == "forge"
    finally:
        database.stop()


def test_compose_bucket_job_signs_in_with_the_volume_password(tmp_path: Path) -> None:
    """minio-bucket's shell line, run with an `mc` that records its arguments: the alias gets
    MinIO's root user and the password of the volume, the file MinIO itself reads."""
    secrets_dir = tmp_path / "secrets"
    secrets_dir.mkdir()
    assert _with_secrets(secrets_dir, _environment("secrets"), ["true"]).returncode == 0
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "calls"
    mc = bin_dir / "mc"
    mc.write_text('#!/bin/sh\nprintf "%s\\n" "$*" >> "$MC_CALLS"\n')
    mc.chmod(0o755)
    job = SERVICES["minio-bucket"]
    assert job["entrypoint"] == ["sh", "-c"]
    command = _with_no_environment(job["command"][0]).replace(SECRETS_MOUNT, str(secrets_dir))
    env = _environment("minio-bucket") | {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "MC_CALLS": str(calls),
    }
    done = subprocess.run(["sh", "-c", command], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    password = (secrets_dir / "MINIO_ROOT_PASSWORD").read_text()
    user = _environment("minio")["MINIO_ROOT_USER"]
    assert calls.read_text().splitlines() == [
        f"alias set forge http://minio:9000 {user} {password}",
        "mb --ignore-existing forge/forge-assets",
    ]
    assert Path(_environment("minio")["MINIO_ROOT_PASSWORD_FILE"]).name == "MINIO_ROOT_PASSWORD"


# --- the whole start: migrate, then the releases service, with nothing set ---


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
        assert service["environment"]["DATABASE_URL"] == ""
        assert "POSTGRES_PASSWORD" not in service["environment"]
        assert "secrets:/var/lib/forge/secrets" in " ".join(
            f"{v['source']}:{v['target']}" if isinstance(v, dict) else v for v in service["volumes"]
        )
        assert service["entrypoint"][0] == "with-secrets"
    assert services["releases"]["environment"]["AWS_SECRET_ACCESS_KEY"] == ""
    secrets_dir = tmp_path / "secrets"
    secrets_dir.mkdir()
    storage = tmp_path / "storage"

    # the one-shot migrate service, as compose runs it (first start: makes the secrets)
    migrate = services["migrate"]
    command = migrate["command"][0].replace("/app/demo/world.json", str(ROOT / "demo/world.json"))
    env = _local_env(migrate, database_url, storage)
    done = _with_secrets(secrets_dir, env, [*migrate["entrypoint"][1:], command])
    assert done.returncode == 0, done.stderr
    made = _volume(secrets_dir)
    assert sorted(made) == sorted(SECRET_NAMES)

    releases = services["releases"]
    env = _local_env(releases, database_url, storage)
    port = free_port()
    argv = [*releases["entrypoint"][1:], *releases["command"]]
    argv[argv.index("--port") + 1] = str(port)
    argv[argv.index("serve") + 1 : argv.index("serve") + 1] = ["--host", "127.0.0.1"]
    log = tmp_path / "releases.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            ["sh", str(WITH_SECRETS), *argv],
            env={**env, "FORGE_SECRETS_DIR": str(secrets_dir)},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        ready = f"http://127.0.0.1:{port}/readyz"
        run_sync(wait_until_ready(ready, exit_code=process.poll, within=120))
    except NotReady:
        pytest.fail(log.read_text(errors="replace"))
    finally:
        stop_process(process)

    # what each process sees: the volume's values, kept across restarts; the environment wins
    for name in ("releases", "orgs", "gateway"):
        seen = _seen(secrets_dir, _local_env(services[name], "", storage))
        assert seen["EVENTS_SECRET"] == made["EVENTS_SECRET"]
    given = _local_env(releases, database_url, storage) | {"EVENTS_SECRET": "from-the-env"}
    assert _seen(secrets_dir, given)["EVENTS_SECRET"] == "from-the-env"
    assert _volume(secrets_dir) == made
