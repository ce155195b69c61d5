"""The dnf/yum repository of a forge repository at `{APP_URL}{owner}/{repo}/rpm/{channel}/`
(docs/releases.md "Linux package repositories"): `repodata/repomd.xml`, its detached signature
`repomd.xml.asc` (made from the final `repomd.xml`), and the primary, filelists and other
metadata, each `.rpm`'s entries as createrepo_c wrote them at upload (packages.py), gzipped
without a time and named by their digest as createrepo_c names them; the packages under
`pool/{asset id}/{name}`. `{channel}.repo` beside the channels is the ready `.repo` file, and
`key.asc` the signing keys. dnf reads `repo_gpgcheck=1`: the signature of `repomd.xml` covers
the digests of the metadata, which cover every package's SHA-256 (the packages themselves are
not re-signed: their bytes are the uploader's)."""

from __future__ import annotations

import gzip
import hashlib
from collections.abc import Mapping, Sequence
from xml.sax.saxutils import escape

from aiohttp import web
from forge_common.conditional import etag_of
from forge_common.keys import SETTINGS

from ..errors import AssetNotFound, NoReleasesFound
from ..feeds.feed import Counted, Feed, FileRoute, Updater
from ..feeds.serving import routed_key, serve
from ..read.cache import Answer, RepoReleases
from ..read.resolve import resolve
from ..urls import repo_url
from .apt import CHANNELS, pool_file
from .openapi import file_operation, metadata_operation
from .packages import HREF_MARK, RPM, pool_path
from .repository import KEYRING, Listed, packages, public_keys, signing_keys

XML = "application/xml"
_NAMESPACES = {
    "primary": (
        "metadata",
        'xmlns="http://linux.duke.edu/metadata/common" '
        'xmlns:rpm="http://linux.duke.edu/metadata/rpm"',
    ),
    "filelists": ("filelists", 'xmlns="http://linux.duke.edu/metadata/filelists"'),
    "other": ("otherdata", 'xmlns="http://linux.duke.edu/metadata/other"'),
}


def _entries(items: Sequence[Listed], kind: str) -> str:
    chunks = []
    for item in items:
        chunk = getattr(item.package, f"{kind}_xml")
        href = escape(pool_path(item.asset.id, item.asset.name), {'"': "&quot;"})
        chunks.append(chunk.replace(f'href="{HREF_MARK}"', f'href="{href}"'))
    return "".join(chunks)


def metadata(items: Sequence[Listed]) -> dict[str, tuple[bytes, bytes]]:
    """kind -> (the XML, gzipped without a time: the same bytes on every replica)."""
    made = {}
    for kind, (root, namespaces) in _NAMESPACES.items():
        text = (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<{root} {namespaces} packages="{len(items)}">\n{_entries(items, kind)}</{root}>\n'
        ).encode()
        made[kind] = (text, gzip.compress(text, mtime=0))
    return made


def file_names(made: Mapping[str, tuple[bytes, bytes]]) -> dict[str, str]:
    """kind -> its file name under repodata/ (`{sha256}-{kind}.xml.gz`, createrepo_c's)."""
    return {
        kind: f"{hashlib.sha256(gz).hexdigest()}-{kind}.xml.gz" for kind, (_, gz) in made.items()
    }


def repomd(items: Sequence[Listed], made: Mapping[str, tuple[bytes, bytes]]) -> bytes:
    """`repomd.xml`: its revision and timestamps are the newest listed upload's time."""
    stamp = max((int(item.asset.created_at.timestamp()) for item in items), default=0)
    names = file_names(made)
    data = "".join(
        f'  <data type="{kind}">\n'
        f'    <checksum type="sha256">{hashlib.sha256(gz).hexdigest()}</checksum>\n'
        f'    <open-checksum type="sha256">{hashlib.sha256(text).hexdigest()}</open-checksum>\n'
        f'    <location href="repodata/{names[kind]}"/>\n'
        f"    <timestamp>{stamp}</timestamp>\n"
        f"    <size>{len(gz)}</size>\n"
        f"    <open-size>{len(text)}</open-size>\n"
        "  </data>\n"
        for kind, (text, gz) in made.items()
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<repomd xmlns="http://linux.duke.edu/metadata/repo" '
        'xmlns:rpm="http://linux.duke.edu/metadata/rpm">\n'
        f"  <revision>{stamp}</revision>\n{data}</repomd>\n"
    ).encode()


