"""One rule for display names on every path (docs/architecture.md "Display names"): the full
names of users and organizations the API stores are held to the world loader's rule
(forge_common.names.display_name_problem), so a bidi override, a zero-width character or a
control character is refused with 422 naming `full_name`, and nothing is stored."""

from __future__ import annotations

import pytest

HIDDEN = {
    "bidi override": "Acme \u202eexe.txt",
    "zero-width space": "Ac\u200bme",
    "bell": "Acme\x07",
    "byte order mark": "\ufeffAcme",
    "replacement character": "Acme \ufffd",
}
SHOWN = ["Ærøskøbing Söhne 株式会社", "Acme, Inc. (EU)", "Zoë 💻", "عربي"]
NAMES = "SELECT md5(string_agg(full_name, '|' ORDER BY id)) FROM core.accounts"


@pytest.mark.parametrize("name", list(HIDDEN.values()), ids=list(HIDDEN))
async def test_hidden_characters_in_full_names_are_refused_on_every_path(api, ids, db, name):
    before = await db.fetchval(NAMES)
    made = await api.post("/orgs", as_="owner", json={"username": "neworg", "full_name": name})
    assert made.status == 422 and made.json["errors"] == ["full_name"]
    user = {"username": "newbie", "email": "n@example.com", "password": "long-password-1"}
    made = await api.post("/admin/users", as_="admin", json={**user, "full_name": name})
    assert made.status == 422 and made.json["errors"] == ["full_name"]
    edited = await api.call("PATCH", "/admin/users/mia", as_="admin", json={"full_name": name})
    assert edited.status == 422 and edited.json["errors"] == ["full_name"]
    assert await db.fetchval(NAMES) == before
    made = "SELECT count(*) FROM core.accounts WHERE name IN ('neworg', 'newbie')"
    assert await db.fetchval(made) == 0


@pytest.mark.parametrize("name", SHOWN)
async def test_names_people_write_are_stored(api, ids, name):
    made = await api.post("/orgs", as_="owner", json={"username": "neworg", "full_name": name})
    assert made.status == 201 and made.json["full_name"] == name
    edited = await api.call("PATCH", "/admin/users/mia", as_="admin", json={"full_name": name})
    assert edited.status == 200 and edited.json["full_name"] == name
