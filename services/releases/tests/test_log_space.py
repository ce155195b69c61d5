"""The reader beside nginx frees what it has counted (insights/log_space.py): whatever the
rounds, the log takes no more than the block its last counted line ends in."""

from __future__ import annotations

import os
from pathlib import Path

from forge_releases.insights.log_space import LogSpace

LINE = b"x" * 99 + b"\n"  # 100 bytes: a round's end falls inside a block


def test_rounds_of_counted_lines_leave_no_block_behind(tmp_path: Path) -> None:
    log = tmp_path / "hits.log"
    space = LogSpace(log, limit=10**9)
    with log.open("ab") as nginx:
        for _ in range(40):  # forty rounds of 37 lines, each counted and freed
            nginx.write(LINE * 37)
            nginx.flush()
            stat = os.stat(log)
            space.counted(stat.st_ino, stat.st_size)
    stat = os.stat(log)
    assert stat.st_size == 40 * 37 * 100  # offsets keep their meaning
    assert stat.st_blocks * 512 <= 4096, f"{stat.st_blocks} blocks still taken"


def test_lines_not_yet_counted_keep_their_bytes(tmp_path: Path) -> None:
    log = tmp_path / "hits.log"
    space = LogSpace(log, limit=10**9)
    log.write_bytes(LINE * 100)
    space.counted(os.stat(log).st_ino, 50 * 100)
    with log.open("ab") as nginx:
        nginx.write(LINE * 10)
    space.counted(os.stat(log).st_ino, 75 * 100)
    data = log.read_bytes()
    assert data[75 * 100 :] == LINE * 35  # what is not counted yet is untouched
    assert data[:4096] == b"\0" * 4096  # counted at the start: a hole