def _answer(body: bytes, content_type: str) -> Answer:
    return Answer(200, body, etag_of(body), content_type)


async def repodata(request: web.Request) -> web.Response:
    """GET /{owner}/{repo}/rpm/{channel}/repodata/{file}."""
    channel, file = request.match_info["channel"], request.match_info["file"]
    if channel not in CHANNELS:
        raise NoReleasesFound()

    async def build(releases: RepoReleases, _: object) -> Answer:
        items = await packages(request.app, releases, channel, RPM)
        made = metadata(items)
        if file in ("repomd.xml", "repomd.xml.asc"):
            document = repomd(items, made)
            if file == "repomd.xml":
                return _answer(document, XML)
            keys = await signing_keys(request.app)
            signature = await request.app[KEYRING].detach_sign(document, keys)
            return _answer(signature, "application/pgp-signature")
        for kind, name in file_names(made).items():
            if name == file:
                return _answer(made[kind][1], "application/gzip")
        raise NoReleasesFound()

    return await serve(request, routed_key(REPODATA, request), build)


def repo_file(app_url: str, owner: str, repo: str, channel: str) -> str:
    """The `.repo` file of a channel, for /etc/yum.repos.d/."""
    base = repo_url(app_url, owner, repo)
    return (
        f"[{owner}-{repo}-{channel}]\n"
        f"name={owner}/{repo} ({channel})\n"
        f"baseurl={base}/rpm/{channel}/\n"
        "enabled=1\n"
        "repo_gpgcheck=1\n"
        "gpgcheck=0\n"
        f"gpgkey={base}/rpm/key.asc\n"
        "metadata_expire=1h\n"
    )


async def beside(request: web.Request) -> web.Response:
    """GET /{owner}/{repo}/rpm/key.asc and /{owner}/{repo}/rpm/{channel}.repo."""
    file = request.match_info["file"]
    resolved = await resolve(request)
    if file == "key.asc":
        body = await public_keys(request.app, armor=True)
        return _answer(body, "application/pgp-keys").respond(request, resolved.public)
    channel = file.removesuffix(".repo")
    if not file.endswith(".repo") or channel not in CHANNELS:
        raise AssetNotFound()
    ref = resolved.ref
    text = repo_file(request.app[SETTINGS].app_url, ref.owner, ref.name, channel)
    return _answer(text.encode(), "text/plain; charset=utf-8").respond(request, resolved.public)


def _nothing(_: str) -> Mapping[str, str]:
    return {}


REPODATA = Feed(
    name="dnf",
    path="/{owner}/{repo}/rpm/{channel}/repodata/{file}",
    handler=repodata,
    key="rpm {channel} {file}",
    counted=Counted({"channel": "channel", "file": _nothing}, {"platform": "linux"}),
    updaters=(Updater("dnf / yum (Fedora, RHEL: a signed rpm repository)", (".rpm",)),),
    operation=metadata_operation(
        "rpmRepodata",
        "A dnf/yum repository's repomd.xml, repomd.xml.asc, or the metadata it names",
        ["channel", "file"],
    ),
)
FILES = (
    FileRoute(
        "/{owner}/{repo}/rpm/{channel}/pool/{asset_id}/{file}",
        pool_file,
        file_operation(
            "rpmPool", "A package the rpm repository lists", ["channel", "asset_id", "file"]
        ),
    ),
    FileRoute(
        "/{owner}/{repo}/rpm/{file}",
        beside,
        file_operation(
            "rpmBeside", "The signing keys (key.asc) or a channel's .repo file", ["file"]
        ),
    ),
)
