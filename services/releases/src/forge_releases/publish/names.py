"""Rules for tag and asset names, shared by the world loader and the publishing API."""

from __future__ import annotations

import unicodedata

# Unicode categories a file name must not hold: control (Cc: C0, DEL, C1), format (Cf: bidi
# overrides such as U+202E, zero-width characters, BOM) and surrogates (Cs: text that was never
# valid UTF-8). They make a name display as something it is not ("\u202eexe.txt" shows as
# "txt.exe") or break headers and terminals.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs"})
# What a decoder puts where the bytes were not UTF-8 (`?name=%ff%fe`): not the name that was sent.
_REPLACEMENT = "\ufffd"


def tag_problem(tag: str) -> str | None:
    """Why `tag` cannot be a release tag, or None when it can."""
    if not tag or not tag.strip():
        return "must not be empty"
    if len(tag) > 255:
        return "must be at most 255 characters"
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in tag):
        return "must not contain whitespace or control characters"
    return None


def asset_name_problem(name: str) -> str | None:
    """Why `name` cannot be an asset file name, or None when it can."""
    if not name or not name.strip():
        return "must not be empty"
    if len(name) > 255:
        return "must be at most 255 characters"
    if "/" in name or "\\" in name or "\x00" in name or ".." in name:
        return "must not contain '/', '\\', '..' or NUL"
    if _REPLACEMENT in name:
        return "must be valid UTF-8"
    if any(unicodedata.category(c) in _HIDDEN_CATEGORIES for c in name):
        return "must not contain control, format or surrogate characters"
    return None
