"""The password hasher (passwords.py): its parameters, ARGON2_PARAMETERS, and the dummy hash a
sign-in for a missing account verifies against, which must cost what a real account's hash costs.

The test plugin runs every test with the cheapest parameters; these tests set the ones they hold
and put the plugin's back."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from forge_common.accounts import passwords
from forge_common.config import ConfigError, argon2_parameters


@pytest.fixture
def restore_parameters() -> Iterator[None]:
    hasher, dummy = passwords._HASHER, passwords._DUMMY_HASH
    yield
    passwords._HASHER, passwords._DUMMY_HASH = hasher, dummy


def _head(encoded: str) -> list[str]:
    return encoded.split("$")[:4]  # algorithm, version, parameters


@pytest.mark.usefixtures("restore_parameters")
def test_the_default_dummy_hash_is_made_with_the_default_parameters() -> None:
    passwords.configure(argon2_parameters({}))
    assert passwords.DEFAULT_PARAMETERS == (3, 65536, 4)  # RFC 9106's low-memory profile
    assert not passwords.needs_rehash(passwords._DUMMY_HASH)
    stored = passwords.hash_password_sync("a password of some account")
    default = ["", "argon2id", "v=19", "m=65536,t=3,p=4"]
    assert _head(passwords._DUMMY_HASH) == _head(stored) == default


@pytest.mark.usefixtures("restore_parameters")
def test_other_parameters_hash_with_them_and_the_dummy_follows(caplog) -> None:
    with caplog.at_level(logging.WARNING, "forge_common.accounts.passwords"):
        passwords.configure(argon2_parameters({"ARGON2_PARAMETERS": "t=4,m=9216,p=1"}))
    assert caplog.records == []  # OWASP's 9 MiB x 4 is enough
    stored = passwords.hash_password_sync("a password of some account")
    assert _head(stored)[3] == "m=9216,t=4,p=1" == _head(passwords._DUMMY_HASH)[3]
    assert not passwords.needs_rehash(stored)


@pytest.mark.usefixtures("restore_parameters")
async def test_a_hash_of_other_parameters_still_verifies_and_is_remade(caplog) -> None:
    passwords.configure(passwords.DEFAULT_PARAMETERS)
    old = passwords.hash_password_sync("correct horse battery")
    with caplog.at_level(logging.WARNING, "forge_common.accounts.passwords"):
        passwords.configure(argon2_parameters({"ARGON2_PARAMETERS": "t=1,m=1024,p=1"}))
    assert "cheap to guess" in caplog.text
    assert await passwords.verify_password(old, "correct horse battery")
    assert passwords.needs_rehash(old)


@pytest.mark.parametrize(
    "raw", ["3,65536,4", "t=3,m=65536", "t=3,m=65536,p=4,x=1", "t=0,m=65536,p=4", "t=a,m=1,p=1"]
)
def test_argon2_parameters_that_cannot_be_are_refused_by_name(raw: str) -> None:
    with pytest.raises(ConfigError, match="ARGON2_PARAMETERS"):
        argon2_parameters({"ARGON2_PARAMETERS": raw})


async def test_a_missing_account_never_signs_in() -> None:
    assert not await passwords.verify_password(None, "forge: no such account")
    assert not await passwords.verify_password(None, "anything at all")
