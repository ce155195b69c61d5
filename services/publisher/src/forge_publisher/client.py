"""The client side of `forge release publish`: the HTTP calls, in an order that is safe to re-run.

1. Find the release by tag; create it when missing (as a draft first, unless it is to stay a
   draft: updaters must not see a release whose files are still uploading).
2. Compare the files with the release's assets: a missing one is uploaded; one with the same
   name and the same SHA-256 (the download's ETag) is skipped; the same name with other bytes is
   an error before anything is uploaded (the user must delete that asset first).
3. Upload each missing file, streamed from disk with a progress bar, and check the SHA-256 the
   server recorded against the one computed while sending.
4. Publish the draft (unless `--draft`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import quote

import aiohttp
import orjson
from forge_common.units import human_size
from yarl import URL

from .progress import Progress
from .velopack_warnings import velopack_warnings

CHUNK = 1024 * 1024
PUBLISH_SCOPE = "write:release"  # docs/accounts.md "Scopes": every step of publishing, nothing else
# the header that names the forge CLI (forge_common.audit.origin.CLIENT_HEADER; this package
# imports no service code it does not need)
CLIENT_HEADER = "X-Forge-Client"
TIMEOUT = aiohttp.ClientTimeout(total=None, sock_connect=30, sock_read=600)


class PublishError(Exception):
    """A failure with a message meant for the user."""


@dataclass(frozen=True, slots=True)
class Request:
    base_url: str  # ends in '/'
    token: str
    owner: str
    repo: str
    tag: str
    files: Sequence[Path]
    title: str | None = None
    notes: str | None = None
    draft: bool = False
    prerelease: bool = False
    rollout: int | None = None


def _error_of(data: Any) -> tuple[str, str]:
    """(code, message) of a version-2 error body; empty strings for anything else."""
    error = data.get("error") if isinstance(data, dict) else None
    if not isinstance(error, dict):
        return "", ""
    return str(error.get("code", "")), str(error.get("message", ""))


def _segment(value: str) -> str:
    return quote(value, safe="")


async def file_sha256(path: Path) -> str:
    def digest() -> str:
        sha = hashlib.sha256()
        with path.open("rb") as file:
            while chunk := file.read(CHUNK):
                sha.update(chunk)
        return sha.hexdigest()

    return await asyncio.to_thread(digest)


class Publisher:
    def __init__(
        self, session: aiohttp.ClientSession, req: Request, out: TextIO, err: TextIO
    ) -> None:
        self.session = session
        self.req = req
        self.out = out
        self.err = err
        self.full_name = f"{req.owner}/{req.repo}"
        self.api = f"{req.base_url}api/v2/repos/{_segment(req.owner)}/{_segment(req.repo)}/releases"
        self.headers = {
            "Authorization": f"token {req.token}",
            "Accept": "application/json",
            CLIENT_HEADER: "cli",  # the audit log records these changes with the source `cli`
        }

    # --- HTTP ------------------------------------------------------------------------------

    async def call(
        self, method: str, url: str, *, headers: dict[str, str] | None = None, **kwargs: Any
    ) -> tuple[int, Any]:
        """Status and decoded JSON body (None when empty) of one request."""
        async with self.session.request(
            method, URL(url, encoded=True), headers={**self.headers, **(headers or {})}, **kwargs
        ) as resp:
            body = await resp.read()
            data: Any = None
            if body and resp.content_type == "application/json":
                with contextlib.suppress(ValueError):  # not ours (a proxy's page): no data
                    data = orjson.loads(body)
            return resp.status, data

    def fail(self, status: int, data: Any, doing: str) -> PublishError:
        code, message = _error_of(data)
        if code == "AuthTokenInvalid":
            return PublishError("the server did not accept FORGE_TOKEN (401): check the token")
        if code == "AuthTokenMissing":
            return PublishError("the server wants a token (401): set FORGE_TOKEN")
        if code == "RepoNotFound":
            return PublishError(
                f"repository {self.full_name} not found (404), or this token cannot see it"
            )
        if status == 403 and "required scope" in message:
            # the server names the scope of the request it refused, `read:repository` for the
            # first look-up; what the whole command needs is the write scope
            return PublishError(
                f"this token may not publish to {self.full_name} (403): publishing needs a token "
                f"with the {PUBLISH_SCOPE} scope"
            )
        if status == 403:
            return PublishError(f"no permission to publish to {self.full_name} (403): {message}")
        detail = f": {message}" if message else ""
        return PublishError(f"{doing} failed with HTTP {status}{detail}")

    # --- steps -----------------------------------------------------------------------------

    async def find_release(self) -> dict[str, Any] | None:
        tag = self.req.tag
        if not (tag.isascii() and tag.lstrip("+").isdigit()):
            status, data = await self.call("GET", f"{self.api}/{_segment(tag)}")
            if status == 200 and isinstance(data, dict):
                return data
            if status == 404 and _error_of(data)[0] == "ReleaseNotFound":
                return None
            raise self.fail(status, data, "looking up the release")
        # A tag that looks like a number names a release id in the path: search the list.
        page = 1
        while True:
            status, data = await self.call(
                "GET", f"{self.api}?prereleases=true&drafts=true&limit=100&page={page}"
            )
            if status != 200 or not isinstance(data, list):
                raise self.fail(status, data, "listing releases")
            for release in data:
                if release["tag_name"] == tag:
                    return dict(release)
            if len(data) < 100:
                return None
            page += 1

    async def create_release(self) -> dict[str, Any]:
        body = {
            "tag_name": self.req.tag,
            "name": self.req.title or self.req.tag,
            "body": self.req.notes or "",
            "draft": True,  # published after its files are up (see the module docstring)
            "prerelease": self.req.prerelease,
        }
        status, data = await self.call("POST", self.api, json=body)
        if status == 201 and isinstance(data, dict):
            self.out.write(f"created release {self.req.tag} of {self.full_name}\n")
            return data
        if status == 409:  # created meanwhile by someone else: use it
            found = await self.find_release()
            if found is not None:
                return found
        raise self.fail(status, data, "creating the release")

    async def remote_sha256(self, name: str) -> str:
        """The SHA-256 of an existing asset: the download's ETag (a HEAD, no bytes sent)."""
        url = (
            f"{self.req.base_url}{_segment(self.req.owner)}/{_segment(self.req.repo)}"
            f"/releases/download/{_segment(self.req.tag)}/{_segment(name)}"
        )
        async with self.session.head(URL(url, encoded=True), headers=self.headers) as resp:
            etag = resp.headers.get("ETag", "").removeprefix("W/").strip('"')
            if resp.status != 200 or len(etag) != 64:
                raise PublishError(
                    f"cannot read the SHA-256 of the existing asset {name} (HTTP {resp.status})"
                )
            return etag

    async def plan(self, release: dict[str, Any]) -> list[Path]:
        """The files to upload; raises when a file differs from the asset of the same name."""
        existing = {asset["name"] for asset in release.get("assets", [])}
        todo: list[Path] = []
        clashes: list[str] = []
        for path in self.req.files:
            if path.name not in existing:
                todo.append(path)
                continue
            local, remote = await file_sha256(path), await self.remote_sha256(path.name)
            if local == remote:
                self.out.write(f"skipped {path.name}: already uploaded (same SHA-256)\n")
            else:
                clashes.append(path.name)
        if clashes:
            names = ", ".join(clashes)
            raise PublishError(
                f"release {self.req.tag} already has {names} with different content; "
                "delete the asset first (nothing was uploaded)"
            )
        return todo

    async def upload(self, release: dict[str, Any], path: Path) -> None:
        size = (await asyncio.to_thread(path.stat)).st_size
        sha = hashlib.sha256()
        progress = Progress(path.name, size, self.err)

        async def chunks() -> AsyncIterator[bytes]:
            with path.open("rb") as file:
                while chunk := await asyncio.to_thread(file.read, CHUNK):
                    await asyncio.to_thread(sha.update, chunk)
                    progress.update(len(chunk))
                    yield chunk

        url = f"{self.api}/{release['id']}/assets?name={_segment(path.name)}"
        headers = {"Content-Type": "application/octet-stream", "Content-Length": str(size)}
        try:
            # with `Expect: 100-continue` a refusal (limit, name, access) comes before any byte
            status, data = await self.call(
                "POST", url, data=chunks(), headers=headers, expect100=True
            )
        except aiohttp.ClientResponseError as exc:
            raise PublishError(f"uploading {path.name} failed: {exc.message}") from None
        except (aiohttp.ClientOSError, aiohttp.ServerDisconnectedError) as exc:
            raise PublishError(
                f"uploading {path.name}: the server closed the connection ({exc}); "
                "is the file over the server's upload limit?"
            ) from None
        finally:
            progress.close()
        if status == 413:
            raise PublishError(f"{path.name} is larger than the server's upload limit (413)")
        if status != 201 or not isinstance(data, dict):
            raise self.fail(status, data, f"uploading {path.name}")
        if data.get("sha256") not in (None, sha.hexdigest()):
            raise PublishError(f"{path.name}: the server stored different bytes than were sent")
        self.out.write(f"uploaded {path.name} ({human_size(size)})\n")

    async def edit(self, release: dict[str, Any], body: dict[str, Any], what: str) -> None:
        status, data = await self.call("PATCH", f"{self.api}/{release['id']}", json=body)
        if status != 200:
            raise self.fail(status, data, what)

    async def publish_draft(self, release: dict[str, Any]) -> None:
        body = {"draft": False, "rollout": self.req.rollout}
        await self.edit(release, body, "publishing the release")
        self.out.write(f"published release {self.req.tag}\n")

    async def velopack_feed_ids(self, channel: str) -> set[str]:
        """The package ids the repository's Velopack feed lists for `channel` now."""
        url = (
            f"{self.req.base_url}{_segment(self.req.owner)}/{_segment(self.req.repo)}"
            f"/velopack/releases.{_segment(channel)}.json"
        )
        status, data = await self.call("GET", url)
        assets = data.get("Assets") if status == 200 and isinstance(data, dict) else None
        if not isinstance(assets, list):
            return set()
        ids = {a.get("PackageId") for a in assets if isinstance(a, dict)}
        return {found for found in ids if isinstance(found, str) and found}

    async def run(self) -> None:
        for line in await velopack_warnings(self.req.tag, self.req.files, self.velopack_feed_ids):
            self.err.write(f"forge: {line}\n")
        release = await self.find_release()
        if release is None:
            release = await self.create_release()
        elif self.req.title is not None or self.req.notes is not None:
            self.out.write(
                f"release {self.req.tag} exists: its title and notes are left as they are\n"
            )
        for path in await self.plan(release):
            await self.upload(release, path)
        if release["draft"] and not self.req.draft:
            await self.publish_draft(release)
        elif self.req.rollout is not None:  # run again with a larger --rollout to raise it
            await self.edit(release, {"rollout": self.req.rollout}, "setting the rollout")
            self.out.write(f"release {self.req.tag} now rolls out to {self.req.rollout}%\n")
        self.out.write(f"{release['html_url']}\n")
