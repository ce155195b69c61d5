"""The password hasher's fixed dummy hash (passwords.py): a sign-in for a missing account verifies
against it, so it must cost what a real account's hash costs today."""

from __future__ import annotations

from forge_common.accounts import passwords


def test_the_dummy_hash_is_made_with_todays_parameters() -> None:
    assert not passwords.needs_rehash(passwords._DUMMY_HASH)
    stored = passwords.hash_password_sync("a password of some account")
    assert passwords._DUMMY_HASH.split("$")[:4] == stored.split("$")[:4]


async def test_a_missing_account_never_signs_in() -> None:
    assert not await passwords.verify_password(None, "forge: no such account")
    assert not await passwords.verify_password(None, "anything at all")
