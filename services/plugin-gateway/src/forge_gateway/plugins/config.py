"""The plugins of `PLUGINS_FILE`, validated (the tuning knobs are `forge_gateway.options`).

`PLUGINS_FILE` (docs/plugins.md "The plugins file") is JSON, or YAML when its name ends in
`.yaml`/`.yml`:

    {"plugins": [{"name": "notify", "address": "127.0.0.1:50051", "config": {"k": "v"},
                  "enabled": true,
                  "tls": {"ca": "ca.pem", "cert": "client.pem", "key": "client.key"},
                  "timeouts": {"HandleHTTP": 10, "on_event": 5}, "max_in_flight": 16,
                  "health_repositories": ["acme/app", "acme/*"]}]}

Every problem in the file is reported at once, each line naming the entry (`plugins[1] (notify).
address: ...`), and the gateway does not start with a bad file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from forge_common.config import ConfigError
from forge_common.names import is_account_name, is_repo_name

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_HOST_PORT = re.compile(r"^(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):(?P<port>[0-9]{1,5})$")
MAX_TIMEOUT_SECONDS = 300.0
MAX_IN_FLIGHT = 256  # OnEvent calls at once to one plugin: beyond this a plugin is not "one"


class PluginsFileError(ConfigError):
    """PLUGINS_FILE cannot be used; `problems` holds one line per bad entry."""

    def __init__(self, path: Path | str, problems: list[str]) -> None:
        self.path = str(path)
        self.problems = problems
        lines = "\n  ".join(problems)
        super().__init__(f"PLUGINS_FILE {self.path} is not valid:\n  {lines}")


@dataclass(frozen=True, slots=True)
class Timeouts:
    """The deadline of each RPC, in seconds (docs/plugins.md "Deadlines")."""

    initialize: float = 10.0
    shutdown: float = 5.0
    health_check: float = 2.0
    get_manifest: float = 5.0
    on_event: float = 10.0
    handle_http: float = 30.0
    get_release_health: float = 10.0  # ReleaseHealthService (release_health.proto)
    # An RPC newer than this table (see versions.RPC_MIN_VERSION) still gets a deadline.
    other: float = 10.0

    def for_rpc(self, rpc: str) -> float:
        attribute = _RPC_ATTRIBUTES.get(rpc)
        value: float = getattr(self, attribute) if attribute else self.other
        return value


# The keys accepted under `timeouts`: the RPC name or its snake_case form.
_RPC_ATTRIBUTES = {
    "Initialize": "initialize",
    "Shutdown": "shutdown",
    "HealthCheck": "health_check",
    "GetManifest": "get_manifest",
    "OnEvent": "on_event",
    "HandleHTTP": "handle_http",
    "GetReleaseHealth": "get_release_health",
}
_TIMEOUT_KEYS = {**_RPC_ATTRIBUTES, **{v: v for v in _RPC_ATTRIBUTES.values()}}


@dataclass(frozen=True, slots=True)
class TlsConfig:
    """PEM bytes read when the file is loaded; `ca` None means the system's roots."""

    ca: bytes | None = None
    cert: bytes | None = None
    key: bytes | None = None
    server_name: str | None = None


@dataclass(frozen=True, slots=True)
class PluginConfig:
    name: str
    address: str
    config: Mapping[str, str] = field(default_factory=dict)
    enabled: bool = True
    tls: TlsConfig | None = None
    timeouts: Timeouts = field(default_factory=Timeouts)
    # OnEvent calls in flight at once to this plugin; None is the gateway's default
    # (DeliveryOptions.concurrency). docs/plugins.md "The plugins file".
    max_in_flight: int | None = None
    # The repositories whose release health this plugin may report (`owner/repo` or `owner/*`),
    # asked only when its manifest asks for release:health; none by default: least privilege
    # (docs/plugins.md "Release health").
    health_repositories: tuple[str, ...] = ()

    def reports_health_of(self, owner: str, repo: str) -> bool:
        """Whether the operator granted this plugin the repository `owner/repo`."""
        owner, repo = owner.lower(), repo.lower()
        return any(
            grant == f"{owner}/{repo}" or grant == f"{owner}/*"
            for grant in (g.lower() for g in self.health_repositories)
        )


