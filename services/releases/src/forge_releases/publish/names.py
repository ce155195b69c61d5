"""Rules for tag and asset names, shared by the world loader and the publishing API."""

from __future__ import annotations

from forge_common.names import hidden_character_problem


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
    # the rule of every display name (forge_common.names)
    return hidden_character_problem(name)
