"""Warnings of `forge release publish` about what updaters will make of a release (publishing
still goes ahead):

- a tag that is not a semantic version: the update check and every feed skip it, so no updater
  is ever offered the release;
- an electron-builder yml among the files whose `url:`/`path:` names a file that is not published
  with it, or whose `sha512` is not that file's: electron-updater would get a 404, or refuse the
  download. Names are compared as the feed finds them (publish/loose_names.py): electron-builder
  writes `MyApp-Setup-1.2.0.exe` for the file `MyApp Setup 1.2.0.exe`.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import yaml
from forge_common.asset_match import parse_file_name
from forge_common.asset_names import loose_key
from forge_common.versions import tag_warning

CHUNK = 1024 * 1024


def tag_warnings(tag: str) -> list[str]:
    warning = tag_warning(tag)
    return [f"warning: {warning}"] if warning is not None else []


def _sha512_base64(path: Path) -> str:
    digest = hashlib.sha512()
    with path.open("rb") as file:
        while chunk := file.read(CHUNK):
            digest.update(chunk)
    return base64.b64encode(digest.digest()).decode()


def _named(info: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """(relative file name, its sha512 or None) of each file the yml hands out."""
    for entry in info.get("files") or []:
        if isinstance(entry, dict) and isinstance(entry.get("url"), str):
            yield entry["url"], entry.get("sha512")
    if isinstance(info.get("path"), str):
        yield info["path"], info.get("sha512")


def _find(name: str, files: Sequence[Path]) -> Path | None:
    exact = next((f for f in files if f.name == name), None)
    if exact is not None:
        return exact
    key = loose_key(name)
    return next((f for f in files if key and loose_key(f.name) == key), None)


def yml_warnings(files: Sequence[Path]) -> list[str]:
    lines: list[str] = []
    for yml in files:
        if parse_file_name(yml.name) is None:
            continue
        try:
            info = yaml.safe_load(yml.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            lines.append(
                f"warning: {yml.name} is not readable YAML ({exc}): electron-updater fails"
            )
            continue
        if not isinstance(info, dict):
            continue
        checked: set[str] = set()
        for name, sha512 in _named(info):
            if "://" in name or name in checked:
                continue  # an absolute URL is the publisher's own
            checked.add(name)
            found = _find(name, files)
            if found is None:
                lines.append(
                    f"warning: {yml.name} names {name}, which is not among the files published: "
                    "electron-updater would find no such file"
                )
            elif isinstance(sha512, str) and sha512 != _sha512_base64(found):
                lines.append(
                    f"warning: {yml.name} gives a sha512 for {name} that is not the one of "
                    f"{found.name}: electron-updater would refuse the download"
                )
    return lines