def load_plugins_file(path: Path) -> list[PluginConfig]:
    """Read and validate PLUGINS_FILE; PluginsFileError lists every problem."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PluginsFileError(path, [f"cannot read the file: {exc}"]) from None
    try:
        if path.suffix.lower() in {".yaml", ".yml"}:
            data = yaml.safe_load(text)
        else:
            data = json.loads(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise PluginsFileError(path, [f"not valid {_kind(path)}: {exc}"]) from None
    return parse_plugins(data, base=path.parent, source=path)


def _kind(path: Path) -> str:
    return "YAML" if path.suffix.lower() in {".yaml", ".yml"} else "JSON"


def parse_plugins(
    data: Any, *, base: Path, source: Path | str = "PLUGINS_FILE"
) -> list[PluginConfig]:
    """Validate the file's content; relative TLS paths are read relative to `base`."""
    problems: list[str] = []
    if not isinstance(data, dict):
        raise PluginsFileError(source, ['must be an object: {"plugins": [...]}'])
    unknown = sorted(set(data) - {"plugins"})
    if unknown:
        problems.append(f"unknown key(s) {', '.join(map(repr, unknown))} (expected 'plugins')")
    entries = data.get("plugins", [])
    if not isinstance(entries, list):
        raise PluginsFileError(source, [*problems, "plugins: must be a list"])
    plugins: list[PluginConfig] = []
    seen: dict[str, str] = {}
    for index, entry in enumerate(entries):
        where = f"plugins[{index}]"
        if not isinstance(entry, dict):
            problems.append(f"{where}: must be an object")
            continue
        name = entry.get("name")
        if isinstance(name, str) and name:
            where = f"{where} ({name})"
        plugin = _parse_entry(entry, where, base, problems)
        if plugin is None:
            continue
        key = plugin.name.lower()
        if key in seen:
            problems.append(
                f"{where}.name: duplicate plugin name {plugin.name!r} (also {seen[key]})"
            )
        else:
            seen[key] = where
            plugins.append(plugin)
    if problems:
        raise PluginsFileError(source, problems)
    return plugins


_ENTRY_KEYS = {
    "name", "address", "config", "enabled", "tls", "timeouts", "max_in_flight",
    "health_repositories",
}  # fmt: skip


def _parse_entry(
    entry: Mapping[str, Any], where: str, base: Path, problems: list[str]
) -> PluginConfig | None:
    before = len(problems)
    for key in sorted(set(entry) - _ENTRY_KEYS):
        problems.append(f"{where}: unknown key {key!r}")
    name = entry.get("name")
    if not isinstance(name, str) or not NAME.match(name):
        problems.append(
            f"{where}.name: must be 1-64 letters, digits, '.', '_' or '-', starting with a "
            f"letter or digit (got {name!r})"
        )
    address = _address(entry.get("address"), where, problems)
    config = _config_map(entry.get("config", {}), where, problems)
    enabled = entry.get("enabled", True)
    if not isinstance(enabled, bool):
        problems.append(f"{where}.enabled: must be true or false")
    tls = _tls(entry.get("tls"), where, base, problems)
    timeouts = _timeouts(entry.get("timeouts"), where, problems)
    max_in_flight = _max_in_flight(entry.get("max_in_flight"), where, problems)
    grants = _health_repositories(entry.get("health_repositories", []), where, problems)
    if len(problems) > before:
        return None
    assert isinstance(name, str) and isinstance(enabled, bool)
    return PluginConfig(name, address, config, enabled, tls, timeouts, max_in_flight, grants)


def _health_repositories(value: Any, where: str, problems: list[str]) -> tuple[str, ...]:
    """`owner/repo` or `owner/*` names, each a name that can exist."""
    field_name = f"{where}.health_repositories"
    if not isinstance(value, list):
        problems.append(f"{field_name}: must be a list of 'owner/repo' or 'owner/*'")
        return ()
    grants: list[str] = []
    for item in value:
        owner, _, repo = item.partition("/") if isinstance(item, str) else ("", "", "")
        if not is_account_name(owner) or not (repo == "*" or is_repo_name(repo)):
            problems.append(f"{field_name}: {item!r} is not 'owner/repo' or 'owner/*'")
            continue
        grants.append(item)
    return tuple(dict.fromkeys(grants))


