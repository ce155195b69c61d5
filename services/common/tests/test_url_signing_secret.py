"""The URL signing secret of update keys (docs/access.md "Update keys"): no fixed default; random
per start when the releases service shares its process; required when it runs alone."""

from __future__ import annotations

import pytest
from forge_common.cli import main
from forge_common.config import ConfigError, Settings, with_url_signing_secret

URL = "postgresql://unused/db"


def test_the_configured_secret_is_kept() -> None:
    settings = Settings.from_env({"DATABASE_URL": URL, "URL_SIGNING_SECRET": "s3cret"})
    assert (
        with_url_signing_secret(settings, standalone_releases=True).url_signing_secret == "s3cret"
    )


def test_no_default_secret_and_a_random_one_per_start_for_serve_all() -> None:
    settings = Settings.from_env({"DATABASE_URL": URL})
    assert settings.url_signing_secret == ""
    first = with_url_signing_secret(settings, standalone_releases=False).url_signing_secret
    second = with_url_signing_secret(settings, standalone_releases=False).url_signing_secret
    assert len(first) >= 32 and first != second


def test_releases_alone_refuses_to_start_without_a_secret(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(ConfigError, match="URL_SIGNING_SECRET"):
        with_url_signing_secret(Settings(database_url=URL), standalone_releases=True)
    assert main(["serve", "--service", "releases"], {"DATABASE_URL": URL}) == 1
    assert "URL_SIGNING_SECRET is not set" in capsys.readouterr().err


def test_signed_url_lifetime_is_configurable() -> None:
    env = {"DATABASE_URL": URL, "SIGNED_URL_SECONDS": "600"}
    assert Settings.from_env(env).signed_url_seconds == 600
    assert Settings.from_env({"DATABASE_URL": URL}).signed_url_seconds == 3600
    with pytest.raises(ConfigError):
        Settings.from_env({**env, "SIGNED_URL_SECONDS": "0"})
