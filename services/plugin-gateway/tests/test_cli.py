"""`forge plugins check`: the operator's offline check of a PLUGINS_FILE."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from forge_common.cli import main


@pytest.fixture(autouse=True)
def keep_logging() -> Iterator[None]:
    """`main` configures the root logger for the process (on a stream pytest closes after the
    test); put it back so later tests do not log into a closed stream."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def test_check_lists_the_plugins_of_a_good_file(tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "plugins.json"
    path.write_text(
        json.dumps(
            {
                "plugins": [
                    {"name": "a", "address": "127.0.0.1:1", "health_repositories": ["acme/*"]},
                    {"name": "b", "address": "unix:/run/b.sock", "enabled": False},
                ]
            }
        )
    )
    assert main(["plugins", "check", str(path)], env={}) == 0
    out = capsys.readouterr().out
    assert "2 plugin(s)" in out and "b at unix:/run/b.sock (disabled)" in out
    assert "a at 127.0.0.1:1 (release health of acme/*)" in out


def test_check_reports_every_problem_and_fails(tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "plugins.yaml"
    path.write_text("plugins:\n  - name: x\n  - name: y\n    address: nowhere\n")
    assert main(["plugins", "check"], env={"PLUGINS_FILE": str(path)}) == 1
    err = capsys.readouterr().err
    assert "plugins[0] (x).address: missing" in err
    assert "plugins[1] (y).address: 'nowhere' is not host:port" in err
    assert main(["plugins", "check"], env={}) == 2
