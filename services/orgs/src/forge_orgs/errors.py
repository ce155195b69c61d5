"""The orgs service's 404s, each with the code and message the API answers with
(docs/orgs.md "Endpoints"); the rest of the error tree is `forge_common.errors`."""

from __future__ import annotations

from forge_common.errors import NotFound


class OrgNotFound(NotFound):
    """No such organization, or one the viewer may not see (the two answer alike)."""

    code = "OrgNotFound"

    def __init__(self) -> None:
        super().__init__("Organization not found")


class PinGroupNotFound(NotFound):
    code = "PinGroupNotFound"

    def __init__(self) -> None:
        super().__init__("Pinned group not found")


class UserNotFound(NotFound):
    code = "UserNotFound"

    def __init__(self, message: str = "User not found") -> None:
        super().__init__(message)


class NotAMember(UserNotFound):
    """The user exists but is not a member of the organization (same code as no such user)."""

    def __init__(self) -> None:
        super().__init__("User is not a member of the organization")
