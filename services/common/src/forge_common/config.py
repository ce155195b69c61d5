"""Settings read from the environment, once, by the entry point (`forge`).

Everything else receives a frozen `Settings` (or a service's own config built from it), so tests
build configurations directly and nothing reads `os.environ` behind the caller's back.
"""

from __future__ import annotations

import platform
import secrets
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from ipaddress import IPv4Network, IPv6Network, ip_network
from pathlib import Path

from .accounts.passwords import DEFAULT_PARAMETERS, Argon2Parameters

ProxyNetwork = IPv4Network | IPv6Network
# Every address: what the retired TRUST_FORWARDED_FOR=true meant (the peer is our nginx, whoever
# it is, and only its own entry is believed).
_ANY_PROXY: tuple[ProxyNetwork, ...] = (ip_network("0.0.0.0/0"), ip_network("::/0"))


class ConfigError(ValueError):
    """A setting has a value we cannot use; the message names the variable."""


@dataclass(frozen=True)
class S3Settings:
    """How to reach an S3-compatible store (the standard AWS variables). None: botocore's own
    defaults (its credential chain: profile, instance or pod role)."""

    endpoint_url: str | None = None
    region: str | None = None
    access_key_id: str | None = None
    secret_access_key: str | None = field(default=None, repr=False)
    session_token: str | None = field(default=None, repr=False)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> S3Settings:
        return cls(
            endpoint_url=env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL") or None,
            region=env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or None,
            access_key_id=env.get("AWS_ACCESS_KEY_ID") or None,
            secret_access_key=env.get("AWS_SECRET_ACCESS_KEY") or None,
            session_token=env.get("AWS_SESSION_TOKEN") or None,
        )


