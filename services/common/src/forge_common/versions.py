"""Release versions: a tag is a version when it is strict SemVer 2.0 after one leading `v`
(docs/releases.md). The server orders releases by it and the publisher warns about tags that are
not, so both read tags through this one function; both also warn in the same words
(`tag_warning`: the CLI on publishing, the console on its release form)."""

from __future__ import annotations

import semver


def parse_version(text: str) -> semver.Version | None:
    """Strict SemVer 2.0 after removing one leading `v`; None when it does not parse."""
    try:
        return semver.Version.parse(text.removeprefix("v"))
    except (ValueError, TypeError):
        return None


def tag_warning(tag: str) -> str | None:
    """What a publisher is told about a tag no updater can compare; None for a version."""
    if not tag or parse_version(tag) is not None:
        return None
    return (
        f"the tag {tag} is not a semantic version (like v1.2.0): the update check and the feeds "
        "skip it, so updaters will never offer this release, and the pages never show it as "
        "the latest"
    )
