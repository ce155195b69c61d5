"""The OpenAPI operations of release safety (docs/release-safety.md): forge's own update check,
made from the spec check's operation (the same parameters and answer, plus `allow_downgrade` and
a `mandatory` that is set), and the audit log's reads."""

from __future__ import annotations

import copy
from typing import Any

SPEC_CHECK = "/api/v2/repos/{owner}/{repo}/releases/update"
SAFE_CHECK = "/api/v2/repos/{owner}/{repo}/update"

_ALLOW_DOWNGRADE = {
    "name": "allow_downgrade",
    "in": "query",
    "required": False,
    "schema": {"type": "string"},
    "description": "true: the app installs a lower version (electron-updater's allowDowngrade, "
    "Velopack's AllowVersionDowngrade); an install on a withdrawn version is then offered the "
    "newest release that is not withdrawn",
}


def safe_check(paths: dict[str, Any]) -> dict[str, Any]:
    operation = copy.deepcopy(paths[SPEC_CHECK]["get"])
    operation["operationId"] = "checkUpdateSafely"
    operation["summary"] = "Update check with release safety (withdrawn, required, critical)"
    operation["description"] = (
        "The spec's update check decided with the rules of release safety (docs/release-safety.md):"
        " an install below a required release is offered it; an install on a withdrawn version is "
        "rolled back with allow_downgrade=true; `mandatory` is true when a critical release is "
        "above the running version. " + operation.get("description", "")
    )
    operation["parameters"] = [*operation["parameters"], _ALLOW_DOWNGRADE]
    operation["responses"]["200"]["description"] = (
        "The release to install (a required step, or a lower one when rolled back)"
    )
    return {SAFE_CHECK: {"get": operation}}
