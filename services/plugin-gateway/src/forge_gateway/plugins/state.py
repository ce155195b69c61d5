"""The states of a managed plugin (plugin.py has the transitions)."""

from __future__ import annotations

from enum import StrEnum


class PluginState(StrEnum):
    CONNECTING = "connecting"  # the first Initialize has not answered yet
    READY = "ready"  # initialized, manifest known, last health check fine
    UNHEALTHY = "unhealthy"  # initialized, but a health check failed (deadline, healthy=false)
    DOWN = "down"  # unreachable, or initializing again after a restart
    FAILED = "failed"  # Initialize said no, or the plugin offers no manifest
    REFUSED = "refused"  # its protocol version is below the minimum
    DISABLED = "disabled"  # `enabled: false` in PLUGINS_FILE: never called
    STOPPED = "stopped"  # the gateway shut down


# Initialized plugins: Shutdown is owed to them, health checks run instead of Initialize.
JOINED = frozenset({PluginState.READY, PluginState.UNHEALTHY})
