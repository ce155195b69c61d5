"""Typed application keys of the gateway (kept apart from other services in `serve --all`)."""

from __future__ import annotations

from aiohttp import web

from .events.delivery import DeliveryWorker
from .options import Options
from .plugins.manager import PluginManager
from .release_health.collector import HealthCollector

OPTIONS = web.AppKey("forge_gateway.options", Options)
PLUGIN_MANAGER = web.AppKey("forge_gateway.plugin_manager", PluginManager)
DELIVERY_WORKER = web.AppKey("forge_gateway.delivery_worker", DeliveryWorker)
HEALTH_COLLECTOR = web.AppKey("forge_gateway.health_collector", HealthCollector)
