"""Keeping one plugin joined: when to join, when to check its health, and noticing a lost
connection.

The supervisor retries joining with jittered backoff while the plugin is down, failed or refused
(it may be fixed or upgraded), checks health on an interval (sooner when the circuit turns
half-open), and has the plugin join again when its connection leaves READY (it may have
restarted). It only calls the plugin's methods: what an exchange does is handshake.py, what its
outcome means for the plugin is plugin.py.
"""

from __future__ import annotations

import asyncio
import logging

import grpc
from forge_common.backoff import Backoff

from .client import PluginClient
from .handshake import check_health, join
from .plugin import ManagedPlugin
from .state import JOINED

log = logging.getLogger(__name__)

# While a plugin is down its backoff may grow to `retry_max`; meanwhile its channel is asked this
# often whether it reconnected (gRPC keeps reconnecting with its own, shorter, backoff): a plugin
# that is back is joined within about this long plus gRPC's reconnect delay.
PROBE_INTERVAL = 0.25


class Supervisor:
    def __init__(self, plugin: ManagedPlugin) -> None:
        self.plugin = plugin
        self._connection_lost = False
        # Jitter: replicas that lost a plugin together do not knock in step.
        self._backoff = Backoff(plugin.options.retry_initial, plugin.options.retry_max, jitter=0.2)

    async def run(self) -> None:
        """Supervise a connected plugin until cancelled."""
        client = self.plugin.client
        assert client is not None, "connect the plugin first"
        await asyncio.gather(self._supervise(client), self._watch_channel(client))

    async def _supervise(self, client: PluginClient) -> None:
        while True:
            try:
                await self._supervise_once(client)
            except asyncio.CancelledError:
                raise
            except Exception:  # a bug here must not leave the plugin unsupervised for good
                log.exception("plugin %s: supervisor error", self.plugin.name)
                self.plugin.mark_down("internal error in the gateway; retrying")
                await self._back_off()

    async def _supervise_once(self, client: PluginClient) -> None:
        """One round: join if needed (backing off on failure), then wait and check health."""
        plugin = self.plugin
        if plugin.state not in JOINED:
            outcome = await join(client, plugin.options, plugin.server_version)
            if not plugin.record_join(outcome):
                await self._back_off()
                return
            self._backoff.reset()
        await plugin.wait_unless_woken(self._health_wait())
        if self._connection_lost:
            self._connection_lost = False
            plugin.mark_down("connection lost; initializing again")
            return
        result, unreachable = await check_health(client, plugin.clock)
        plugin.record_health(result, unreachable=unreachable)

    async def _watch_channel(self, client: PluginClient) -> None:
        """A joined plugin whose connection leaves READY may have restarted: join again."""
        channel = client.channel
        state = channel.get_state()
        while True:
            await channel.wait_for_state_change(state)
            new = channel.get_state()
            ready = grpc.ChannelConnectivity.READY
            if state is ready and new is not ready and self.plugin.state in JOINED:
                self._connection_lost = True
                self.plugin.wake()
            state = new

    async def _back_off(self) -> None:
        """Wait the backoff's delay, or until woken; when the plugin was unreachable, also cut
        short as soon as its channel is READY again (a plugin that answered and failed keeps
        its full delay)."""
        delay = self._backoff.next()
        self.plugin.retry_join_in(delay)
        client = self.plugin.client
        if client is None or self._reconnected(client):
            await self.plugin.wait_unless_woken(delay)
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + delay
        while (left := deadline - loop.time()) > 0:
            pause = min(PROBE_INTERVAL, left)
            began = loop.time()
            await self.plugin.wait_unless_woken(pause)
            woken = loop.time() - began < pause * 0.9
            if woken or self._reconnected(client):
                self.plugin.retry_join_in(0)
                return

    @staticmethod
    def _reconnected(client: PluginClient) -> bool:
        """The channel is READY; an idle one is nudged to connect (and asked again next time)."""
        ready = grpc.ChannelConnectivity.READY
        return client.channel.get_state(try_to_connect=True) is ready

    def _health_wait(self) -> float:
        interval = self.plugin.options.health_interval
        breaker = self.plugin.breaker
        if not breaker.allows_calls():
            # Probe as soon as the circuit turns half-open rather than a full interval later.
            return min(interval, breaker.seconds_until_probe() + 0.01)
        return interval
