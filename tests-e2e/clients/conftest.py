"""What the real-client tests of this folder share: Node.js with the npm packages of this folder's
lock file (`make clients-tools` runs npm ci; here once when missing, so a module also runs on its
own), and running one of the folder's scripts."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

CLIENTS = Path(__file__).resolve().parent
RUN_TIMEOUT = 60

RunNode = Callable[..., Any]


@pytest.fixture(scope="session")
def run_node() -> RunNode:
    """`run_node(script, *args)`: runs `tests-e2e/clients/{script}` in Node and returns the JSON
    of its last line of output; the test fails with the script's stderr when it exits non-zero."""
    node = shutil.which("node")
    if node is None or shutil.which("npm") is None:
        pytest.skip("Node.js is not installed")
    if not (CLIENTS / "node_modules" / ".package-lock.json").is_file():
        subprocess.run(
            ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=CLIENTS,
            check=True,
            timeout=300,
        )

    def run(script: str, *args: str) -> Any:
        done = subprocess.run(
            [node, str(CLIENTS / script), *args],
            cwd=CLIENTS,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.strip().splitlines()[-1])

    return run
