"""Generated avatars (docs/pages.md "Avatars"): an SVG derived from the name alone, so it costs no
query and says nothing about whether an account exists or who may see it.

Names with a letter get their initials; names of digits only an identicon (a symmetric 5 x 5
pattern), both on a colour from the name's hash, dark enough for white to read on it.
"""

from __future__ import annotations

import hashlib
import re
from xml.sax.saxutils import escape

SIZE = 128
_WORDS = re.compile(r"[A-Za-z0-9]+")


def _initials(name: str) -> str:
    words: list[str] = _WORDS.findall(name)
    if len(words) >= 2:
        return (words[0][0] + words[1][0]).upper()
    return name[:2].upper() if len(name) > 1 and name[1].isalnum() else name[:1].upper()


def _identicon(digest: bytes) -> str:
    cell = SIZE // 8
    offset = (SIZE - 5 * cell) // 2
    rects = []
    for row in range(5):
        for column in range(3):
            if digest[4 + row * 3 + column] & 1:
                for x in {column, 4 - column}:
                    rects.append(
                        f'<rect x="{offset + x * cell}" y="{offset + row * cell}" '
                        f'width="{cell}" height="{cell}" fill="#fff"/>'
                    )
    return "".join(rects)


def avatar_svg(name: str) -> bytes:
    digest = hashlib.sha256(name.lower().encode()).digest()
    hue = int.from_bytes(digest[:2], "big") % 360
    # 30 % lightness: white on it has a contrast ratio above 4.5 for every hue
    background = f'<rect width="{SIZE}" height="{SIZE}" fill="hsl({hue},55%,30%)"/>'
    if any(c.isalpha() for c in name):
        mark = (
            f'<text x="50%" y="50%" dy=".35em" text-anchor="middle" fill="#fff" '
            f'font-family="system-ui,sans-serif" font-size="{SIZE * 7 // 16}" '
            f'font-weight="600">{escape(_initials(name))}</text>'
        )
    else:
        mark = _identicon(digest)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{SIZE}" height="{SIZE}" '
        f'viewBox="0 0 {SIZE} {SIZE}">{background}{mark}</svg>'
    ).encode()
