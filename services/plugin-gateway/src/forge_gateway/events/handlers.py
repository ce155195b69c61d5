"""Event ingest from the producers' relays, and the admin view of deliveries (dead letters and
redelivery)."""

from __future__ import annotations

import logging
import time

from aiohttp import web
from forge_common.auth import viewer_of
from forge_common.errors import AuthTokenMissing, InvalidInput, PermissionDenied
from forge_common.event_signature import SIGNATURE_HEADER, TIMESTAMP_HEADER, signature_problem
from forge_common.ids import positive_int64
from forge_common.keys import DB_POOL, SETTINGS
from forge_common.render import json_response

from ..errors import DeliveryNotFound, PluginNotFound, SignatureInvalid
from ..keys import DELIVERY_WORKER, OPTIONS, PLUGIN_MANAGER
from ..plugins.plugin import ManagedPlugin
from ..release_health import tracking
from . import queries
from .ingest import parse_batch
from .models import DeliveryRow

log = logging.getLogger(__name__)
STATUSES = frozenset({"pending", "delivered", "skipped", "dead"})
DEFAULT_LIMIT = 50
MAX_LIMIT = 500


async def receive_events(request: web.Request) -> web.Response:
    """`POST /internal/v1/events`: store each event once, one delivery per subscribed plugin."""
    body = await request.read()
    problem = signature_problem(
        request.app[SETTINGS].events_secret,
        request.headers.get(TIMESTAMP_HEADER),
        request.headers.get(SIGNATURE_HEADER),
        body,
        now=time.time(),
    )
    if problem is not None:
        log.warning("event ingest refused: %s", problem)
        raise SignatureInvalid()
    events = parse_batch(body, request.app[OPTIONS].delivery.max_batch)
    manager = request.app[PLUGIN_MANAGER]

    def targets(event_type: str) -> list[str]:
        # A plugin whose manifest is not known yet gets the delivery too; the worker skips it
        # if the plugin turns out not to subscribe. Nothing is lost while a plugin is down.
        return [
            p.name
            for p in manager
            if p.config.enabled and (p.manifest is None or p.manifest.subscribes(event_type))
        ]

    worker = request.app[DELIVERY_WORKER]
    stored = await worker.store_events(request.app[DB_POOL], events, targets)
    # Which rollout plans run (release_health/tracking.py): after the events, so a failure here
    # answers an error and the relay sends the batch again (stored events are not stored twice).
    await tracking.track(request.app[DB_POOL], events)
    return json_response({"accepted": stored.new, "duplicates": stored.duplicates}, status=202)


async def list_deliveries(request: web.Request) -> web.Response:
    """`GET /api/v1/admin/plugins/{plugin}/deliveries?status=dead&limit=50`, newest first."""
    plugin = _admin_plugin(request)
    status = request.query.get("status") or None
    if status is not None and status not in STATUSES:
        raise InvalidInput(f"status must be one of {', '.join(sorted(STATUSES))}")
    limit = _limit(request.query.get("limit"))
    rows = await queries.list_deliveries(request.app[DB_POOL], plugin.name, status, limit)
    return json_response([_delivery_json(r) for r in rows])


async def get_delivery(request: web.Request) -> web.Response:
    """`GET /api/v1/admin/plugins/{plugin}/deliveries/{id}`: a delivery and all its attempts."""
    plugin = _admin_plugin(request)
    found = await queries.delivery_with_attempts(
        request.app[DB_POOL], plugin.name, _delivery_id(request)
    )
    if found is None:
        raise DeliveryNotFound()
    delivery, attempts = found
    return json_response(
        {
            **_delivery_json(delivery),
            "attempt_log": [
                {
                    "attempt": a.attempt,
                    "started_at": a.started_at,
                    "finished_at": a.finished_at,
                    "outcome": a.outcome,
                    "error": a.error,
                }
                for a in attempts
            ],
        }
    )


def _delivery_json(r: DeliveryRow) -> dict[str, object]:
    return {
        "id": r.id,
        "event_id": str(r.event_id),
        "event_type": r.event_type,
        "status": r.status,
        "attempts": r.attempts,
        "next_attempt_at": r.next_attempt_at if r.status == "pending" else None,
        "last_error": r.last_error,
        "created_at": r.created_at,
        "finished_at": r.finished_at,
    }


def _limit(raw: str | None) -> int:
    """`?limit=`: 1 to MAX_LIMIT, else 400 (its length is bounded before any conversion)."""
    if raw is None:
        return DEFAULT_LIMIT
    value = positive_int64(raw)
    if value is None or value > MAX_LIMIT:
        raise InvalidInput(f"limit must be a whole number from 1 to {MAX_LIMIT}")
    return value


def _delivery_id(request: web.Request) -> int:
    """The path's delivery id: a positive int64 (ids start at 1), or 404."""
    delivery_id = positive_int64(request.match_info["id"])
    if delivery_id is None:
        raise DeliveryNotFound()
    return delivery_id


async def redeliver_all(request: web.Request) -> web.Response:
    """`POST /api/v1/admin/plugins/{plugin}/deliveries/redeliver`: every dead letter again."""
    plugin = _admin_plugin(request)
    count = await queries.redeliver(request.app[DB_POOL], plugin.name, None)
    return json_response({"redelivered": count}, status=202)


async def redeliver_one(request: web.Request) -> web.Response:
    """`POST /api/v1/admin/plugins/{plugin}/deliveries/{id}/redeliver`: one finished delivery
    again, a dead letter or a replay (404 when there is no such finished delivery)."""
    plugin = _admin_plugin(request)
    count = await queries.redeliver(request.app[DB_POOL], plugin.name, _delivery_id(request))
    if not count:
        raise DeliveryNotFound()
    return json_response({"redelivered": count}, status=202)


def _admin_plugin(request: web.Request) -> ManagedPlugin:
    viewer = viewer_of(request)
    if viewer is None:
        raise AuthTokenMissing()
    if not viewer.is_admin:
        raise PermissionDenied("Only site administrators can manage plugins")
    plugin = request.app[PLUGIN_MANAGER].get(request.match_info["plugin"])
    if plugin is None:
        raise PluginNotFound()
    return plugin
