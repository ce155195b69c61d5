"""A PostgreSQL cluster of our own, for `make run` and the test suite when DATABASE_URL is unset.

It uses the machine's PostgreSQL binaries (run as the `postgres` user when we are root, because
initdb refuses root), or the `pgserver` wheel where the machine has none.
"""

from __future__ import annotations

import contextlib
import glob
import logging
import os
import shutil
import socket
import subprocess
from pathlib import Path

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
        if not (pgdata / "PG_VERSION").exists():
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
        self._stop_leftover(pgdata)
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
        self._ensure_database()
        log.info("embedded PostgreSQL at %s", self.url)
        return self.url

    def running_url(self) -> str | None:
        """The URL of a server already running on this cluster (a `forge dev` in the same folder,
        on a port we learn from its postmaster.pid), or None. `forge admin` works through it
        rather than starting a second server on the same files."""
        pid_file = self.data_dir / "pgdata" / "postmaster.pid"
        if self._bindir is None or not pid_file.exists():
            return None
        try:
            self._run("pg_ctl", "-D", str(self.data_dir / "pgdata"), "status")
            lines = pid_file.read_text().splitlines()
            port = int(lines[3])
        except (EmbeddedPostgresError, OSError, IndexError, ValueError):
            return None
        return f"postgresql://postgres@127.0.0.1:{port}/{self.database}"

    def _stop_leftover(self, pgdata: Path) -> None:
        """A server of an earlier run that was killed before it could stop its cluster is still
        running in our folder (on a port we no longer know): stop it, then start afresh."""
        if not (pgdata / "postmaster.pid").exists():
            return
        try:
            self._run("pg_ctl", "-D", str(pgdata), "status")
        except EmbeddedPostgresError:
            return  # a stale pid file only: pg_ctl start copes with it
        log.warning("stopping a PostgreSQL server left running in %s", pgdata)
        self._run("pg_ctl", "-D", str(pgdata), "-m", "fast", "-w", "stop")

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
        if self._pgserver is not None:
            with contextlib.suppress(Exception):
                self._pgserver.cleanup()  # type: ignore[attr-defined]
            return
        if self._bindir is None or not (self.data_dir / "pgdata" / "postmaster.pid").exists():
            return
        with contextlib.suppress(EmbeddedPostgresError):
            self._run("pg_ctl", "-D", str(self.data_dir / "pgdata"), "-m", "fast", "-w", "stop")