@dataclass(frozen=True)
class Settings:
    database_url: str
    app_url: str = "http://localhost:8080/"
    storage_path: Path = Path(".data/storage")
    # Asset storage (docs/storage.md): STORAGE_URL `file:///path` or `s3://bucket/prefix`; empty:
    # the folder storage_path. S3 downloads answer 302 to a presigned URL valid for
    # storage_presign_seconds unless storage_redirect is off (the bytes then pass through us).
    # storage_accel_prefix: behind nginx, folder downloads answer X-Accel-Redirect to this internal
    # location (deploy/nginx/forge.conf.template) and nginx sends the file.
    storage_url: str = ""
    storage_redirect: bool = True
    storage_presign_seconds: int = 300
    storage_accel_prefix: str | None = None
    s3: S3Settings = field(default_factory=S3Settings)
    plugins_file: Path | None = None
    gateway_url: str | None = None
    # No fixed secret anywhere (docs/decisions.md "Secrets"): unset, it is random per start.
    events_secret: str = field(default_factory=lambda: new_secret())
    max_body_bytes: int = 1024 * 1024
    # Seconds a request may take to send its whole body (uploads have their own idle limit):
    # a client that stalls after its headers holds a connection and a task only this long.
    body_read_timeout: float = 30.0
    max_upload_bytes: int = 4 * 1024 * 1024 * 1024
    # Connections `forge serve` holds for clients without nginx in front (docs/http.md "Slow
    # clients"): seconds a request head may take once its first byte arrived, and an idle
    # keep-alive connection stays open (above nginx's upstream keepalive_timeout of 60 s, so
    # nginx closes first and never sends on a connection we are closing).
    header_read_timeout: float = 10.0
    keepalive_timeout: float = 75.0
    # Seconds `forge serve` lets requests in flight finish after SIGTERM (docs/architecture.md
    # "Stopping"); Kubernetes' terminationGracePeriodSeconds must leave room for it.
    shutdown_timeout: float = 20.0
    auto_migrate: bool = False
    log_level: str = "INFO"
    log_format: str = "json"
    server_os: str = field(default_factory=lambda: go_os_name(platform.system()))
    server_arch: str = field(default_factory=lambda: go_arch_name(platform.machine()))
    # Signed download URLs handed out to update-key requests (docs/access.md "Update keys"):
    # the HMAC secret: like EVENTS_SECRET, never a fixed default (random per start when unset).
    url_signing_secret: str = field(default_factory=lambda: new_secret())
    signed_url_seconds: float = 3600.0
    # Insights (docs/insights.md): days of daily counts kept (hourly ones are kept 2 days).
    insights_retention_days: int = 400
    # AUDIT_RETENTION_DAYS: how long the audit log keeps an entry (docs/audit.md "Retention");
    # older entries are deleted whole by the releases service, hourly
    audit_retention_days: int = 730
    # INSIGHTS=off: count nothing at all (a deployment that wants no counting; the benchmark's
    # side-by-side "without")
    insights_enabled: bool = True
    # nginx's log of the checks it answered from its micro-cache (INSIGHTS_PROXY_LOG), which
    # this service reads and counts; None: no such log (no proxy, or one that cannot share it)
    insights_proxy_log: Path | None = None
    # INSIGHTS_FLUSH_SECONDS: seconds between two writes of the insights counts, so at most what
    # a process killed without stopping loses (docs/insights.md "What a crash loses"); None: the
    # service's own default (forge_releases Options, 2 s)
    insights_flush_seconds: float | None = None
    # ROLLOUT_EVALUATION_SECONDS: seconds between two evaluations of the running rollout plans
    # (releases service; docs/rollouts.md); None: the service's default (10 s)
    rollout_evaluation_seconds: float | None = None
    # PLUGIN_HEALTH_SECONDS: seconds between two rounds in which the plugin gateway asks a plugin
    # for release health figures (docs/rollouts.md "From a plugin"); None: the gateway's default
    # (60 s)
    plugin_health_seconds: float | None = None
    # Browser sessions (docs/accounts.md "Sessions"): ended after this long without a request,
    # and this long after sign-in whatever happens (OWASP's idle and absolute timeouts).
    session_idle_seconds: float = 3600.0
    session_absolute_seconds: float = 12 * 3600.0
    # The reverse proxies whose X-Forwarded-For is believed, and how many of its entries at most
    # (client_address.py, docs/accounts.md "The client's address"); none by default: without a
    # proxy that header is the caller's own words and must not name the address sign-in
    # throttling counts.
    trusted_proxies: tuple[ProxyNetwork, ...] = ()
    trusted_proxy_hops: int = 1
    # The secrets the environment did not set, made up for this start (see `process_secret`).
    generated_secrets: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.app_url.endswith("/"):
            raise ConfigError(f"APP_URL must end in '/': {self.app_url!r}")
        accel = self.storage_accel_prefix
        if accel is not None and not (accel.startswith("/") and accel.endswith("/")):
            raise ConfigError(f"STORAGE_ACCEL_PREFIX must start and end in '/': {accel!r}")

    @classmethod
    def from_env(cls, env: Mapping[str, str], *, database_url: str | None = None) -> Settings:
        """Build settings from environment variables; `database_url` overrides DATABASE_URL."""
        url = database_url or env.get("DATABASE_URL", "")
        if not url:
            raise ConfigError("DATABASE_URL is not set")
        plugins = env.get("PLUGINS_FILE")
        generated: list[str] = []
        return cls(
            database_url=url,
            app_url=env.get("APP_URL", cls.app_url),
            storage_path=Path(env.get("STORAGE_PATH", str(cls.storage_path))),
            storage_url=env.get("STORAGE_URL", cls.storage_url),
            storage_redirect=_bool(env, "STORAGE_REDIRECT", cls.storage_redirect),
            storage_presign_seconds=_int(
                env, "STORAGE_PRESIGN_SECONDS", cls.storage_presign_seconds
            ),
            storage_accel_prefix=env.get("STORAGE_ACCEL_PREFIX") or None,
            s3=S3Settings.from_env(env),
            plugins_file=Path(plugins) if plugins else None,
            gateway_url=env.get("GATEWAY_URL") or None,
            events_secret=process_secret(env, "EVENTS_SECRET", generated),
            max_body_bytes=_int(env, "MAX_BODY_BYTES", cls.max_body_bytes),
            body_read_timeout=_seconds(env, "BODY_READ_TIMEOUT", cls.body_read_timeout),
            max_upload_bytes=_int(env, "MAX_UPLOAD_BYTES", cls.max_upload_bytes),
            header_read_timeout=_seconds(env, "HEADER_READ_TIMEOUT", cls.header_read_timeout),
            keepalive_timeout=_seconds(env, "KEEPALIVE_TIMEOUT", cls.keepalive_timeout),
            shutdown_timeout=_seconds(env, "SHUTDOWN_TIMEOUT", cls.shutdown_timeout),
            auto_migrate=_bool(env, "AUTO_MIGRATE", cls.auto_migrate),
            log_level=env.get("LOG_LEVEL", cls.log_level).upper(),
            log_format=env.get("LOG_FORMAT", cls.log_format),
            url_signing_secret=process_secret(env, "URL_SIGNING_SECRET", generated),
            signed_url_seconds=_seconds(env, "SIGNED_URL_SECONDS", cls.signed_url_seconds),
            insights_retention_days=_int(
                env, "INSIGHTS_RETENTION_DAYS", cls.insights_retention_days
            ),
            audit_retention_days=_int(env, "AUDIT_RETENTION_DAYS", cls.audit_retention_days),
            insights_enabled=_bool(env, "INSIGHTS", cls.insights_enabled),
            insights_proxy_log=Path(env["INSIGHTS_PROXY_LOG"])
            if env.get("INSIGHTS_PROXY_LOG")
            else None,
            insights_flush_seconds=_seconds(env, "INSIGHTS_FLUSH_SECONDS", 0.0) or None,
            rollout_evaluation_seconds=_seconds(env, "ROLLOUT_EVALUATION_SECONDS", 0.0) or None,
            plugin_health_seconds=_seconds(env, "PLUGIN_HEALTH_SECONDS", 0.0) or None,
            session_idle_seconds=_seconds(env, "SESSION_IDLE_SECONDS", cls.session_idle_seconds),
            session_absolute_seconds=_seconds(
                env, "SESSION_ABSOLUTE_SECONDS", cls.session_absolute_seconds
            ),
            trusted_proxies=_proxies(env),
            trusted_proxy_hops=_int(env, "TRUSTED_PROXY_HOPS", cls.trusted_proxy_hops),
            generated_secrets=tuple(generated),
        )

    def require_set_secrets(self, needed: Collection[str]) -> None:
        """A service started alone shares its secrets (`needed`) with other processes, so a secret
        made up for this start would match nobody's: refuse to start, naming what is missing."""
        missing = [name for name in self.generated_secrets if name in needed]
        if missing:
            names = " and ".join(missing)
            raise ConfigError(
                f"{names} must be set to start a service alone: every process that shares it "
                "needs the same value (only `forge serve --all` and `forge dev` make one per start)"
            )


