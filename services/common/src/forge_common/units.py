"""The one way sizes are written, on pages, in the console and by the CLI: binary units (B, KiB,
MiB, GiB, TiB), as the README and docs state limits (`MAX_UPLOAD_BYTES` 4 GiB), so a file said to be
21.3 MiB in the console is 21.3 MiB on the download page and in `forge release publish`."""

from __future__ import annotations

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def human_size(size: float) -> str:
    """`size` bytes in binary units: whole bytes below 1 KiB, else one decimal ("21.3 MiB")."""
    for unit in _UNITS:
        if abs(size) < 1024 or unit == _UNITS[-1]:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable: the last unit always returns")  # pragma: no cover
