"""The gateway's tuning knobs (`Options`): frozen, production defaults, given to `create_app`.

`forge serve` uses the defaults; tests pass shorter intervals. The plugins themselves come from
PLUGINS_FILE (plugins/config.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from forge_common.config import Settings

from .plugins.versions import MIN_PROTOCOL_VERSION, PROTOCOL_VERSION, RPC_MIN_VERSION

MiB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class BreakerOptions:
    """When a plugin's circuit opens, and how long it stays open before a HealthCheck probe."""

    window: int = 20  # the last N call outcomes considered
    min_calls: int = 5  # no verdict on fewer outcomes than this
    failure_rate: float = 0.5  # open at this share of failed (or slow) calls in the window
    slow_call_seconds: float = 5.0  # a call slower than this counts as failed
    health_failures: int = 1  # open after this many failed health checks in a row
    open_seconds: float = 10.0  # then half-open: one HealthCheck probe decides


@dataclass(frozen=True, slots=True)
class DeliveryOptions:
    """Event delivery: polling fallback, per-plugin concurrency, retries (docs/events.md
    "Delivery")."""

    poll_interval: float = 1.0  # LISTEN/NOTIFY wakes workers sooner; this is the fallback
    # OnEvent calls in flight per plugin unless its PLUGINS_FILE entry sets `max_in_flight`: a
    # slow plugin only fills its own. 64, not 16 (nor 4 before that): a gRPC channel multiplexes
    # them, and the more calls share each read, write and wake-up, the less each costs the
    # gateway and the plugin; a 5,000-event backlog went out at ~4,400 events/s instead of
    # ~3,400-4,000 (bench/RESULTS.md "Events: plans, foreign keys and 64 calls in flight").
    # A plugin that wants fewer says so in the file.
    concurrency: int = 64
    # Seconds before attempt 2, 3, ...: seconds, then minutes, then hours; the last one repeats.
    retry_schedule: tuple[float, ...] = (5, 30, 120, 600, 1800, 3600, 3 * 3600, 6 * 3600)
    max_attempts: int = 12  # then the delivery is a dead letter
    # A claim is leased this long and renewed every `heartbeat_interval` while its worker holds
    # it, so the deliveries of a killed worker are due again within `lease_seconds`.
    lease_seconds: float = 10.0
    heartbeat_interval: float = 2.0
    # Claimed in one statement: the free slots plus this many seconds of the plugin's recent
    # throughput, at most `claim_batch`; queued claims wait for a slot of their plugin.
    claim_batch: int = 200
    prefetch_seconds: float = 1.0
    # Outcomes are recorded together, one statement per batch: after the first outcome the
    # recorder waits this long for the calls finishing meanwhile, up to `outcome_batch` of them.
    # Statements of ~130 outcomes took PostgreSQL about half the time per outcome of statements of
    # ~15 (bench/RESULTS.md "Events: profile and batching"); the wait delays only the
    # bookkeeping, not calls or slots. A statement records at most `outcome_batch`, and while that
    # many wait no call starts: a slow database slows the calls down instead of collecting
    # outcomes until a statement times out.
    outcome_linger: float = 0.02
    outcome_batch: int = 500
    # The worker's own pool, apart from the one HTTP handlers (ingest, admin API) use: four tasks
    # (the claim under way; the run loop's hand-backs and pruning; outcomes; the lease heartbeat)
    # each run one statement at a time, so with four connections none waits for another, and a
    # backlog cannot take the API's connections.
    pool_size: int = 4
    # After a failed outcome statement the outcomes are kept (their leases renewed) and recorded
    # again after this long, doubling up to `outcome_retry_max`: dropping them would let their
    # leases lapse and the deliveries be called again.
    outcome_retry_initial: float = 0.2
    outcome_retry_max: float = 5.0
    # A stopping worker lets calls in flight finish this long, then records them as interrupted.
    stop_grace: float = 2.0
    released_delay: float = 1.0  # when a claimed delivery's plugin turned out unavailable
    max_batch: int = 500  # events in one ingest request
    retention_days: float = 7.0  # finished events are pruned after this
    prune_interval: float = 3600.0


@dataclass(frozen=True, slots=True)
class ReleaseHealthOptions:
    """Asking plugins for release health figures (release_health/collector.py, docs/rollouts.md
    "From a plugin")."""

    # Seconds between two rounds of one plugin, across all replicas: each round asks it once per
    # running plan of a repository granted to it. PLUGIN_HEALTH_SECONDS sets it for a process.
    interval: float = 60.0
    # How often each replica looks whether a round is due (a statement per plugin that asks for
    # release:health); a round starts within about this long of its due time.
    poll_interval: float = 5.0


@dataclass(frozen=True, slots=True)
class Options:
    """Tuning knobs of plugin connections, supervision and HTTP bodies; delivery's are nested."""

    health_interval: float = 5.0
    # Plugin join attempts (Initialize) back off from `retry_initial` to `retry_max` seconds.
    retry_initial: float = 0.5
    retry_max: float = 30.0
    # gRPC's own reconnect backoff; its default maximum of 120 s would delay a plugin's return.
    reconnect_initial: float = 0.2
    # 0.5 s, not 1: a plugin back from a restart must be re-initialized within 2 s
    # (docs/decisions.md "Other targets"), and a reconnect attempt (one TCP connect) every half
    # second costs a stopped plugin nothing.
    reconnect_max: float = 0.5
    # How long one connection attempt may take (TCP, TLS, the server's first HTTP/2 frame). gRPC
    # reads it from `grpc.min_reconnect_backoff_ms`, despite the name; set to the backoff above,
    # it gave a plugin 0.2-0.5 s, and one behind a slow link or a busy host never joined
    # (docs/plugins.md "Connections").
    connect_timeout: float = 5.0
    # How long start-up waits for plugins' first Initialize before serving anyway.
    startup_wait: float = 5.0
    # gRPC's 4 MiB default breaks large bodies; both directions are raised to this.
    max_message_bytes: int = 32 * MiB
    # HandleHTTP bodies are capped below the message limit (the rest of the message needs room).
    max_http_body_bytes: int = 30 * MiB
    breaker: BreakerOptions = field(default_factory=BreakerOptions)
    delivery: DeliveryOptions = field(default_factory=DeliveryOptions)
    release_health: ReleaseHealthOptions = field(default_factory=ReleaseHealthOptions)
    # The protocol this gateway speaks and accepts; tests play a future gateway by raising them.
    protocol_version: int = PROTOCOL_VERSION
    min_protocol_version: int = MIN_PROTOCOL_VERSION
    rpc_versions: Mapping[str, int] = field(default_factory=lambda: RPC_MIN_VERSION)


def with_settings(options: Options, settings: Settings) -> Options:
    """`options` with what the environment sets over them: PLUGIN_HEALTH_SECONDS (a process
    started as `forge serve` has no other way to be tuned)."""
    seconds = settings.plugin_health_seconds
    if seconds is None:
        return options
    health = ReleaseHealthOptions(
        interval=seconds, poll_interval=min(options.release_health.poll_interval, seconds)
    )
    return replace(options, release_health=health)
