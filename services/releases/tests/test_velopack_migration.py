"""Migration 0009 adds the kept readings of Velopack packages (releases.velopack_packages) to a
database that already holds releases and assets, as an upgrade does: nothing is read at
migration time (the feed reads each package the first time it needs it), the assets in place take
readings, and a reading goes with its asset."""

from __future__ import annotations

from forge_common.db import connect
from forge_common.migrations import migrate
from forge_common.service import all_migrations, installed_services
from forge_releases.feeds import queries
from forge_releases.feeds.nuspec import NOT_VELOPACK, Package


async def test_the_table_of_package_readings_joins_a_database_with_assets(
    pg_server_url: str, database_url: str
) -> None:
    name = "forge_releases_velopack_upgrade"
    admin = await connect(pg_server_url)
    await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    await admin.execute(f'CREATE DATABASE "{name}"')
    url = database_url.rsplit("/", 1)[0] + "/" + name
    everything = all_migrations(installed_services())
    before = [m for m in everything if not (m.schema == "releases" and m.version >= 9)]
    conn = await connect(url)
    try:
        await migrate(conn, before)
        assets = await conn.fetch(
            """WITH o AS (INSERT INTO core.accounts (kind, name) VALUES ('user', 'owner')
                          RETURNING id),
                    r AS (INSERT INTO core.repositories (owner_id, name)
                          SELECT id, 'app' FROM o RETURNING id),
                    rel AS (INSERT INTO releases.releases (repo_id, tag) SELECT id, 'v1.0.0' FROM r
                            RETURNING id)
               INSERT INTO releases.assets (release_id, name, size, sha1, sha256, sha512)
               SELECT rel.id, n, 3, '', '', '' FROM rel,
                      unnest(ARRAY['App-1.0.0-full.nupkg', 'Old-1.0.0-full.nupkg']) AS n
               RETURNING id"""
        )
        full, old = (row["id"] for row in assets)
        applied = await migrate(conn, everything)
        # 0009 and whatever came after it (0011 release safety...)
        later = [(m.schema, m.version) for m in everything if m not in before]
        assert [(m.schema, m.version) for m in applied] == later and later[0] == ("releases", 9)
        assert await queries.packages_of(conn, [full, old]) == {}  # read later, by the feed

        package = Package("App", "1.0.0", "linux", "notes", "<p>notes</p>")
        await queries.keep_package(conn, full, package)
        await queries.keep_package(conn, old, NOT_VELOPACK)
        await queries.keep_package(conn, full, NOT_VELOPACK)  # another replica's, later: kept
        await queries.keep_package(conn, 10**9, package)  # an asset deleted meanwhile: nothing
        assert await queries.packages_of(conn, [full, old, 10**9]) == {
            full: package,
            old: NOT_VELOPACK,
        }
        await conn.execute("DELETE FROM releases.assets WHERE id = $1", full)
        assert await queries.packages_of(conn, [full, old]) == {old: NOT_VELOPACK}
    finally:
        await conn.close()
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()
