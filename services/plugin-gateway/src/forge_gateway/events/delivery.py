"""Delivery workers: OnEvent for every stored delivery, at least once, isolated per plugin.

Each gateway process runs one `DeliveryWorker`. For each plugin that can take calls (ready,
circuit closed) it claims due deliveries in one statement, as many as the plugin's free slots
plus about a second of its recent throughput (at most `claim_batch`), keeps them in a queue of
that plugin's own, and starts OnEvent calls from it up to the plugin's cap (`max_in_flight` in
PLUGINS_FILE, else `DeliveryOptions.concurrency`), so a slow plugin
fills only its own slots. Calls run outside any transaction with `x-event-id`, `x-delivery-id` and
`x-attempt` metadata; their outcomes (and attempts) are recorded together, one statement for
whatever finished meanwhile. Leases are short and renewed by a heartbeat while held, so a killed
worker's deliveries are due again within `lease_seconds`; a stopping worker hands back what it has
not started and records what it interrupts. Transient failures retry on a jittered schedule,
permanent ones become dead letters at once. NOTIFY, through the application's shared
`Notifications`, wakes the worker; polling is the fallback. Several replicas share the work
through FOR UPDATE SKIP LOCKED and leases.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import uuid
from collections import Counter, deque
from collections.abc import Callable, Sequence

import asyncpg
from forge_common import tasks
from forge_common.notifications import Notifications, Subscription
from forge_common.outage import DATABASE, Dependency, is_database_down, round_failed

from ..options import DeliveryOptions
from ..plugins.manager import PluginManager
from ..plugins.plugin import ManagedPlugin
from ..plugins.state import PluginState
from . import queries
from .attempts import attempt
from .counts import DeliveryCounts, Throughput
from .models import Claimed, IncomingEvent, Leases, Outcome, Stored
from .outcomes import OutcomeRecorder

log = logging.getLogger(__name__)

INTERRUPTED = "interrupted: the gateway stopped during the call"


class DeliveryWorker:
    def __init__(
        self, manager: PluginManager, options: DeliveryOptions, *, owner: str | None = None
    ) -> None:
        self.manager = manager
        self.options = options
        # The host and pid tell an operator which replica holds a lease; the random part keeps a
        # restarted process that got the same pid from taking over its predecessor's leases.
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.in_flight: Counter[str] = Counter()
        self._queues: dict[str, deque[Claimed]] = {}
        self._calling: dict[asyncio.Task[None], Claimed] = {}
        self._claiming: asyncio.Task[None] | None = None  # the claim under way (one at a time)
        # A round wanted a claim while one was under way: that claim may have read the table
        # before what woke the round (a NOTIFY), so another round follows it.
        self._claim_again = False
        self._throughput = Throughput()
        self._reserved: Counter[str] = Counter()  # leases of ingests under way, per plugin
        self._claim_wants: Counter[str] = Counter()  # what the claim under way asks, per plugin
        # Per plugin: may due deliveries wait in the table? Unknown (so yes) until a claim finds
        # fewer than it asked for; yes again once an ingest stores some without a lease.
        self._backlog: dict[str, bool] = {}
        self._left_unleased: Counter[str] = Counter()  # ingests that left some, per plugin
        self._slots: set[asyncio.Task[None]] = set()  # calls holding a slot of their plugin
        self._wake = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self._runner: asyncio.Task[None] | None = None
        self._heart: asyncio.Task[None] | None = None
        self._recorder: asyncio.Task[None] | None = None
        self.pool: asyncpg.Pool
        self._notifications: Notifications | None = None
        self._subscription: Subscription | None = None
        for plugin in manager:  # a plugin back from an outage gets its backlog at once
            plugin.on_ready.append(self.wake)
        self.database = Dependency(DATABASE)  # the app's (lifecycle.py): an outage logged once
        self.counts = DeliveryCounts()  # read at scrape time (forge_gateway/metrics.py)
        self.outcomes = OutcomeRecorder(
            options,
            self.owner,
            failed=self._failed,
            succeeded=self.database.succeeded,
            recorded=self._wake.set,
        )

    async def start(self, pool: asyncpg.Pool, notifications: Notifications | None = None) -> None:
        """Start claiming from `pool`; with `notifications`, NOTIFY wakes the worker too."""
        self.pool = self.outcomes.pool = pool
        if notifications is not None and self._subscription is None:
            self._notifications = notifications
            self._subscription = await notifications.subscribe(
                queries.NOTIFY_CHANNEL,
                lambda _payload: self.wake(),
                # Back to listening: deliveries stored meanwhile were not announced; claim now.
                on_state=lambda listening: self.wake() if listening else None,
            )
        self._recorder = asyncio.create_task(self.outcomes.run(), name="delivery-outcomes")
        self._heart = asyncio.create_task(self._heartbeat(), name="delivery-heartbeat")
        self._runner = asyncio.create_task(self._run(), name="delivery-worker")

    async def stop(self) -> None:
        """Stop claiming; hand back what was claimed but not started, give calls in flight
        `stop_grace` seconds, then cancel them and record them as interrupted (due again at
        once), so no lease is left to expire."""
        await _cancel(self._runner)
        self._runner = None
        # Claims under way are let finish (a cancelled one could lease rows nobody receives).
        if self._claiming is not None:
            await asyncio.gather(self._claiming, return_exceptions=True)
        queued = [d for queue in self._queues.values() for d in queue]
        self._queues.clear()
        with contextlib.suppress(Exception):
            await queries.hand_back(self.pool, self.owner, [d.id for d in queued])
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=self.options.stop_grace)
        interrupted = list(self._calling.values())
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.outcomes.drain()  # outcomes of the calls that finished
        if interrupted:
            outcomes = [Outcome(d, "retry", INTERRUPTED, 0.0) for d in interrupted]
            with contextlib.suppress(Exception):
                await queries.finish_many(self.pool, self.owner, outcomes)
        await _cancel(self._heart)
        await _cancel(self._recorder)
        self._heart = self._recorder = None
        notifications, subscription = self._notifications, self._subscription
        self._notifications = self._subscription = None
        if notifications is not None and subscription is not None:
            await notifications.unsubscribe(subscription)

    def wake(self) -> None:
        self._wake.set()

    @property
    def claim_under_way(self) -> bool:
        return self._claiming is not None

    async def _run(self) -> None:
        next_prune = time.monotonic()
        while True:
            # Cleared before the round: a wake-up during it starts another one.
            self._wake.clear()
            try:
                if time.monotonic() >= next_prune:
                    next_prune = time.monotonic() + self.options.prune_interval
                    pruned = await queries.prune(self.pool, self.options.retention_days)
                    if pruned:
                        log.info("pruned %d finished event(s)", pruned)
                # No success is reported here: the claims run in the background and report
                # their own (a round that touched no table says nothing about the database).
                await self.claim_round()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the database may be restarting: poll again later
                await self._failed(exc, "delivery worker: claiming failed")
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.options.poll_interval):
                    await self._wake.wait()

    async def claim_round(self) -> int:
        """Start calls to every plugin that can take calls from what it has claimed, and claim
        ahead in the background for the plugins that need it (one task, one plugin after the
        other, as rounds did before); how many calls started.

        Calls start before any claim and never wait for one: a claim is a round trip to
        PostgreSQL, slow on a busy host, and slots left empty meanwhile cost throughput."""
        started = 0
        wanted: list[tuple[str, int]] = []
        for plugin in self.manager:
            queue = self._queues.setdefault(plugin.name, deque())
            if plugin.state is not PluginState.READY or not plugin.breaker.allows_calls():
                if queue:  # deliveries wait without spending attempts
                    held = [d.id for d in queue]
                    queue.clear()
                    await queries.hand_back(self.pool, self.owner, held)
                continue
            started += self._start_queued(plugin, queue)
            if self.unrecorded() >= self.options.outcome_batch:
                continue  # the recorder is behind: see `unrecorded`
            free = self.cap(plugin) - self.in_flight[plugin.name]
            ahead = int(self._throughput.per_second(plugin.name) * self.options.prefetch_seconds)
            want = min(self.options.claim_batch, free + ahead)
            # what an ingest is leasing to this worker now counts as queued already
            queued = len(queue) + self._reserved[plugin.name]
            if (queued < free or queued * 2 <= want) and want > queued:
                wanted.append((plugin.name, want - queued))
        if wanted and self._claiming is None:
            self._claiming = asyncio.create_task(self._claim(wanted))
        elif wanted:
            self._claim_again = True
        return started

    async def store_events(
        self,
        pool: asyncpg.Pool,
        events: Sequence[IncomingEvent],
        targets: Callable[[str], Sequence[str]],
    ) -> Stored:
        """Store an ingest's events (queries.store_events), leasing to this worker the fresh
        deliveries it can start soon, so they need no claim (docs/events.md "Leased at
        ingest"); what it leases is queued here, as a claim's would be."""
        quota = self._ingest_quota(len(events))
        self._reserved.update(quota)
        try:
            leases = Leases(self.owner, self.options.lease_seconds, quota)
            stored = await queries.store_events(pool, events, targets, leases)
        finally:
            self._reserved.subtract(quota)
        for plugin in stored.unleased:
            self._backlog[plugin] = True
            self._left_unleased[plugin] += 1
        if stored.leased and self._runner is None:  # stopped meanwhile: due again at once
            await queries.hand_back(pool, self.owner, [d.id for d in stored.leased])
        elif stored.leased:
            for delivery in stored.leased:
                self._queues.setdefault(delivery.plugin, deque()).append(delivery)
            self._wake.set()
        return stored

    def _ingest_quota(self, most: int) -> dict[str, int]:
        """How many of an ingest's fresh deliveries (at most `most`) each plugin's queue can
        take: its free slots and `prefetch_seconds` of the most it finished in a second over the
        last minute, less what is queued, asked by the claim under way or reserved by ingests
        under way. None for a plugin
        with older deliveries waiting in the table (claims take those first, in order), nor
        while the worker is stopped or its outcomes are behind (see `unrecorded`)."""
        if self._runner is None or self.unrecorded() >= self.options.outcome_batch:
            return {}
        quota: dict[str, int] = {}
        for plugin in self.manager:
            if plugin.state is not PluginState.READY or not plugin.breaker.allows_calls():
                continue
            if self._backlog.get(plugin.name, True):
                continue
            held = (
                len(self._queues.get(plugin.name, ()))
                + self._reserved[plugin.name]
                + self._claim_wants[plugin.name]
            )
            free = self.cap(plugin) - self.in_flight[plugin.name]
            ahead = int(self._throughput.peak(plugin.name) * self.options.prefetch_seconds)
            room = min(most, free + ahead - held)
            if room > 0:
                quota[plugin.name] = room
        return quota

    def _start_queued(self, plugin: ManagedPlugin, queue: deque[Claimed]) -> int:
        started, cap, most = 0, self.cap(plugin), self.options.outcome_batch
        while queue and self.in_flight[plugin.name] < cap and self.unrecorded() < most:
            self._start(plugin, queue.popleft())
            started += 1
        return started

    async def _claim(self, wanted: list[tuple[str, int]]) -> None:
        """Claim for each (plugin, how many), into its queue; the worker is woken to start the
        calls. A failed claim wakes nobody: the next poll tries again (the database may be
        down). What it asks counts as held until it is in the queue, or an ingest running
        meanwhile would lease the same free slots again."""
        claimed_any = False
        self._claim_wants.update(dict(wanted))
        try:
            for plugin, limit in wanted:
                lease, held = self.options.lease_seconds, self._held()
                ingests = self._left_unleased[plugin]
                claimed = await queries.claim(self.pool, plugin, limit, self.owner, lease, held)
                self._claim_wants[plugin] -= limit
                # A full claim: maybe more. An ingest that left some meanwhile: maybe after
                # the claim's snapshot.
                full = len(claimed) >= limit
                self._backlog[plugin] = full or self._left_unleased[plugin] != ingests
                if claimed:
                    self._queues.setdefault(plugin, deque()).extend(claimed)
                    claimed_any = True
        except Exception as exc:
            await self._failed(exc, "delivery worker: claiming failed")
            return
        finally:
            self._claiming = None
            self._claim_wants.clear()
            if claimed_any or self._claim_again:
                self._claim_again = False
                self._wake.set()
        self.database.succeeded()

    async def _failed(self, error: Exception, what: str) -> None:
        """A statement failed. When the database was out of reach, every connection of the
        worker's pool is replaced at once: after a restart each would otherwise fail once, one
        loop after the other, and the outage would be logged as over and back again each time."""
        if is_database_down(error):
            with contextlib.suppress(Exception):
                await self.pool.expire_connections()
        round_failed(self.database, error, what)

    def unrecorded(self) -> int:
        """Outcomes not recorded yet. Their deliveries are held (leases renewed) until they are;
        while `outcome_batch` or more wait, no call starts and nothing is claimed: calls could go
        on faster than a slow database records them, and every outcome waiting makes the next
        statement longer, until one outlasts its timeout (docs/events.md "Under overload")."""
        return self.outcomes.waiting()

    def cap(self, plugin: ManagedPlugin) -> int:
        """OnEvent calls in flight at once to `plugin`: its PLUGINS_FILE `max_in_flight`, else
        the gateway's default."""
        return plugin.config.max_in_flight or self.options.concurrency

    def _start(self, plugin: ManagedPlugin, delivery: Claimed) -> None:
        self.in_flight[plugin.name] += 1
        task = asyncio.create_task(self._deliver(plugin, delivery))
        self._calling[task] = delivery
        self._slots.add(task)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _deliver(self, plugin: ManagedPlugin, delivery: Claimed) -> None:
        task = asyncio.current_task()
        try:
            await self._attempt(plugin, delivery)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            await self._failed(exc, f"delivery {delivery.id} to {plugin.name} failed")
        finally:
            if task is not None:
                self._calling.pop(task, None)
            self._free_slot(delivery)

    def _free_slot(self, delivery: Claimed) -> None:
        """Once per call, when it ended (its outcome may still be being recorded)."""
        task = asyncio.current_task()
        if task not in self._slots:
            return
        self._slots.discard(task)
        self.in_flight[delivery.plugin] -= 1
        self._wake.set()  # a slot is free

    def _held(self) -> list[int]:
        return [d.id for q in self._queues.values() for d in q] + [
            d.id for d in self._calling.values()
        ]

    async def _heartbeat(self) -> None:
        """Renew the leases of everything held (queued or in a call), one statement a beat."""
        while True:
            await asyncio.sleep(self.options.heartbeat_interval)
            try:
                # A lease taken since the last beat is renewed at the next one.
                lease, beat = self.options.lease_seconds, self.options.heartbeat_interval
                ending = max(lease - beat, beat)
                await queries.renew(self.pool, self.owner, self._held(), lease, ending)
            except asyncio.CancelledError:
                raise
            except Exception as error:  # the leases may lapse; other workers then take over
                await self._failed(error, "delivery worker: renewing leases failed")

    async def _attempt(self, plugin: ManagedPlugin, delivery: Claimed) -> None:
        verdict = await attempt(plugin, delivery, self.options)
        await self._finish(delivery, verdict.outcome, verdict.error, verdict.retry_in)

    async def _finish(
        self, delivery: Claimed, outcome: str, error: str | None, retry_in: float | None = None
    ) -> None:
        self._throughput.add(delivery.plugin)
        self.counts.finished(delivery, outcome)
        done = self.outcomes.add(Outcome(delivery, outcome, error, retry_in or 0.0))
        self._free_slot(delivery)  # the call is over: the next one may start while this records
        kept = await done
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


async def _cancel(task: asyncio.Task[None] | None) -> None:
    if task is None:
        return
    await tasks.stop(task)
