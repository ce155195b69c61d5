"""Typed application keys of the releases service (its state in a shared `forge serve --all`)."""

from __future__ import annotations

from aiohttp import web

from .counter import DownloadCounter
from .insights.counter import InsightsCounter
from .options import Options
from .read.cache import ReleaseCache
from .storage import Storage

OPTIONS = web.AppKey("releases_options", Options)
RELEASE_CACHE = web.AppKey("releases_cache", ReleaseCache)
DOWNLOAD_COUNTER = web.AppKey("releases_download_counter", DownloadCounter)
INSIGHTS = web.AppKey("releases_insights", InsightsCounter)
STORAGE = web.AppKey("releases_storage", Storage)
