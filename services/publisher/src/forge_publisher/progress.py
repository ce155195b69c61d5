"""A one-line upload progress bar for `forge release publish`, drawn only on a terminal.

When stderr is not a terminal (CI logs, pipes) nothing is drawn, so logs hold no carriage-return
noise; the command prints one plain line per file on stdout instead.
"""

from __future__ import annotations

import time
from typing import TextIO

from forge_common.units import human_size

WIDTH = 24
REDRAW_SECONDS = 0.1


class Progress:
    def __init__(self, label: str, total: int, stream: TextIO) -> None:
        self.label = label
        self.total = total
        self.done = 0
        self.stream = stream
        self.enabled = stream.isatty()
        self._started = time.monotonic()
        self._drawn = 0.0

    def update(self, count: int) -> None:
        self.done += count
        now = time.monotonic()
        if self.enabled and (now - self._drawn >= REDRAW_SECONDS or self.done >= self.total):
            self._drawn = now
            self._draw(now)

    def _draw(self, now: float) -> None:
        fraction = self.done / self.total if self.total else 1.0
        filled = int(WIDTH * fraction)
        rate = self.done / max(now - self._started, 1e-6)
        line = (
            f"\r{self.label} [{'#' * filled}{'.' * (WIDTH - filled)}] {fraction:4.0%} "
            f"{human_size(self.done)}/{human_size(self.total)} {human_size(rate)}/s"
        )
        self.stream.write(line)
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self._draw(time.monotonic())
            self.stream.write("\n")
            self.stream.flush()
