"""nginx from deploy/nginx as a plain process on 127.0.0.1, for tests and benchmarks that put the
real proxy in front of a service they started themselves (the end-to-end stack has its own in
tests-e2e/conftest.py, which loads the renderer from here too)."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import ModuleType

from .ports import free_port
from .processes import stop_process

# services/testing/src/forge_testing/nginx.py -> the repository
ROOT = Path(__file__).resolve().parents[4]


def find_nginx() -> str | None:
    return shutil.which("nginx") or next(
        (p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if os.access(p, os.X_OK)), None
    )


def load_renderer() -> ModuleType:
    """deploy/nginx/render.py, which is a script, not a package."""
    spec = importlib.util.spec_from_file_location(
        "forge_nginx_render", ROOT / "deploy/nginx/render.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class NginxFailed(RuntimeError):
    """nginx did not start (its error log is the message)."""


@contextlib.contextmanager
def running_nginx(
    nginx: str, values: Mapping[str, str], extra_conf: str = "", within: float = 10.0
) -> Iterator[int]:
    """nginx with the deploy template rendered from `values` (NGINX_LISTEN is chosen here: a free
    127.0.0.1 port), `extra_conf` appended to it; yields the port once nginx answers."""
    port = free_port()
    # nginx runs its workers as `nobody` when started as root: the prefix must be traversable
    prefix = Path(tempfile.mkdtemp(prefix="forge-nginx-"))
    prefix.chmod(0o755)
    load_renderer().write_prefix(prefix, {**values, "NGINX_LISTEN": f"127.0.0.1:{port}"})
    if extra_conf:
        with (prefix / "forge.conf").open("a") as conf:
            conf.write(extra_conf)
    argv = [nginx, "-p", f"{prefix}/", "-e", "logs/error.log", "-c", "nginx.conf"]
    process = subprocess.Popen([*argv, "-g", "daemon off;"])
    try:
        deadline = time.monotonic() + within
        while True:
            try:
                # a path nginx answers itself (never routed): `/` goes to the releases service,
                # which in a test may run on the very event loop this probe blocks
                urllib.request.urlopen(f"http://127.0.0.1:{port}/internal/", timeout=1).close()
                break
            except urllib.error.HTTPError:
                break  # it answers (404)
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    log = prefix / "logs/error.log"
                    raise NginxFailed(log.read_text() if log.exists() else "no log") from None
                time.sleep(0.02)
        yield port
    finally:
        stop_process(process)
        shutil.rmtree(prefix, ignore_errors=True)
