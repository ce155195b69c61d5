"""A PostgreSQL cluster of our own, for `make run` and the test suite when DATABASE_URL is unset.

It uses the machine's PostgreSQL binaries (run as the `postgres` user when we are root, because
initdb refuses root), or the `pgserver` wheel where the machine has none.

Several processes may use one folder's cluster at once (two `make run` in one checkout, `forge
admin` beside `forge dev`): each holds an flock on its own file under `owners/` for as long as it
uses the server, and the kernel drops that lock when the process ends, however it ends. A server
with a live owner is shared, never stopped; the last owner out stops it; a server with no live
owner is a leftover of a killed run and is restarted (docs/architecture.md "Two make run in one
checkout").
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import logging
import os
import shutil
import socket
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO

log = logging.getLogger(__name__)


class EmbeddedPostgresError(RuntimeError):
    pass


def find_bindir() -> Path | None:
    """Directory of initdb/pg_ctl/postgres: pg_config's answer, else the newest Debian install."""
    pg_config = shutil.which("pg_config")
    if pg_config:
        out = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, check=False)
        bindir = Path(out.stdout.strip())
        if (bindir / "initdb").exists():
            return bindir
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)
    return Path(candidates[0]).parent if candidates else None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class EmbeddedPostgres:
    """`start()` creates the cluster when it does not exist yet and returns a DATABASE_URL.

    `durable` (the default, for `forge dev` and `make run`) keeps PostgreSQL's crash safety:
    fsync and full-page writes on, so a crash or power cut keeps the data. The test suite's
    throwaway clusters pass `durable=False` (fsync, synchronous commit and full-page writes off)
    for speed."""

    def __init__(
        self,
        data_dir: Path,
        *,
        port: int | None = None,
        database: str = "forge",
        durable: bool = True,
    ) -> None:
        self.data_dir = data_dir.resolve()
        self.durable = durable
        self.port = port or free_port()
        self.database = database
        self._pgserver: object | None = None
        self._bindir = find_bindir()
        self._owner: IO[bytes] | None = None  # our flock-held file under owners/

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{self.database}"

    def _run(self, *args: str) -> None:
        assert self._bindir is not None
        command = [str(self._bindir / args[0]), *args[1:]]
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise EmbeddedPostgresError(
                f"{args[0]} failed: {result.stderr.strip() or result.stdout.strip()}"
            )

    def start(self) -> str:
        """Start the cluster, or share it when another live process already runs it."""
        if self._bindir is None:
            return self._start_pgserver()
        pgdata = self.data_dir / "pgdata"
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            # the postgres user must be able to reach its folder through ours
            for parent in [self.data_dir, *self.data_dir.parents]:
                mode = parent.stat().st_mode
                if not mode & 0o001:
                    parent.chmod(mode | 0o011)
            shutil.chown(self.data_dir, "postgres")
        with self._deciding():
            if not (pgdata / "PG_VERSION").exists():
                self._initdb(pgdata)
            running_port = self._running_port(pgdata)
            if running_port is not None and self._live_owners():
                self.port = running_port
                log.info("sharing the PostgreSQL server another process runs in %s", pgdata)
            else:
                if running_port is not None:
                    log.warning("stopping a PostgreSQL server left running in %s", pgdata)
                    self._run("pg_ctl", "-D", str(pgdata), "-m", "fast", "-w", "stop")
                self._pg_ctl_start(pgdata)
            self._own()
            self._ensure_database()
        log.info("embedded PostgreSQL at %s", self.url)
        return self.url

    def _initdb(self, pgdata: Path) -> None:
        self._run(
            "initdb",
            "-D",
            str(pgdata),
            "-U",
            "postgres",
            "-A",
            "trust",
            "-E",
            "UTF8",
            *([] if self.durable else ["--no-sync"]),
            "--no-instructions",
        )

    def _pg_ctl_start(self, pgdata: Path) -> None:
        options = (
            f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.data_dir} "
            "-c max_connections=300 "
            + (
                "-c fsync=on -c synchronous_commit=on -c full_page_writes=on"
                if self.durable
                else "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
            )
        )
        self._run(
            "pg_ctl",
            "-D",
            str(pgdata),
            "-o",
            options,
            "-l",
            str(self.data_dir / "postgres.log"),
            "-w",
            "-t",
            "60",
            "start",
        )

    @contextlib.contextmanager
    def _deciding(self) -> Iterator[None]:
        """One process at a time decides whether to start, share or stop the server."""
        with (self.data_dir / "owners.lock").open("ab") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _own(self) -> None:
        if self._owner is not None:
            return
        owners = self.data_dir / "owners"
        owners.mkdir(exist_ok=True)
        owner = (owners / f"{os.getpid()}-{uuid.uuid4().hex}").open("wb")
        fcntl.flock(owner, fcntl.LOCK_EX | fcntl.LOCK_NB)
        self._owner = owner

    def _disown(self) -> None:
        if self._owner is None:
            return
        with contextlib.suppress(OSError):
            Path(self._owner.name).unlink()
        self._owner.close()  # closing drops the flock
        self._owner = None

    def _live_owners(self) -> int:
        """How many other processes use the server now; files of ended ones are removed."""
        live = 0
        owners = self.data_dir / "owners"
        for path in sorted(owners.iterdir()) if owners.is_dir() else []:
            if self._owner is not None and path == Path(self._owner.name):
                continue
            try:
                with path.open("rb") as probe:
                    fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    path.unlink()  # its owner ended without removing it: it was killed
            except BlockingIOError:
                live += 1  # the owner still holds it: a live process
            except FileNotFoundError:
                continue
        return live

    def running_port(self) -> int | None:
        """The port of a server running on this folder's cluster now, or None."""
        if self._bindir is None:
            return None
        return self._running_port(self.data_dir / "pgdata")

    def _running_port(self, pgdata: Path) -> int | None:
        """The port of a server running on these files, from its postmaster.pid, or None."""
        pid_file = pgdata / "postmaster.pid"
        if not pid_file.exists():
            return None
        try:
            self._run("pg_ctl", "-D", str(pgdata), "status")
            return int(pid_file.read_text().splitlines()[3])
        except EmbeddedPostgresError:
            return None  # a stale pid file only: pg_ctl start copes with it
        except (OSError, IndexError, ValueError) as exc:
            raise EmbeddedPostgresError(f"cannot read {pid_file}: {exc}") from None

    def _ensure_database(self) -> None:
        found = self._psql("-tAc", f"SELECT 1 FROM pg_database WHERE datname = '{self.database}'")
        if found.stdout.strip() != "1":
            self._psql("-c", f'CREATE DATABASE "{self.database}"', check=True)

    def _psql(self, *args: str, check: bool = False) -> subprocess.CompletedProcess[str]:
        """psql as the superuser against this server."""
        assert self._bindir is not None
        psql = shutil.which("psql") or str(self._bindir / "psql")
        argv = [psql, "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", *args]
        return subprocess.run(argv, capture_output=True, text=True, check=check)

    def _start_pgserver(self) -> str:
        try:
            import pgserver  # type: ignore[import-not-found,unused-ignore]
        except ImportError:
            raise EmbeddedPostgresError(
                "no PostgreSQL binaries found and the pgserver wheel is not installed; "
                "install PostgreSQL or `pip install pgserver`, or set DATABASE_URL"
            ) from None
        server = pgserver.get_server(str(self.data_dir / "pgserver"), cleanup_mode="stop")
        self._pgserver = server
        exists = server.psql(f"SELECT 'found' FROM pg_database WHERE datname = '{self.database}'")
        if "found" not in exists:
            server.psql(f'CREATE DATABASE "{self.database}"')
        uri: str = server.get_uri(self.database)
        return uri

    def stop(self) -> None:
        """Stop using the server; stop the server itself only when no other live process uses
        it (a second `make run` stopping leaves the first one's database running)."""
        if self._pgserver is not None:
            with contextlib.suppress(Exception):
                self._pgserver.cleanup()  # type: ignore[attr-defined]
            return
        if self._bindir is None or self._owner is None:
            return
        pgdata = self.data_dir / "pgdata"
        with self._deciding():
            self._disown()
            if self._live_owners():
                log.info("PostgreSQL in %s left running for the processes still using it", pgdata)
                return
            if not (pgdata / "postmaster.pid").exists():
                return
            with contextlib.suppress(EmbeddedPostgresError):
                self._run("pg_ctl", "-D", str(pgdata), "-m", "fast", "-w", "stop")
