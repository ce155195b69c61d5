"""Delivery workers: OnEvent for every stored delivery, at least once, isolated per plugin.

Each gateway process runs one `DeliveryWorker`. It claims due deliveries of each plugin that can
take calls (ready, circuit closed) up to that plugin's free slots, so a slow plugin fills only its
own slots; calls OnEvent outside any transaction with `x-event-id`, `x-delivery-id` and
`x-attempt` metadata; and records the outcome. Transient failures retry on a jittered schedule,
permanent ones become dead letters at once. NOTIFY, through the application's shared
`Notifications`, wakes the worker; polling is the fallback. Several replicas share the work
through FOR UPDATE SKIP LOCKED and leases.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
import uuid
from collections import Counter

import asyncpg
import grpc
from forge_common.notifications import Notifications, Subscription
from plugin.v1 import plugin_pb2

from ..options import DeliveryOptions
from ..plugins.client import PluginDeadline, PluginFailed, PluginUnavailable, RpcNotSupported
from ..plugins.manager import PluginManager
from ..plugins.plugin import ManagedPlugin
from ..plugins.state import PluginState
from . import store
from .models import to_plugin_event
from .store import Claimed

log = logging.getLogger(__name__)

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


class DeliveryWorker:
    def __init__(
        self, manager: PluginManager, options: DeliveryOptions, *, owner: str | None = None
    ) -> None:
        self.manager = manager
        self.options = options
        self.owner = owner or f"gateway-{uuid.uuid4().hex[:12]}"
        self.in_flight: Counter[str] = Counter()
        self._wake = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self._runner: asyncio.Task[None] | None = None
        self.pool: asyncpg.Pool
        self._notifications: Notifications | None = None
        self._subscription: Subscription | None = None

    async def start(self, pool: asyncpg.Pool, notifications: Notifications | None = None) -> None:
        """Start claiming from `pool`; with `notifications`, NOTIFY wakes the worker too."""
        self.pool = pool
        if notifications is not None and self._subscription is None:
            self._notifications = notifications
            self._subscription = await notifications.subscribe(
                store.NOTIFY_CHANNEL,
                lambda _payload: self.wake(),
                # Back to listening: deliveries stored meanwhile were not announced; claim now.
                on_state=lambda listening: self.wake() if listening else None,
            )
        self._runner = asyncio.create_task(self._run(), name="delivery-worker")

    async def stop(self) -> None:
        """Stop claiming; calls in flight are cancelled and their leases simply expire."""
        if self._runner is not None:
            self._runner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._runner
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        notifications, subscription = self._notifications, self._subscription
        self._notifications = self._subscription = None
        if notifications is not None and subscription is not None:
            await notifications.unsubscribe(subscription)

    def wake(self) -> None:
        self._wake.set()

    async def _run(self) -> None:
        next_prune = time.monotonic()
        while True:
            try:
                if time.monotonic() >= next_prune:
                    next_prune = time.monotonic() + self.options.prune_interval
                    pruned = await store.prune(self.pool, self.options.retention_days)
                    if pruned:
                        log.info("pruned %d finished event(s)", pruned)
                await self.claim_round()
            except asyncio.CancelledError:
                raise
            except Exception:  # the database may be restarting: poll again later
                log.exception("delivery worker: claiming failed")
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.options.poll_interval):
                    await self._wake.wait()
            self._wake.clear()

    async def claim_round(self) -> int:
        """Claim and start deliveries for every plugin that can take calls; how many started."""
        started = 0
        for plugin in self.manager:
            if plugin.state is not PluginState.READY or not plugin.breaker.allows_calls():
                continue  # deliveries wait without spending attempts
            free = self.options.concurrency - self.in_flight[plugin.name]
            if free <= 0:
                continue
            lease = plugin.config.timeouts.on_event + self.options.lease_margin
            for delivery in await store.claim(self.pool, plugin.name, free, self.owner, lease):
                self.in_flight[plugin.name] += 1
                task = asyncio.create_task(self._deliver(plugin, delivery))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
                started += 1
        return started

    async def _deliver(self, plugin: ManagedPlugin, delivery: Claimed) -> None:
        try:
            await self._attempt(plugin, delivery)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("delivery %d to %s failed unexpectedly", delivery.id, plugin.name)
        finally:
            self.in_flight[plugin.name] -= 1
            self._wake.set()  # a slot is free

    async def _attempt(self, plugin: ManagedPlugin, delivery: Claimed) -> None:
        manifest = plugin.manifest
        if manifest is not None and not manifest.subscribes(delivery.type):
            # Stored while the manifest was unknown; the plugin does not want this type.
            await store.finish(self.pool, delivery, self.owner, outcome="skipped")
            return
        message = to_plugin_event(
            delivery.type,
            delivery.payload,
            delivery.occurred_at,
            delivery.repo_id,
            delivery.org_id,
        )
        metadata = (
            ("x-event-id", str(delivery.event_id)),
            ("x-delivery-id", str(delivery.id)),
            ("x-attempt", str(delivery.attempt)),
        )
        try:
            reply = await plugin.call(
                "OnEvent", message, plugin_pb2.EventResponse, metadata=metadata
            )
        except PluginUnavailable:
            await self._finish(delivery, "released", None, self.options.released_delay)
            return
        except RpcNotSupported as error:
            await self._finish(delivery, "dead", error.detail)
            return
        except PluginDeadline as error:
            await self._retry(delivery, error.detail)
            return
        except PluginFailed as error:
            if error.code in PERMANENT_CODES:
                await self._finish(delivery, "dead", error.detail)
            else:
                await self._retry(delivery, error.detail)
            return
        if reply.handled:
            await self._finish(delivery, "delivered", None)
        else:
            await self._retry(delivery, reply.error or "not handled")

    async def _retry(self, delivery: Claimed, error: str) -> None:
        if delivery.attempt >= self.options.max_attempts:
            await self._finish(delivery, "dead", f"{error} (after {delivery.attempt} attempts)")
            return
        schedule = self.options.retry_schedule
        base = schedule[min(delivery.attempt - 1, len(schedule) - 1)]
        await self._finish(delivery, "retry", error, base * random.uniform(0.8, 1.2))

    async def _finish(
        self, delivery: Claimed, outcome: str, error: str | None, retry_in: float | None = None
    ) -> None:
        kept = await store.finish(
            self.pool, delivery, self.owner, outcome=outcome, error=error, retry_in=retry_in
        )
        if not kept:
            log.warning("delivery %d: lease lost before recording %s", delivery.id, outcome)
        elif outcome == "dead":
            log.error(
                "delivery %d of event %s to %s is a dead letter: %s",
                delivery.id,
                delivery.event_id,
                delivery.plugin,
                error,
            )
