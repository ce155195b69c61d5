"""Typed application keys of the releases service (its state in a shared `forge serve --all`)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from aiohttp import web

from .counter import DownloadCounter
from .options import Options
from .read.cache import ReleaseCache
from .storage import Storage

if TYPE_CHECKING:  # insights counts the feeds' answers, and the feeds count through this key
    from .insights.counter import InsightsCounter

OPTIONS = web.AppKey("releases_options", Options)
RELEASE_CACHE = web.AppKey("releases_cache", ReleaseCache)
DOWNLOAD_COUNTER = web.AppKey("releases_download_counter", DownloadCounter)
INSIGHTS: web.AppKey[InsightsCounter] = web.AppKey("releases_insights")
STORAGE = web.AppKey("releases_storage", Storage)
# the audit log's pruning task (audit_log/lifecycle.py): a test stops it to prune by itself
AUDIT_PRUNING = web.AppKey("releases_audit_pruning", asyncio.Task[None])