def _max_in_flight(value: Any, where: str, problems: list[str]) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_IN_FLIGHT:
        problems.append(
            f"{where}.max_in_flight: must be a whole number from 1 to {MAX_IN_FLIGHT} "
            f"(got {value!r})"
        )
        return None
    return value


def _address(value: Any, where: str, problems: list[str]) -> str:
    if not isinstance(value, str) or not value:
        problems.append(f"{where}.address: missing (host:port or unix:PATH)")
        return ""
    if value.startswith("unix:"):
        if not value[len("unix:") :].strip("/"):
            problems.append(f"{where}.address: {value!r} names no socket path (unix:PATH)")
        return value
    match = _HOST_PORT.match(value)
    if match is None or not 1 <= int(match["port"]) <= 65535:
        problems.append(f"{where}.address: {value!r} is not host:port (port 1-65535) or unix:PATH")
    return value


def _config_map(value: Any, where: str, problems: list[str]) -> dict[str, str]:
    """Plugins receive strings (map<string, string>); scalar numbers and booleans are converted."""
    if not isinstance(value, dict):
        problems.append(f"{where}.config: must be an object of strings")
        return {}
    config: dict[str, str] = {}
    for key, item in value.items():
        if isinstance(item, bool):
            config[str(key)] = "true" if item else "false"
        elif isinstance(item, (str, int, float)):
            config[str(key)] = str(item)
        else:
            problems.append(f"{where}.config.{key}: must be a string, number or boolean")
    return config


def _tls(value: Any, where: str, base: Path, problems: list[str]) -> TlsConfig | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        problems.append(f"{where}.tls: must be an object with ca, cert and key file paths")
        return None
    for key in sorted(set(value) - {"ca", "cert", "key", "server_name"}):
        problems.append(f"{where}.tls: unknown key {key!r}")
    if ("cert" in value) != ("key" in value):
        problems.append(f"{where}.tls: cert and key go together (a client certificate needs both)")
    files: dict[str, bytes | None] = {}
    for key in ("ca", "cert", "key"):
        path = value.get(key)
        files[key] = None
        if path is None:
            continue
        if not isinstance(path, str) or not path:
            problems.append(f"{where}.tls.{key}: must be a file path")
            continue
        try:
            files[key] = (base / path).read_bytes()
        except OSError as exc:
            problems.append(f"{where}.tls.{key}: cannot read {path!r}: {exc.strerror or exc}")
    server_name = value.get("server_name")
    if server_name is not None and (not isinstance(server_name, str) or not server_name):
        problems.append(f"{where}.tls.server_name: must be a host name")
        server_name = None
    return TlsConfig(files["ca"], files["cert"], files["key"], server_name)


def _timeouts(value: Any, where: str, problems: list[str]) -> Timeouts:
    if value is None:
        return Timeouts()
    if not isinstance(value, dict):
        problems.append(f"{where}.timeouts: must be an object of seconds per RPC")
        return Timeouts()
    chosen: dict[str, float] = {}
    for key, seconds in value.items():
        attribute = _TIMEOUT_KEYS.get(key)
        if attribute is None:
            known = ", ".join(_RPC_ATTRIBUTES)
            problems.append(f"{where}.timeouts: unknown RPC {key!r} (one of {known})")
            continue
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
            problems.append(f"{where}.timeouts.{key}: must be a number of seconds")
            continue
        if not 0 < seconds <= MAX_TIMEOUT_SECONDS:
            problems.append(
                f"{where}.timeouts.{key}: must be more than 0 and at most "
                f"{MAX_TIMEOUT_SECONDS:g} seconds (got {seconds})"
            )
            continue
        chosen[attribute] = float(seconds)
    return Timeouts(**chosen)
