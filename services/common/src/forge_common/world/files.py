"""Reading a world file, JSON or (by its suffix) YAML, and the error that names its problems."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
import yaml


class WorldError(ValueError):
    """The world file cannot be loaded; `problems` names every bad entry."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = list(problems)


def read_world_file(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise WorldError([f"{path}: cannot read ({exc.strerror})"]) from None
    try:
        data = yaml.safe_load(raw) if path.suffix in {".yaml", ".yml"} else orjson.loads(raw)
    except (orjson.JSONDecodeError, yaml.YAMLError) as exc:
        raise WorldError(
            [f"{path}: not valid {path.suffix.lstrip('.') or 'JSON'}: {exc}"]
        ) from None
    if not isinstance(data, dict):
        raise WorldError([f"{path}: the world must be an object"])
    return data
