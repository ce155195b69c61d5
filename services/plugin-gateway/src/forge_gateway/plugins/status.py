"""The admin view of a plugin (`GET /api/v1/admin/plugins`).

The plugin's `config` values are left out on purpose: they often hold credentials. Operators see
only which keys are set.
"""

from __future__ import annotations

from typing import Any

from .plugin import ManagedPlugin


def plugin_status(plugin: ManagedPlugin) -> dict[str, Any]:
    config = plugin.config
    return {
        "name": plugin.name,
        "address": config.address,
        "enabled": config.enabled,
        "tls": config.tls is not None,
        "state": str(plugin.state),
        "error": plugin.error,
        "reported_protocol_version": plugin.reported_version,
        "negotiated_protocol_version": plugin.negotiated_version,
        "initialized_at": plugin.initialized_at,
        "initialize_count": plugin.initialize_count,
        "manifest": plugin.manifest.to_json() if plugin.manifest else None,
        "health": plugin.health.to_json() if plugin.health else None,
        "breaker": plugin.breaker.snapshot(),
        "config_keys": sorted(config.config),
        "timeouts": {
            "Initialize": config.timeouts.initialize,
            "Shutdown": config.timeouts.shutdown,
            "HealthCheck": config.timeouts.health_check,
            "GetManifest": config.timeouts.get_manifest,
            "OnEvent": config.timeouts.on_event,
            "HandleHTTP": config.timeouts.handle_http,
            "GetReleaseHealth": config.timeouts.get_release_health,
        },
        "health_repositories": list(config.health_repositories),
    }
