"""What a Velopack package says about itself: the `.nuspec` at the root of a `.nupkg` (a zip), as
vpk writes it and Velopack's client reads it: `<id>`, `<version>`, `<channel>`, `<releaseNotes>`
and `<releaseNotesHtml>` under `<metadata>`. The releases service's Velopack feed reads it from
the stored package (forge_releases feeds/nuspec.py), `forge release publish` from the file it is
about to upload (its warnings).

Anything that is not such a package (not a zip, no root `.nuspec`, no `<channel>`, which is a
Squirrel.Windows package, no SemVer version) is `NOT_VELOPACK`, never an error. The XML comes
from users, so it is parsed by defusedxml (no entities, no DTD).
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from typing import IO
from xml.etree.ElementTree import Element

import semver
from defusedxml import ElementTree

NUSPEC_LIMIT = 1024 * 1024  # bytes of `.nuspec` read at most: vpk's are a few hundred
FIELD_LIMIT = 256  # the id, version and channel columns' bound (migration 0009)


@dataclass(frozen=True, slots=True)
class Package:
    """A package's `.nuspec`: `package_id` '' when the asset is no Velopack package."""

    package_id: str
    version: str
    channel: str
    notes_markdown: str = ""
    notes_html: str = ""

    @property
    def velopack(self) -> bool:
        return bool(self.package_id)


NOT_VELOPACK = Package("", "", "")


def _local(tag: str) -> str:
    """An element's name without its namespace (nuspecs come with and without one)."""
    return tag.rsplit("}", 1)[-1]


def _fields(metadata: Element) -> dict[str, str]:
    return {_local(child.tag): (child.text or "").strip() for child in metadata}


def parse_nuspec(text: bytes) -> Package:
    """The package a `.nuspec`'s bytes describe, or NOT_VELOPACK."""
    try:
        root = ElementTree.fromstring(text)
    except (ElementTree.ParseError, ValueError):  # defusedxml's refusals are ValueErrors
        return NOT_VELOPACK
    metadata = next((child for child in root if _local(child.tag) == "metadata"), None)
    if metadata is None:
        return NOT_VELOPACK
    said = _fields(metadata)
    package_id, version, channel = said.get("id", ""), said.get("version", ""), said.get("channel")
    if not package_id or not channel or not semver.Version.is_valid(version):
        return NOT_VELOPACK  # Velopack's client refuses it, or Squirrel.Windows' (no channel)
    if max(len(package_id), len(version), len(channel)) > FIELD_LIMIT:
        return NOT_VELOPACK
    return Package(
        package_id,
        version,
        channel.lower(),  # vpk writes it lower-cased, and the client asks for it so
        said.get("releaseNotes", ""),
        said.get("releaseNotesHtml", ""),
    )


def read_package(file: IO[bytes]) -> Package:
    """The package in a seekable file: the first root entry ending in `.nuspec` (as the client
    takes it), or NOT_VELOPACK."""
    try:
        with zipfile.ZipFile(file) as package:
            entry = next(
                (
                    info
                    for info in package.infolist()
                    if "/" not in info.filename and info.filename.lower().endswith(".nuspec")
                ),
                None,
            )
            if entry is None or entry.file_size > NUSPEC_LIMIT:
                return NOT_VELOPACK
            with package.open(entry) as nuspec:
                return parse_nuspec(nuspec.read(NUSPEC_LIMIT + 1))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, NotImplementedError):
        return NOT_VELOPACK
    except (RuntimeError, ValueError):  # an encrypted entry, a corrupt directory
        return NOT_VELOPACK
