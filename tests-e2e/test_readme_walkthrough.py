"""The README's "Set up your own app", as printed: an empty `make run WORLD=` instance, then every
command of the section in one shell, from the first admin to a first update check; and the
README's demo commands (`curl -su bob:bob-demo-password ...`) on the demo instance of `make run`.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from forge_common.embedded_pg import find_bindir, free_port
from forge_testing.plugin import run_sync
from forge_testing.processes import NotReady, wait_until_ready

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
FORGE = str(Path(sys.executable).parent / "forge")
PASSWORD = "ada-walkthrough-password"

pytestmark = pytest.mark.skipif(find_bindir() is None, reason="no PostgreSQL binaries here")


def section(heading: str) -> str:
    start = README.index(f"\n## {heading}\n")
    end = README.index("\n## ", start + 1)
    return README[start:end]


def shell_blocks(text: str) -> list[str]:
    """The ```sh blocks of `text`, as printed (list items' blocks are indented)."""
    found = re.findall(r"^( *)```sh\n(.*?)^ *```$", text, flags=re.MULTILINE | re.DOTALL)
    return [textwrap.dedent(body) for _, body in found]


def make_run_command(*args: str) -> list[str]:
    """What `make run ARGS` runs, as make prints it (`make -n`)."""
    printed = (
        subprocess.run(
            ["make", "-s", "-n", "-C", str(ROOT), "run", *args],
            capture_output=True,
            text=True,
            check=True,
        )
        .stdout.strip()
        .splitlines()[-1]
    )
    argv = printed.split()
    assert argv[0].endswith(".venv/bin/forge"), printed
    return [FORGE, *argv[1:]]


def _env() -> dict[str, str]:
    drop = ("DATABASE_URL", "STORAGE_PATH", "APP_URL", "FORGE_URL", "FORGE_TOKEN")
    return {**{k: v for k, v in os.environ.items() if k not in drop}, "LOG_LEVEL": "WARNING"}


@contextlib.contextmanager
def _instance(checkout: Path, argv: list[str]) -> Iterator[str]:
    """`make run ...` in `checkout` (its own `.data/`) on a free port; yields its address."""
    port = free_port()
    argv = [a if a != "8080" else str(port) for a in argv]
    log = (checkout / "forge-dev.log").open("ab")
    with log:
        process = subprocess.Popen(argv, cwd=checkout, env=_env(), stdout=log, stderr=log)
    try:
        ready = f"http://127.0.0.1:{port}/readyz"
        try:
            run_sync(wait_until_ready(ready, exit_code=process.poll, within=90))
        except NotReady:
            raise AssertionError((checkout / "forge-dev.log").read_text()) from None
        yield f"localhost:{port}"
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(60)


@pytest.fixture
def checkout() -> Iterator[Path]:
    """A folder where the README's relative paths (`.venv/bin/forge`, `dist/`) hold. Not under
    pytest's tmp_path: every pytest session on the machine takes the other users' access to that
    tree away again, and the embedded PostgreSQL runs as `postgres` when we are root."""
    folder = Path(tempfile.mkdtemp(prefix="forge-readme-"))
    (folder / ".venv").symlink_to(Path(sys.executable).parents[1])
    (folder / "demo").symlink_to(ROOT / "demo")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_set_up_your_own_app_as_printed(checkout: Path) -> None:
    blocks = shell_blocks(section("Set up your own app"))
    assert blocks[0].strip() == "make run WORLD="
    argv = make_run_command("WORLD=", "PORT=8080")
    assert "--empty" in argv
    # what the build machine has: the files step 5 publishes
    (checkout / "dist").mkdir()
    for name in ("App-1.0.0-arm64.zip", "App-Setup-1.0.0-x64.exe"):
        (checkout / "dist" / name).write_bytes(os.urandom(4096))
    (checkout / "dist/RELEASES").write_text("0123456789ABCDEF App-1.0.0-full.nupkg 4096\n")
    (checkout / "CHANGES.md").write_text("First release.\n")
    with _instance(checkout, argv) as address:
        script = "\n".join(blocks[1:]).replace("localhost:8080", address)
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script],
            cwd=checkout,
            env=_env(),
            input=PASSWORD + "\n",  # what `read -rs PW` reads from the terminal
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        offered = json.loads(done.stdout.strip().splitlines()[-1])  # step 6's update check
        assert offered["name"] == "v1.0.0"
        assert offered["url"].endswith("/acme/app/releases/download/v1.0.0/App-1.0.0-arm64.zip")


def test_the_demo_commands_work_on_make_run(checkout: Path) -> None:
    try_block = shell_blocks(README[: README.index("\n## ")])[1]  # "After `make run`, try:"
    token_block = next(b for b in shell_blocks(README) if "bob:bob-demo-password" in b)
    with _instance(checkout, make_run_command("PORT=8080")) as address:
        for command in [*try_block.strip().splitlines(), token_block]:
            done = subprocess.run(
                [
                    "bash",
                    "-c",
                    command.strip().replace("localhost:8080", address) + " --fail-with-body",
                ],
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert done.returncode == 0, (command, done.stdout, done.stderr)
        assert json.loads(done.stdout)["scopes"] == ["write:release"]
