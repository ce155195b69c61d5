"""The repository's own commands work as the README prints them: every make target is in
`make help`, `make run` installs only what running needs, a data-only reset is separate from a
full clean, and the README's shell lines name commands that exist (`.venv/bin/forge`, and the
tools they need)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def make(*args: str) -> str:
    done = subprocess.run(
        ["make", "--no-print-directory", *args], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def phony_targets() -> set[str]:
    names: set[str] = set()
    for path in [ROOT / "Makefile", *sorted((ROOT / "mk").glob("*.mk"))]:
        for line in path.read_text().splitlines():
            if line.startswith(".PHONY:"):
                names.update(line.removeprefix(".PHONY:").split())
    return names


def test_every_target_is_in_make_help() -> None:
    listed = {line.split()[0] for line in re.sub(r"\x1b\[[0-9;]*m", "", make("help")).splitlines()}
    assert {"bench-upload-s3", "proto-lint", "proto-breaking", "proto-stale"} <= listed
    assert phony_targets() - listed == set()


def test_make_run_installs_only_what_running_needs() -> None:
    """`make -n -B run`: every recipe `make run` would run on a fresh clone."""
    run = make("-n", "-B", "run")
    assert "pip install" in run and "forge dev --world demo/world.json" in run
    assert "requirements-dev.txt" not in run
    assert "requirements-dev.txt" in make("-n", "-B", "install")
    assert "make run PORT=" in README


def test_reset_removes_only_the_data_and_clean_everything() -> None:
    reset = make("-n", "reset")
    assert "rm -rf .data" in reset and ".venv" not in reset
    clean = make("-n", "clean")
    assert "rm -rf .data" in clean and "rm -rf .venv" in clean
    assert "`make reset`" in README


def test_readme_shell_lines_run_commands_that_exist() -> None:
    blocks = re.findall(r"```sh\n(.*?)```", README, re.DOTALL)
    lines = [line.strip() for block in blocks for line in block.splitlines()]
    for line in lines:
        # `forge` alone is not on the PATH after `make run`: .venv/bin/forge is
        assert not re.match(r"(\S+=\S+ )*forge ", line), line
    if any("| jq" in line for line in lines):
        assert "apt-get install jq" in README
