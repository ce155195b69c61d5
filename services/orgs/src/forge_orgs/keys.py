"""Typed application keys of the orgs service (its state in a shared `forge serve --all`)."""

from __future__ import annotations

from aiohttp import web

from .options import Options

OPTIONS = web.AppKey("orgs_options", Options)
