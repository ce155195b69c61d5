"""The upload progress bar of `forge release publish`: drawn on a terminal, silent otherwise."""

from __future__ import annotations

import io

from forge_common.units import human_size
from forge_publisher.progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_draws_on_a_terminal() -> None:
    out = Terminal()
    bar = Progress("App.zip", 4 * 1024 * 1024, out)
    for _ in range(4):
        bar.update(1024 * 1024)
    bar.close()
    text = out.getvalue()
    assert text.startswith("\rApp.zip [") and text.endswith("\n")
    assert "100%" in text and "4.0 MiB/4.0 MiB" in text


def test_progress_bar_is_silent_when_not_a_terminal() -> None:
    out = io.StringIO()
    bar = Progress("App.zip", 10, out)
    bar.update(10)
    bar.close()
    assert out.getvalue() == ""


def test_human_sizes() -> None:
    assert [human_size(n) for n in (5, 2048, 3 * 1024**2, 5 * 1024**3)] == [
        "5 B",
        "2.0 KiB",
        "3.0 MiB",
        "5.0 GiB",
    ]
