"""Small validators for the world file: each appends `path: problem` and returns a usable value.

They never raise, so one pass reports every problem in the file instead of the first one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from . import names

NAME = names.ACCOUNT_NAME
REPO_NAME = names.REPO_NAME


def entries(
    data: Mapping[str, Any], key: str, path: str, errors: list[str]
) -> list[dict[str, Any]]:
    """The list under `key` (absent → empty); each element must be an object."""
    value = data.get(key)
    if value is None:
        return []
    where = f"{path}.{key}" if path else key
    if not isinstance(value, list):
        errors.append(f"{where}: must be a list")
        return []
    good = []
    for index, item in enumerate(value):
        if isinstance(item, dict):
            good.append(item)
        else:
            errors.append(f"{where}[{index}]: must be an object")
            good.append({})
    return good


def objects(data: Mapping[str, Any], key: str) -> list[tuple[str, dict[str, Any]]]:
    """(path, object) of each object listed under `key`, skipping anything else in silence: for
    reading a section that `entries` already checks (and reports) elsewhere."""
    value = data.get(key)
    if not isinstance(value, list):
        return []
    return [(f"{key}[{index}]", item) for index, item in enumerate(value) if isinstance(item, dict)]


def text(
    entry: Mapping[str, Any],
    key: str,
    path: str,
    errors: list[str],
    *,
    required: bool = False,
    pattern: re.Pattern[str] | None = None,
    choices: frozenset[str] | None = None,
    default: str = "",
) -> str:
    value = entry.get(key)
    if value is None:
        if required:
            errors.append(f"{path}.{key}: missing")
        return default
    if not isinstance(value, str):
        errors.append(f"{path}.{key}: must be a string")
        return default
    if required and not value.strip():
        errors.append(f"{path}.{key}: must not be empty")
    elif pattern is not None and not pattern.match(value):
        errors.append(f"{path}.{key}: {value!r} is not a valid name")
    elif choices is not None and value not in choices:
        errors.append(f"{path}.{key}: must be one of {', '.join(sorted(choices))}")
    return value


def display_name(
    entry: Mapping[str, Any],
    key: str,
    path: str,
    errors: list[str],
    *,
    required: bool = False,
    max_length: int = 255,
) -> str:
    """`text`, held to the rule of every display name we store (names.display_name_problem)."""
    value = text(entry, key, path, errors, required=required)
    if value and (problem := names.display_name_problem(value, max_length=max_length)):
        errors.append(f"{path}.{key}: {problem}")
    return value


def flag(entry: Mapping[str, Any], key: str, path: str, errors: list[str]) -> bool:
    value = entry.get(key, False)
    if not isinstance(value, bool):
        errors.append(f"{path}.{key}: must be true or false")
        return False
    return value


def number(
    entry: Mapping[str, Any],
    key: str,
    path: str,
    errors: list[str],
    *,
    low: int = -(2**31),
    high: int = 2**31 - 1,
    default: int = 0,
) -> int:
    value = entry.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        errors.append(f"{path}.{key}: must be an integer")
        return default
    if not low <= value <= high:
        errors.append(f"{path}.{key}: must be between {low} and {high}")
        return default
    return value


def strings(entry: Mapping[str, Any], key: str, path: str, errors: list[str]) -> list[str]:
    value = entry.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        errors.append(f"{path}.{key}: must be a list of strings")
        return []
    return value


def unique(names: list[tuple[str, str]], errors: list[str], what: str) -> None:
    """`names` holds (path, name); report each name seen twice (case-insensitively)."""
    seen: dict[str, str] = {}
    for path, name in names:
        key = name.lower()
        if key in seen:
            errors.append(f"{path}: duplicate {what} {name!r} (also at {seen[key]})")
        else:
            seen[key] = path
