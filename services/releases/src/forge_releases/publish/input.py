"""Validating what publishers send: release bodies (create and edit) and asset names.

Wrong JSON types are 422 naming the field (forge_common.body); a tag or asset name that breaks
names.py is 422; text PostgreSQL cannot store (NUL, unpaired surrogates) is 422, never a 500.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from forge_common.body import optional_bool, optional_int, optional_str
from forge_common.names import hidden_character_problem

from ..errors import InvalidField
from ..models import Release
from .names import asset_name_problem, tag_problem
from .queries import ReleaseFields

MAX_TITLE = 255
MAX_TARGET = 255
MAX_NOTE = 1024 * 1024  # the JSON body limit keeps it smaller still

# wire name → model attribute, which is also its name in `changed` of release.updated
_TEXT_FIELDS = {"tag_name": "tag", "target_commitish": "target", "name": "title", "body": "note"}
_FLAGS = {"draft": "draft", "prerelease": "prerelease"}


def _storable(value: str, field: str, limit: int) -> str:
    if "\x00" in value:
        raise InvalidField(field, "must not contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidField(field, "must be valid Unicode text") from None
    if len(value) > limit:
        raise InvalidField(field, f"must be at most {limit} characters")
    return value


# Path segments that URL normalisation removes: a download address holding one would break.
_DOT_SEGMENTS = frozenset({".", ".."})


def _checked_name(
    value: str | None, field: str, problem_of: Callable[[str], str | None], missing: str
) -> str:
    """A tag or asset name: present, within names.py's rules, not a dot segment, storable."""
    if value is None:
        raise InvalidField(field, missing)
    problem = problem_of(value)
    if problem is None and value in _DOT_SEGMENTS:
        problem = "must not be '.' or '..'"
    if problem is not None:
        raise InvalidField(field, problem)
    return _storable(value, field, 255)


def _tag(value: str | None) -> str:
    return _checked_name(value, "tag_name", tag_problem, "is required")


def _text(data: Mapping[str, Any], field: str) -> str | None:
    value = optional_str(data, field)
    if value is None:
        return None
    if field == "tag_name":
        return _tag(value)
    if field == "name" and (problem := hidden_character_problem(value)):
        raise InvalidField(field, problem)  # a release title is a display name (names.py)
    limit = {"name": MAX_TITLE, "target_commitish": MAX_TARGET}.get(field, MAX_NOTE)
    return _storable(value, field, limit)


def _rollout(data: Mapping[str, Any]) -> int | None:
    """`rollout`: the staged-rollout percentage, 1-100 (absent or null: unchanged / everyone)."""
    return optional_int(data, "rollout", low=1, high=100)


def new_release(data: Mapping[str, Any]) -> ReleaseFields:
    """POST body `{tag_name (required), target_commitish, name, body, draft, prerelease,
    rollout}`."""
    texts = {field: _text(data, field) for field in _TEXT_FIELDS}
    return ReleaseFields(
        tag=_tag(texts["tag_name"]),
        target=texts["target_commitish"] or "",
        title=texts["name"] or "",
        note=texts["body"] or "",
        draft=bool(optional_bool(data, "draft")),
        prerelease=bool(optional_bool(data, "prerelease")),
        rollout=_rollout(data),
    )


@dataclass(frozen=True, slots=True)
class Edit:
    """The fields after a PATCH and the names of those whose value changed."""

    fields: ReleaseFields
    changed: tuple[str, ...]


def edit_release(data: Mapping[str, Any], current: Release) -> Edit:
    """PATCH body: the given (non-null) fields replace the current values, the others stay."""
    values: dict[str, Any] = {
        "tag": current.tag,
        "target": current.target,
        "title": current.title,
        "note": current.note,
        "draft": current.draft,
        "prerelease": current.prerelease,
        "rollout": current.rollout,
    }
    changed: list[str] = []
    given: dict[str, Any] = {attr: _text(data, wire) for wire, attr in _TEXT_FIELDS.items()}
    given.update({attr: optional_bool(data, wire) for wire, attr in _FLAGS.items()})
    given["rollout"] = _rollout(data)
    for attribute, value in given.items():
        if value is not None and value != values[attribute]:
            values[attribute] = value
            changed.append(attribute)
    return Edit(ReleaseFields(**values), tuple(changed))


def asset_name(value: str | None) -> str:
    """The `name` of an upload (query parameter, else the multipart file name)."""
    return _checked_name(value, "name", asset_name_problem, "is required (?name=FILE)")


@dataclass(frozen=True, slots=True)
class SafetyEdit:
    """The release-safety fields of a PATCH body (docs/release-safety.md); None: not given."""

    withdrawn: bool | None = None
    withdrawn_reason: str | None = None
    required: bool | None = None
    critical: bool | None = None

    @property
    def given(self) -> bool:
        return any(v is not None for v in (self.withdrawn, self.withdrawn_reason, *self._flags))

    @property
    def _flags(self) -> tuple[bool | None, bool | None]:
        return self.required, self.critical


MAX_WITHDRAWN_REASON = 1000


def safety_edit(data: Mapping[str, Any]) -> SafetyEdit:
    """`withdrawn`, `withdrawn_reason`, `required`, `critical`: wrong types are 422."""
    reason = optional_str(data, "withdrawn_reason")
    if reason is not None:
        reason = _storable(reason.strip(), "withdrawn_reason", MAX_WITHDRAWN_REASON)
    return SafetyEdit(
        withdrawn=optional_bool(data, "withdrawn"),
        withdrawn_reason=reason,
        required=optional_bool(data, "required"),
        critical=optional_bool(data, "critical"),
    )
