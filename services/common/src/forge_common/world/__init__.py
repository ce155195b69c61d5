"""The world file (docs/cli-and-world.md): validated whole before anything is written, then
loaded in one transaction. Core loads accounts, organizations, teams, repositories and tokens;
each service validates and loads its own sections through its `Service` hooks.

One module of plain functions per section rather than typed models: every `Service` hook is
handed the raw mapping, and `checks` already returns usable values while it collects problems,
so models would mean parsing the file twice or changing the hooks.
"""

from __future__ import annotations

from .files import WorldError, read_world_file
from .loader import load_world, validate_core
from .names import Names
from .repos import declared_repos

__all__ = [
    "Names",
    "WorldError",
    "declared_repos",
    "load_world",
    "read_world_file",
    "validate_core",
]
