"""Settings read from the environment, once, by the entry point (`forge`).

Everything else receives a frozen `Settings` (or a service's own config built from it), so tests
build configurations directly and nothing reads `os.environ` behind the caller's back.
"""

from __future__ import annotations

import platform
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

DEV_EVENTS_SECRET = "forge-development-events-secret"  # noqa: S105 - dev default, documented


class ConfigError(ValueError):
    """A setting has a value we cannot use; the message names the variable."""


@dataclass(frozen=True)
class Settings:
    database_url: str
    app_url: str = "http://localhost:8080/"
    storage_path: Path = Path(".data/storage")
    plugins_file: Path | None = None
    gateway_url: str | None = None
    events_secret: str = DEV_EVENTS_SECRET
    max_body_bytes: int = 1024 * 1024
    # Seconds a request may take to send its whole body (uploads have their own idle limit):
    # a client that stalls after its headers holds a connection and a task only this long.
    body_read_timeout: float = 30.0
    max_upload_bytes: int = 4 * 1024 * 1024 * 1024
    # Seconds `forge serve` lets requests in flight finish after SIGTERM (docs/architecture.md
    # "Stopping"); Kubernetes' terminationGracePeriodSeconds must leave room for it.
    shutdown_timeout: float = 20.0
    auto_migrate: bool = False
    log_level: str = "INFO"
    log_format: str = "json"
    server_os: str = field(default_factory=lambda: go_os_name(platform.system()))
    server_arch: str = field(default_factory=lambda: go_arch_name(platform.machine()))
    # Signed download URLs handed out to update-key requests (docs/access.md "Update keys"):
    # the HMAC secret has no default; `forge` fills a random one for serve --all and dev.
    url_signing_secret: str = ""
    signed_url_seconds: float = 3600.0

    def __post_init__(self) -> None:
        if not self.app_url.endswith("/"):
            raise ConfigError(f"APP_URL must end in '/': {self.app_url!r}")

    @classmethod
    def from_env(cls, env: Mapping[str, str], *, database_url: str | None = None) -> Settings:
        """Build settings from environment variables; `database_url` overrides DATABASE_URL."""
        url = database_url or env.get("DATABASE_URL", "")
        if not url:
            raise ConfigError("DATABASE_URL is not set")
        plugins = env.get("PLUGINS_FILE")
        return cls(
            database_url=url,
            app_url=env.get("APP_URL", cls.app_url),
            storage_path=Path(env.get("STORAGE_PATH", str(cls.storage_path))),
            plugins_file=Path(plugins) if plugins else None,
            gateway_url=env.get("GATEWAY_URL") or None,
            events_secret=env.get("EVENTS_SECRET", DEV_EVENTS_SECRET),
            max_body_bytes=_int(env, "MAX_BODY_BYTES", cls.max_body_bytes),
            body_read_timeout=_seconds(env, "BODY_READ_TIMEOUT", cls.body_read_timeout),
            max_upload_bytes=_int(env, "MAX_UPLOAD_BYTES", cls.max_upload_bytes),
            shutdown_timeout=_seconds(env, "SHUTDOWN_TIMEOUT", cls.shutdown_timeout),
            auto_migrate=_bool(env, "AUTO_MIGRATE", cls.auto_migrate),
            log_level=env.get("LOG_LEVEL", cls.log_level).upper(),
            log_format=env.get("LOG_FORMAT", cls.log_format),
            url_signing_secret=env.get("URL_SIGNING_SECRET", ""),
            signed_url_seconds=_seconds(env, "SIGNED_URL_SECONDS", cls.signed_url_seconds),
        )


# --- update keys: the URL signing secret (docs/access.md "Update keys") ---
def with_url_signing_secret(settings: Settings, *, standalone_releases: bool) -> Settings:
    """Settings with a URL signing secret: the configured one; a random one per start when the
    releases service runs in one process with the others (`serve --all`, `dev`: nothing else
    checks its signatures); a releases service started alone (replicas behind a balancer must
    share it) refuses to start without one."""
    if settings.url_signing_secret:
        return settings
    if standalone_releases:
        raise ConfigError("URL_SIGNING_SECRET is not set (the releases service needs one)")
    return replace(settings, url_signing_secret=secrets.token_urlsafe(32))


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
