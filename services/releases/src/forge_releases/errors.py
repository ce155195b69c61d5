"""The releases service's errors: each a subclass of a `forge_common.errors` class, which gives the
status (codes: docs/http.md; messages: docs/releases.md). Code elsewhere raises these, never an
inline `NotFound("...")`. `RepoNotFound` is shared with the orgs service: forge_common.errors."""

from __future__ import annotations

from forge_common.access import Access
from forge_common.errors import (
    ApiError,
    Conflict,
    InvalidInput,
    NotFound,
    PayloadTooLarge,
    PermissionDenied,
    ServiceUnavailable,
    Unprocessable,
)

# --- 400 ------------------------------------------------------------------------------------


class InvalidVersion(InvalidInput):
    """Update rule 1: the version asked about is not a semantic version."""

    def __init__(self, version: str) -> None:
        super().__init__(f"Invalid version format: {version}")


class MalformedBody(InvalidInput):
    def __init__(self) -> None:
        super().__init__("Malformed request body")


class MalformedMultipart(InvalidInput):
    def __init__(self) -> None:
        super().__init__("Malformed multipart body")


class IncompleteFilePart(InvalidInput):
    """The form ended before the closing boundary of its file part: the file was cut short."""

    def __init__(self) -> None:
        super().__init__("Malformed multipart body: the file part is incomplete")


# --- 403 ------------------------------------------------------------------------------------


class NoPublishAccess(PermissionDenied):
    """A signed-in caller who may read the repository but lacks `need` (write, or admin)."""

    def __init__(self, need: Access) -> None:
        what = "administer" if need >= Access.ADMIN else "publish releases of"
        super().__init__(f"You do not have permission to {what} this repository")


class RepoArchived(PermissionDenied):
    def __init__(self) -> None:
        super().__init__("Repository is archived")


# --- 404 ------------------------------------------------------------------------------------


class ReleaseNotFound(NotFound):
    code = "ReleaseNotFound"

    def __init__(self) -> None:
        super().__init__("Release not found")


class RolloutPlanNotFound(NotFound):
    code = "RolloutPlanNotFound"

    def __init__(self) -> None:
        super().__init__("Rollout plan not found")


class NoReleasesFound(NotFound):
    code = "NoReleasesFound"

    def __init__(self) -> None:
        super().__init__("No releases found")


class AssetNotFound(NotFound):
    code = "AssetNotFound"

    def __init__(self) -> None:
        super().__init__("Asset not found")


class NoSourceArchive(NotFound):
    """A release's `tarball_url`/`zipball_url` when it carries no source archive of that kind:
    forge hosts no git, so it cannot make one (downloads/archives.py)."""

    code = "NoSourceArchive"

    def __init__(self, tag: str, suffix: str) -> None:
        super().__init__(
            f"No source archive: this server hosts releases, not git repositories, so it cannot "
            f"make a {suffix} of {tag}'s source; a release offers one by carrying it as a file "
            f"whose name says 'source' (e.g. App-{tag.removeprefix('v')}-source{suffix})"
        )


class UpdateKeyNotFound(NotFound):
    code = "UpdateKeyNotFound"

    def __init__(self) -> None:
        super().__init__("Update key not found")


class TauriKeyNotFound(NotFound):
    code = "TauriKeyNotFound"

    def __init__(self) -> None:
        super().__init__("The repository has no Tauri public key")


# --- 408, 409, 413 --------------------------------------------------------------------------


class UploadStalled(ApiError):
    status = 408
    code = "RequestTimeout"

    def __init__(self, seconds: float) -> None:
        super().__init__(f"No upload data received for {seconds:g} seconds")


class TagTaken(Conflict):
    def __init__(self, tag: str) -> None:
        super().__init__(f"Release with tag {tag} already exists")


class DraftNotWithdrawable(Conflict):
    """Only a published release is withdrawn: a draft is offered to nobody already."""

    def __init__(self) -> None:
        super().__init__("A draft cannot be withdrawn: it is not published")


class AssetNameTaken(Conflict):
    def __init__(self, name: str) -> None:
        super().__init__(f"Asset named {name} already exists on this release")


class AssetTooLarge(PayloadTooLarge):
    def __init__(self, limit: int) -> None:
        super().__init__(f"Asset larger than the upload limit of {limit} bytes")


# --- 422 ------------------------------------------------------------------------------------


class InvalidField(Unprocessable):
    """A field of a release body, or the asset `name`: `"<field> <problem>"`, naming the field."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field} {problem}", field=field)


class NoFilePart(Unprocessable):
    def __init__(self) -> None:
        super().__init__("The form has no file part", field="attachment")


class NestedMultipart(Unprocessable):
    def __init__(self) -> None:
        super().__init__("Nested multipart bodies are not supported", field="attachment")


class SeveralFileParts(Unprocessable):
    def __init__(self) -> None:
        super().__init__("Send one file per upload", field="attachment")


class TauriSignatureInvalid(Unprocessable):
    """With a Tauri public key set: a `.sig` that does not verify against the file it signs."""

    def __init__(self, sig_name: str, problem: str) -> None:
        super().__init__(f"{sig_name} {problem}", field="attachment", code="TauriSignatureInvalid")


# --- 503 ------------------------------------------------------------------------------------


class StorageFailed(ServiceUnavailable):
    """A full or failing disk: nothing was recorded, and the client may retry later."""

    def __init__(self) -> None:
        super().__init__("The file could not be stored; try again later")
