"""One OnEvent attempt and its verdict: what the delivery worker records for a call's outcome
(delivered, skipped, dead, retry after a jittered delay, or released without counting)."""

from __future__ import annotations

import random
from dataclasses import dataclass

import grpc
from plugin.v1 import plugin_pb2

from ..options import DeliveryOptions
from ..plugins.client import PluginDeadline, PluginFailed, PluginUnavailable, RpcNotSupported
from ..plugins.plugin import ManagedPlugin
from .models import Claimed, to_plugin_event

# A plugin that answers these will answer the same next time: retrying cannot help.
PERMANENT_CODES = frozenset(
    {
        grpc.StatusCode.UNIMPLEMENTED,
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.OUT_OF_RANGE,
        grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.ALREADY_EXISTS,
    }
)


@dataclass(frozen=True, slots=True)
class Verdict:
    """How an attempt ended, as `Outcome` records it (retry_in: seconds until due again)."""

    outcome: str
    error: str | None = None
    retry_in: float | None = None


async def attempt(plugin: ManagedPlugin, delivery: Claimed, options: DeliveryOptions) -> Verdict:
    """Call the plugin's OnEvent for `delivery` (unless its manifest does not want the type) and
    judge the answer."""
    manifest = plugin.manifest
    if manifest is not None and not manifest.subscribes(delivery.type):
        # Stored while the manifest was unknown; the plugin does not want this type.
        return Verdict("skipped")
    message = to_plugin_event(
        delivery.type,
        delivery.payload,
        delivery.occurred_at,
        delivery.repo_id,
        delivery.org_id,
        delivery.payload_struct,
    )
    metadata = (
        ("x-event-id", str(delivery.event_id)),
        ("x-delivery-id", str(delivery.id)),
        ("x-attempt", str(delivery.attempt)),
    )
    try:
        reply = await plugin.call("OnEvent", message, plugin_pb2.EventResponse, metadata=metadata)
    except PluginUnavailable:
        return Verdict("released", None, options.released_delay)
    except RpcNotSupported as error:
        return Verdict("dead", error.detail)
    except PluginDeadline as error:
        return retry(delivery, error.detail, options)
    except PluginFailed as error:
        if error.code in PERMANENT_CODES:
            return Verdict("dead", error.detail)
        return retry(delivery, error.detail, options)
    if reply.handled:
        return Verdict("delivered")
    return retry(delivery, reply.error or "not handled", options)


def retry(delivery: Claimed, error: str, options: DeliveryOptions) -> Verdict:
    """Due again after the schedule's delay for this attempt (±20 %), or a dead letter once
    `max_attempts` were made."""
    if delivery.attempt >= options.max_attempts:
        return Verdict("dead", f"{error} (after {delivery.attempt} attempts)")
    schedule = options.retry_schedule
    base = schedule[min(delivery.attempt - 1, len(schedule) - 1)]
    return Verdict("retry", error, base * random.uniform(0.8, 1.2))
