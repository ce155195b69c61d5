"""PLUGINS_FILE (docs/plugins.md "The plugins file"): JSON or YAML; name, address (host:port or
unix:PATH), config, enabled, optional tls and per-RPC timeouts; every problem reported, naming the
bad entry."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from forge_common.config import ConfigError, Settings
from forge_gateway.plugins.config import PluginsFileError, Timeouts, load_plugins_file
from forge_gateway.service import create_app


def write(tmp_path: Path, content: Any, name: str = "plugins.json") -> Path:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def problems(tmp_path: Path, content: Any, name: str = "plugins.json") -> list[str]:
    with pytest.raises(PluginsFileError) as caught:
        load_plugins_file(write(tmp_path, content, name))
    return caught.value.problems


def test_valid_json_file_with_every_field(tmp_path: Path) -> None:
    (tmp_path / "ca.pem").write_bytes(b"CA")
    (tmp_path / "client.pem").write_bytes(b"CERT")
    (tmp_path / "client.key").write_bytes(b"KEY")
    path = write(
        tmp_path,
        {
            "plugins": [
                {
                    "name": "notify",
                    "address": "127.0.0.1:50051",
                    "config": {"k": "v", "n": 3, "on": True},
                },
                {
                    "name": "secure",
                    "address": "plugins.internal:443",
                    "enabled": False,
                    "tls": {
                        "ca": "ca.pem",
                        "cert": "client.pem",
                        "key": "client.key",
                        "server_name": "plugin.example",
                    },
                    "timeouts": {"HandleHTTP": 12, "on_event": 2.5},
                    "max_in_flight": 32,
                },
                {"name": "local", "address": "unix:/run/forge/local.sock"},
                {"name": "v6", "address": "[::1]:7000"},
            ]
        },
    )
    notify, secure, local, v6 = load_plugins_file(path)
    assert notify.config == {"k": "v", "n": "3", "on": "true"}
    assert notify.enabled and notify.tls is None and notify.timeouts == Timeouts()
    assert notify.max_in_flight is None and secure.max_in_flight == 32  # None: the default
    assert not secure.enabled
    assert secure.tls is not None and (secure.tls.ca, secure.tls.cert, secure.tls.key) == (
        b"CA",
        b"CERT",
        b"KEY",
    )
    assert secure.tls.server_name == "plugin.example"
    assert secure.timeouts.handle_http == 12 and secure.timeouts.on_event == 2.5
    assert secure.timeouts.health_check == Timeouts().health_check
    assert local.address == "unix:/run/forge/local.sock" and v6.address == "[::1]:7000"


def test_yaml_is_accepted(tmp_path: Path) -> None:
    [plugin] = load_plugins_file(
        write(
            tmp_path,
            "plugins:\n  - name: recorder\n    address: localhost:50051\n"
            "    config: {max_events: 10}\n",
            "plugins.yaml",
        )
    )
    assert (plugin.name, plugin.address, dict(plugin.config)) == (
        "recorder",
        "localhost:50051",
        {"max_events": "10"},
    )


def test_every_problem_is_reported_naming_the_entry(tmp_path: Path) -> None:
    found = problems(
        tmp_path,
        {
            "plugins": [
                {"name": "ok", "address": "127.0.0.1:1"},
                {"name": "bad name!", "address": "127.0.0.1:2"},
                {"name": "noport", "address": "localhost"},
                {"name": "bigport", "address": "localhost:70000"},
                {"name": "nosock", "address": "unix:"},
                {"name": "cfg", "address": "a:1", "config": {"nested": {"x": 1}}},
                {"name": "flag", "address": "a:1", "enabled": "yes"},
                {
                    "name": "tmo",
                    "address": "a:1",
                    "timeouts": {"Frob": 1, "HandleHTTP": 0, "OnEvent": "5"},
                },
                {"name": "tls", "address": "a:1", "tls": {"cert": "missing.pem"}},
                {"name": "OK", "address": "127.0.0.1:3"},
                {"name": "extra", "address": "a:1", "colour": "red"},
                "not an object",
                {"name": "cap0", "address": "a:1", "max_in_flight": 0},
                {"name": "capf", "address": "a:1", "max_in_flight": 2.5},
                {"name": "capbig", "address": "a:1", "max_in_flight": 257},
            ]
        },
    )
    expected = [
        "plugins[1] (bad name!).name: must be",
        "plugins[2] (noport).address: 'localhost' is not host:port",
        "plugins[3] (bigport).address: 'localhost:70000' is not host:port",
        "plugins[4] (nosock).address: 'unix:' names no socket path",
        "plugins[5] (cfg).config.nested: must be a string, number or boolean",
        "plugins[6] (flag).enabled: must be true or false",
        "plugins[7] (tmo).timeouts: unknown RPC 'Frob'",
        "plugins[7] (tmo).timeouts.HandleHTTP: must be more than 0",
        "plugins[7] (tmo).timeouts.OnEvent: must be a number of seconds",
        "plugins[8] (tls).tls: cert and key go together",
        "plugins[8] (tls).tls.cert: cannot read 'missing.pem'",
        "plugins[9] (OK).name: duplicate plugin name 'OK' (also plugins[0] (ok))",
        "plugins[10] (extra): unknown key 'colour'",
        "plugins[11]: must be an object",
        "plugins[12] (cap0).max_in_flight: must be a whole number from 1 to 256 (got 0)",
        "plugins[13] (capf).max_in_flight: must be a whole number from 1 to 256 (got 2.5)",
        "plugins[14] (capbig).max_in_flight: must be a whole number from 1 to 256 (got 257)",
    ]
    for start in expected:
        assert any(p.startswith(start) for p in found), (start, found)
    assert len(found) == len(expected)


@pytest.mark.parametrize(
    ("content", "name", "message"),
    [
        ("{not json", "plugins.json", "not valid JSON"),
        ("plugins: [", "plugins.yml", "not valid YAML"),
        ("[]", "plugins.json", "must be an object"),
        ('{"plugins": {}}', "plugins.json", "plugins: must be a list"),
        ('{"plugin": []}', "plugins.json", "unknown key(s) 'plugin'"),
        ('{"plugins": [{"address": "a:1"}]}', "plugins.json", "plugins[0].name: must be"),
        ('{"plugins": [{"name": "x"}]}', "plugins.json", "plugins[0] (x).address: missing"),
    ],
)
def test_unusable_file_is_refused(tmp_path: Path, content: str, name: str, message: str) -> None:
    found = problems(tmp_path, content, name)
    assert any(message in p for p in found), found


def test_missing_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(PluginsFileError, match="cannot read the file"):
        load_plugins_file(tmp_path / "absent.json")


def test_gateway_does_not_start_with_a_bad_file(tmp_path: Path) -> None:
    """The error is a ConfigError, which `forge serve` prints (every line) before exiting 1."""
    path = write(tmp_path, {"plugins": [{"name": "x", "address": "nowhere"}]})
    settings = Settings(database_url="postgresql://unused/", plugins_file=path)
    with pytest.raises(ConfigError) as caught:
        create_app(dataclasses.replace(settings))
    assert f"PLUGINS_FILE {path} is not valid" in str(caught.value)
    assert "plugins[0] (x).address" in str(caught.value)


def test_empty_plugin_list_is_fine(tmp_path: Path) -> None:
    assert load_plugins_file(write(tmp_path, {"plugins": []})) == []


def test_health_repositories_grant_names_that_can_exist(tmp_path: Path) -> None:
    """`health_repositories` (docs/plugins.md "Release health"): `owner/repo` or `owner/*`,
    none by default; anything else is refused, naming the entry."""
    entry = {"name": "crashes", "address": "127.0.0.1:1"}
    [default] = load_plugins_file(write(tmp_path, {"plugins": [entry]}))
    assert default.health_repositories == () and not default.reports_health_of("acme", "app")
    granted = {**entry, "health_repositories": ["acme/app", "Tools/*", "acme/app"]}
    [plugin] = load_plugins_file(write(tmp_path, {"plugins": [granted]}))
    assert plugin.health_repositories == ("acme/app", "Tools/*")
    assert plugin.reports_health_of("ACME", "App") and plugin.reports_health_of("tools", "x")
    assert not plugin.reports_health_of("acme", "other")
    assert not plugin.reports_health_of("acme", "*")  # a grant's star is not a repository's
    for bad in ("acme", "*/*", "acme/app/x", "acme/a b", "", 7):
        found = problems(tmp_path, {"plugins": [{**entry, "health_repositories": [bad]}]})
        assert found == [
            f"plugins[0] (crashes).health_repositories: {bad!r} is not 'owner/repo' or 'owner/*'"
        ]
    found = problems(tmp_path, {"plugins": [{**entry, "health_repositories": "acme/app"}]})
    assert found == [
        "plugins[0] (crashes).health_repositories: must be a list of 'owner/repo' or 'owner/*'"
    ]


def test_plugin_health_seconds_is_read_in_the_one_place() -> None:
    """PLUGIN_HEALTH_SECONDS (docs/rollouts.md "From a plugin") sets the gateway's interval."""
    from forge_gateway.options import Options, with_settings

    env = {"DATABASE_URL": "postgresql://forge@localhost/forge"}
    assert with_settings(Options(), Settings.from_env(env)) == Options()
    quick = with_settings(Options(), Settings.from_env({**env, "PLUGIN_HEALTH_SECONDS": "0.2"}))
    assert (quick.release_health.interval, quick.release_health.poll_interval) == (0.2, 0.2)
    for bad in ("0", "-1", "soon"):
        with pytest.raises(ConfigError, match="PLUGIN_HEALTH_SECONDS"):
            Settings.from_env({**env, "PLUGIN_HEALTH_SECONDS": bad})
