"""The URL signing secret of update keys (docs/access.md "Update keys"): no fixed default; random
per start when the releases service shares its process; required when it runs alone."""

from __future__ import annotations

import pytest
from forge_common.cli import main
from forge_common.config import ConfigError, Settings

URL = "postgresql://unused/db"


def test_the_configured_secret_is_kept() -> None:
    settings = Settings.from_env({"DATABASE_URL": URL, "URL_SIGNING_SECRET": "s3cret"})
    assert settings.url_signing_secret == "s3cret"
    settings.require_set_secrets(["URL_SIGNING_SECRET"])  # set: nothing to refuse


def test_no_default_secret_and_a_random_one_per_start_for_serve_all() -> None:
    first = Settings.from_env({"DATABASE_URL": URL}).url_signing_secret
    second = Settings.from_env({"DATABASE_URL": URL}).url_signing_secret
    assert len(first) >= 32 and first != second


def test_releases_alone_refuses_to_start_without_a_secret(
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings = Settings.from_env({"DATABASE_URL": URL, "EVENTS_SECRET": "e"})
    with pytest.raises(ConfigError, match="URL_SIGNING_SECRET"):
        settings.require_set_secrets(["EVENTS_SECRET", "URL_SIGNING_SECRET"])
    env = {"DATABASE_URL": URL, "EVENTS_SECRET": "e"}
    assert main(["serve", "--service", "releases"], env) == 1
    assert "URL_SIGNING_SECRET must be set" in capsys.readouterr().err


def test_other_services_alone_do_not_need_the_url_signing_secret() -> None:
    settings = Settings.from_env({"DATABASE_URL": URL, "EVENTS_SECRET": "e"})
    settings.require_set_secrets(["EVENTS_SECRET"])  # orgs, gateway: no URL signing


def test_signed_url_lifetime_is_configurable() -> None:
    env = {"DATABASE_URL": URL, "SIGNED_URL_SECONDS": "600"}
    assert Settings.from_env(env).signed_url_seconds == 600
    assert Settings.from_env({"DATABASE_URL": URL}).signed_url_seconds == 3600
    with pytest.raises(ConfigError):
        Settings.from_env({**env, "SIGNED_URL_SECONDS": "0"})
