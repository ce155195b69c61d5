"""SQL of the feeds: what each Velopack package's `.nuspec` says, kept per asset (migration
0009_velopack_packages.sql, feeds/nuspec.py)."""

from __future__ import annotations

from collections.abc import Sequence

from forge_common.db import Queryable

from .nuspec import Package


async def packages_of(db: Queryable, asset_ids: Sequence[int]) -> dict[int, Package]:
    """The kept reading of each of these assets that has one."""
    rows = await db.fetch(
        """SELECT asset_id, package_id, version, channel, notes_markdown, notes_html
             FROM releases.velopack_packages WHERE asset_id = ANY($1::bigint[])""",
        list(asset_ids),
    )
    return {
        row["asset_id"]: Package(
            row["package_id"],
            row["version"],
            row["channel"],
            row["notes_markdown"],
            row["notes_html"],
        )
        for row in rows
    }


async def keep_package(db: Queryable, asset_id: int, package: Package) -> None:
    """Keep the reading of one asset (another replica may have kept the same one first)."""
    await db.execute(
        """INSERT INTO releases.velopack_packages
               (asset_id, package_id, version, channel, notes_markdown, notes_html)
           SELECT $1, $2, $3, $4, $5, $6 WHERE EXISTS
                  (SELECT 1 FROM releases.assets WHERE id = $1)
           ON CONFLICT (asset_id) DO NOTHING""",
        asset_id,
        package.package_id,
        package.version,
        package.channel,
        package.notes_markdown,
        package.notes_html,
    )
