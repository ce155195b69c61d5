"""AppImage updates: a `.zsync` control file (made by zsyncmake) is sent with each relative `URL:`
line made absolute and pinned to its own release, signed when an update key authorised the
request (docs/releases.md "AppImage updates").

zsync resolves a relative `URL:` against the `.zsync`'s final address with the query dropped: after
a redirect it would go to the store's host, with `?key=` it would lose the key, a saved `.zsync`
names no address at all, and through `releases/latest/download/` a release published mid-update
would hand it another file. The control file's header (text lines up to the first empty line)
is the only part changed; the block checksums after it are kept byte for byte, and `SHA-1:` is
the target file's own.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urljoin, urlsplit

from aiohttp import web
from forge_common.keys import SETTINGS

from ..access_keys.signed_urls import handed_out_url
from ..keys import STORAGE
from ..models import Asset, Release, RepoRef
from ..urls import download_url
from .send import storage_answers

SUFFIX = ".zsync"
# Read whole to be rewritten: a .zsync of a 4 GiB file in 4 KiB blocks is about 8 MiB. A larger
# one is sent as stored.
MAX_REWRITTEN_BYTES = 16 * 1024 * 1024
_URL = b"URL: "


def rewritable(asset: Asset) -> bool:
    return asset.name.lower().endswith(SUFFIX) and 0 < asset.size <= MAX_REWRITTEN_BYTES


def absolute_urls(control: bytes, directory: str, hand_out: Callable[[str], str]) -> bytes:
    """`control` with every relative `URL:` of its header resolved against `directory` (an
    absolute URL ending in `/`) and passed through `hand_out`; anything else unchanged."""
    header, blank, checksums = control.partition(b"\n\n")
    if not blank:
        return control  # no header zsync would read: not ours to change
    lines = [
        _URL + _absolute(line[len(_URL) :], directory, hand_out) if line.startswith(_URL) else line
        for line in header.split(b"\n")
    ]
    return b"\n".join(lines) + blank + checksums


def _absolute(value: bytes, directory: str, hand_out: Callable[[str], str]) -> bytes:
    try:
        url = value.decode("ascii")
    except UnicodeDecodeError:
        return value  # zsync sends the bytes as written; a signature over them is not ours
    if not url or urlsplit(url).scheme:
        return value  # already absolute (zsyncmake -u with a full URL)
    return hand_out(urljoin(directory, url)).encode("ascii")


async def served_control(
    request: web.Request, ref: RepoRef, release: Release, asset: Asset
) -> bytes:
    """The `.zsync` as this request is to receive it (its URLs pinned to `release`)."""
    storage = request.app[STORAGE]
    with storage_answers(request, asset):
        control = b"".join([piece async for piece in storage.read(asset.sha256, 0, asset.size)])
    app_url = request.app[SETTINGS].app_url
    directory = download_url(app_url, ref.owner, ref.name, release.tag, "")
    return absolute_urls(control, directory, lambda url: handed_out_url(request, url))
