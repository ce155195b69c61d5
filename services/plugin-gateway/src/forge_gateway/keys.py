"""Typed application keys of the gateway (kept apart from other services in `serve --all`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

if TYPE_CHECKING:
    from .delivery import DeliveryWorker
    from .manager import PluginManager

PLUGIN_MANAGER: web.AppKey[PluginManager] = web.AppKey("forge_gateway.plugin_manager")
DELIVERY_WORKER: web.AppKey[DeliveryWorker] = web.AppKey("forge_gateway.delivery_worker")