# --- Secrets: never a fixed default (docs/decisions.md "Secrets") ---


def new_secret() -> str:
    """A random secret for one start (`serve --all`, `forge dev`, a Settings built in code)."""
    return secrets.token_urlsafe(32)


def process_secret(env: Mapping[str, str], name: str, generated: list[str]) -> str:
    """The secret the environment sets (empty counts as unset: a known value is no secret), else a
    random one for this start, whose variable is appended to `generated`."""
    value = env.get(name, "")
    if value:
        return value
    generated.append(name)
    return new_secret()


def go_os_name(system: str) -> str:
    """The server's OS in Go naming: the update check's default platform
    (docs/releases.md "Update check rules" 2)."""
    return {"Linux": "linux", "Darwin": "darwin", "Windows": "windows"}.get(system, system.lower())


def go_arch_name(machine: str) -> str:
    """The server's architecture as the update check's default arch: Go naming, amd64 → x64."""
    arch = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(
        machine.lower(), machine.lower()
    )
    return "x64" if arch == "amd64" else arch


def _int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a whole number, not {raw!r}") from None
    if value <= 0:
        raise ConfigError(f"{name} must be positive, not {raw!r}")
    return value


def _seconds(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a number of seconds, not {raw!r}") from None
    if not 0 < value < float("inf"):
        raise ConfigError(f"{name} must be positive, not {raw!r}")
    return value


def _bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    if raw.lower() in {"1", "true", "yes", "on"}:
        return True
    if raw.lower() in {"0", "false", "no", "off"}:
        return False
    raise ConfigError(f"{name} must be true or false, not {raw!r}")


def argon2_parameters(env: Mapping[str, str]) -> Argon2Parameters:
    """ARGON2_PARAMETERS, as a hash writes them (`t=3,m=65536,p=4`: passes, KiB, lanes); unset:
    argon2-cffi's defaults. Read by the entry point, which sets them for the whole process
    (passwords.configure): hashing has no settings object at hand in the world loader."""
    raw = env.get("ARGON2_PARAMETERS", "")
    if not raw:
        return DEFAULT_PARAMETERS
    fields = dict(item.partition("=")[::2] for item in raw.replace(" ", "").split(","))
    try:
        parameters = Argon2Parameters(int(fields["t"]), int(fields["m"]), int(fields["p"]))
    except (KeyError, ValueError):
        raise ConfigError(
            f"ARGON2_PARAMETERS must be t=PASSES,m=KIB,p=LANES (t=3,m=65536,p=4), not {raw!r}"
        ) from None
    if set(fields) != {"t", "m", "p"} or min(parameters) < 1 or parameters.memory_kib < 8:
        raise ConfigError(f"ARGON2_PARAMETERS must name t, m (>= 8) and p, each >= 1: {raw!r}")
    return parameters


def _proxies(env: Mapping[str, str]) -> tuple[ProxyNetwork, ...]:
    """TRUSTED_PROXIES: addresses and networks separated by commas or spaces (`*` for every
    address). TRUST_FORWARDED_FOR=true, its older form, is every address with one hop."""
    raw = env.get("TRUSTED_PROXIES", "").replace(",", " ").split()
    if not raw:
        return _ANY_PROXY if _bool(env, "TRUST_FORWARDED_FOR", False) else ()
    if raw == ["*"]:
        return _ANY_PROXY
    networks = []
    for item in raw:
        try:
            networks.append(ip_network(item, strict=False))
        except ValueError:
            raise ConfigError(
                f"TRUSTED_PROXIES must list addresses or networks (10.0.0.0/8), not {item!r}"
            ) from None
    return tuple(networks)
