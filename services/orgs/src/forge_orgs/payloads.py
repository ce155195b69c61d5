"""Request bodies (the `...Option` objects of docs/orgs.md "Request bodies"), validated: a wrong
JSON type or a value out of range is 422 naming the field, unknown fields are ignored."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from forge_common.body import INT64_MAX, optional_bool, optional_int, optional_list, optional_str
from forge_common.errors import Unprocessable
from forge_common.names import display_name_problem

from .pins.queries import PinOrder

MAX_GROUP_NAME = 100


def _group_id(data: Mapping[str, Any], name: str) -> int | None:
    """A group reference: absent, null or 0 mean no group."""
    value = optional_int(data, name, low=0, high=INT64_MAX)
    return value or None


@dataclass(frozen=True, slots=True)
class AddPin:
    repo_name: str
    group_id: int | None
    display_order: int


def add_pin(data: Mapping[str, Any]) -> AddPin:
    repo_name = optional_str(data, "repo_name")
    if repo_name is None or not repo_name.strip():
        raise Unprocessable("repo_name is required", field="repo_name")
    return AddPin(
        repo_name=repo_name.strip(),
        group_id=_group_id(data, "group_id"),
        display_order=optional_int(data, "display_order") or 0,
    )


def reorder(data: Mapping[str, Any]) -> list[PinOrder]:
    entries = optional_list(data, "orders")
    if entries is None:
        raise Unprocessable("orders is required", field="orders")
    orders: list[PinOrder] = []
    seen: set[int] = set()
    for index, entry in enumerate(entries):
        where = f"orders[{index}]"
        if not isinstance(entry, dict):
            raise Unprocessable(f"{where} must be an object", field=where)
        try:
            repo_id = optional_int(entry, "repo_id", low=1, high=INT64_MAX)
            group_id = _group_id(entry, "group_id")
            display_order = optional_int(entry, "display_order") or 0
        except Unprocessable as error:
            # name the field with its place in the list
            raise Unprocessable(
                f"{where}.{error.message}", field=f"{where}.{error.field}"
            ) from None
        if repo_id is None:
            raise Unprocessable(f"{where}.repo_id is required", field=f"{where}.repo_id")
        if repo_id in seen:
            raise Unprocessable(
                f"{where}.repo_id names a repository listed twice", field=f"{where}.repo_id"
            )
        seen.add(repo_id)
        orders.append(PinOrder(repo_id, group_id, display_order))
    return orders


def _group_name(data: Mapping[str, Any], *, required: bool) -> str | None:
    name = optional_str(data, "name")
    if name is None:
        if required:
            raise Unprocessable("name is required", field="name")
        return None
    name = name.strip()
    # the rule of every display name we store: not empty, bounded, nothing hidden (BEL, U+202E)
    if problem := display_name_problem(name, max_length=MAX_GROUP_NAME):
        raise Unprocessable(f"name {problem}", field="name")
    return name


@dataclass(frozen=True, slots=True)
class CreateGroup:
    name: str
    display_order: int
    collapsed: bool


def create_group(data: Mapping[str, Any]) -> CreateGroup:
    name = _group_name(data, required=True)
    assert name is not None
    return CreateGroup(
        name=name,
        display_order=optional_int(data, "display_order") or 0,
        collapsed=bool(optional_bool(data, "collapsed")),
    )


@dataclass(frozen=True, slots=True)
class UpdateGroup:
    """Only the supplied (non-null) fields change."""

    name: str | None
    display_order: int | None
    collapsed: bool | None


def update_group(data: Mapping[str, Any]) -> UpdateGroup:
    return UpdateGroup(
        name=_group_name(data, required=False),
        display_order=optional_int(data, "display_order"),
        collapsed=optional_bool(data, "collapsed"),
    )
