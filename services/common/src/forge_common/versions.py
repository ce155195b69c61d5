"""Release versions: a tag is a version when it is strict SemVer 2.0 after one leading `v`
(docs/releases.md). The server orders releases by it and the publisher warns about tags that are
not, so both read tags through this one function."""

from __future__ import annotations

import semver


def parse_version(text: str) -> semver.Version | None:
    """Strict SemVer 2.0 after removing one leading `v`; None when it does not parse."""
    try:
        return semver.Version.parse(text.removeprefix("v"))
    except (ValueError, TypeError):
        return None
