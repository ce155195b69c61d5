"""A request target for every registered feed (feeds/registry.py), made from its route: the
tests that walk every feed (test_feed_registry.py, test_fast_path.py, test_insights_proxy_log.py)
read the registry, not a list of their own. A new feed whose route has a variable part not
below fails them with a KeyError: give it a value its answer can be made for."""

from __future__ import annotations

from typing import Any

from forge_releases.feeds.feed import Feed

from .support import rel

VALUES = {
    "owner": "owner",
    "repo": "app",
    "arch": "arm64",
    "version": "1.0.0",
    "current_version": "1.0.0",
    "target": "darwin",
    "file": "latest-mac.yml",
    "channel": "osx",
}
# the Linux repositories' routes name their files and channels in the path (linux/)
BY_KIND = {
    "apt": {"channel": "stable", "file": "InRelease"},
    "apt-packages": {"channel": "stable", "file": "Packages"},
    "rpm": {"channel": "stable", "file": "repomd.xml"},
}
# every feed offers v1.1.0 from these (a version 1.0.0 runs, on macOS, arm64)
FEED_ASSETS = [
    "App-1.1.0-arm64-mac.zip",
    "App-arm64-1.1.0-full.nupkg",
    "App_aarch64.app.tar.gz",
    "App_aarch64.app.tar.gz.sig",
]


def target(feed: Feed) -> str:
    """A request target of `feed`'s route, with a channel when the feed has channels."""
    path = feed.path.format_map({**VALUES, **BY_KIND.get(feed.kind, {})})
    return f"{path}?channel=stable" if feed.channel else path


def release_for_every_feed() -> dict[str, Any]:
    release = rel("v1.1.0", 1)
    release["assets"] = [{"name": name, "content": f"{name} bytes"} for name in FEED_ASSETS]
    return release
