"""No fixed secret anywhere (docs/decisions.md "Secrets", docs/cli-and-world.md)."""

from __future__ import annotations

import pytest
from forge_common.cli import main
from forge_common.config import Settings

URL = "postgresql://nobody@127.0.0.1:1/none"  # never reached: the check comes first


def test_an_unset_events_secret_is_random_per_start() -> None:
    first = Settings.from_env({"DATABASE_URL": URL})
    second = Settings.from_env({"DATABASE_URL": URL, "EVENTS_SECRET": ""})
    assert first.events_secret != second.events_secret
    assert len(first.events_secret) >= 32
    assert "EVENTS_SECRET" in first.generated_secrets
    assert "EVENTS_SECRET" in second.generated_secrets


def test_a_set_events_secret_is_used() -> None:
    settings = Settings.from_env({"DATABASE_URL": URL, "EVENTS_SECRET": "s3cret-from-env"})
    assert settings.events_secret == "s3cret-from-env"
    assert "EVENTS_SECRET" not in settings.generated_secrets


@pytest.mark.parametrize("service", ["releases", "orgs", "gateway"])
def test_a_service_started_alone_refuses_to_start_without_the_secret(
    service: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "--service", service], env={"DATABASE_URL": URL}) == 1
    message = capsys.readouterr().err
    assert "must be set to start a service alone" in message and "EVENTS_SECRET" in message
    assert "serve --all" in message
