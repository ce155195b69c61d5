"""A plugin's GetReleaseHealth answer, checked as the health endpoint checks a post (whole
numbers from 0, crashed sessions at most the sessions; docs/rollouts.md "Gates"), and more: only
versions that were asked for, each once. One bad figure refuses the whole answer: nothing of it
is stored."""

from __future__ import annotations

from collections.abc import Collection

from plugin.v1 import release_health_pb2

# The health endpoint's largest count (forge_releases rollouts/plan.py MAX_COUNT): a plugin's
# figures are held to the same rule as a post's.
MAX_COUNT = 2**62
# How much of a plugin's own error text a log line keeps.
MAX_ERROR_TEXT = 200


class InvalidAnswer(Exception):
    """Why an answer is not stored (for the log: operators only)."""


def version_of(tag: str) -> str:
    """The version an application reports for a release: its tag without a leading `v`
    (`v1.2.0` is 1.2.0), as insights counts it."""
    if tag[:1] in ("v", "V") and tag[1:2].isdigit():
        return tag[1:]
    return tag


def accepted(
    answer: release_health_pb2.GetReleaseHealthResponse, asked: Collection[str]
) -> dict[str, tuple[int, int]]:
    """The figures by version, (sessions, crashed sessions); InvalidAnswer when any is bad."""
    if answer.error:
        raise InvalidAnswer(f"the plugin has no figures: {answer.error[:MAX_ERROR_TEXT]}")
    figures: dict[str, tuple[int, int]] = {}
    for item in answer.figures:
        version = item.version
        if version not in asked:
            raise InvalidAnswer(f"figures for version {version[:100]!r}, which was not asked for")
        if version in figures:
            raise InvalidAnswer(f"figures for version {version!r} twice")
        sessions, crashed = item.sessions, item.crashed_sessions
        if not 0 <= sessions <= MAX_COUNT or not 0 <= crashed <= MAX_COUNT:
            raise InvalidAnswer(
                f"version {version}: sessions and crashed_sessions must be whole numbers "
                f"from 0 to {MAX_COUNT} (got {sessions} and {crashed})"
            )
        if crashed > sessions:
            raise InvalidAnswer(
                f"version {version}: crashed_sessions ({crashed}) must not exceed "
                f"sessions ({sessions})"
            )
        figures[version] = (sessions, crashed)
    return figures
