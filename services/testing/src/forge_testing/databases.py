"""A fresh, migrated, empty database for each test: cloned from the template, or a database an
earlier test used, emptied again.

A clone (`CREATE DATABASE ... TEMPLATE`) copies every page of the template, catalogs included:
30-450 ms of PostgreSQL's CPU a test on this 2-core machine, more than many tests take
(docs/decisions.md "A test's database"). Emptying a used one costs far less. It is done only
when the result cannot be told from a clone:

1. every other connection to it is ended, and it is renamed, so nothing a test left behind (a
   process, a pool reconnecting) reaches the next test's database under the old name;
2. the rows of every table the template holds none in are deleted (with the foreign keys' and
   the tables' triggers off: every such table is emptied), and every sequence, identities
   included, is set back to the template's state; each table with pages is vacuumed, so
   it holds no page again, and its planner's counts and autovacuum's counters are reset. Not
   TRUNCATE: it gives every table and index it names new files even when empty, and PostgreSQL
   spends about half as much CPU deleting and vacuuming the few tables a test filled
   (docs/decisions.md "A test's database");
3. its fingerprint (schemas, tables, columns, constraints, indexes, functions, triggers, the
   database's settings, the content of the tables the template has rows in, such as the
   migrations' record, and which tables the planner or the next rows could tell from a
   clone's: statistics, counts, any page; indexes of 10 pages or more) is compared with the
   template's. Anything a test changed there, or any step that fails, and the database is
   dropped instead: the next test gets a clone.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import threading
from collections.abc import Coroutine
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import asyncpg

T = TypeVar("T")
_counter = itertools.count()

# one text of everything a test could change besides rows: compared with the template's
FINGERPRINT = """
WITH user_ns AS (
    SELECT oid, nspname FROM pg_namespace
     WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema')
SELECT md5(concat_ws('|',
  (SELECT string_agg(nspname, ',' ORDER BY nspname) FROM user_ns),
  (SELECT string_agg(n.nspname || '.' || c.relname || ':' || c.relkind::text || ':'
                     || c.relpersistence::text, ',' ORDER BY n.nspname, c.relname)
     FROM pg_class c JOIN user_ns n ON n.oid = c.relnamespace),
  (SELECT string_agg(a.attrelid::regclass::text || '.' || a.attname || ':'
                     || format_type(a.atttypid, a.atttypmod) || ':' || a.attnotnull || ':'
                     || coalesce(pg_get_expr(d.adbin, d.adrelid), ''),
                     ',' ORDER BY a.attrelid::regclass::text, a.attnum)
     FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
     JOIN user_ns n ON n.oid = c.relnamespace
     LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    WHERE a.attnum > 0 AND NOT a.attisdropped),
  (SELECT string_agg(conrelid::regclass::text || '.' || conname || ':' || pg_get_constraintdef(oid),
                     ',' ORDER BY conrelid::regclass::text, conname)
     FROM pg_constraint WHERE connamespace IN (SELECT oid FROM user_ns)),
  (SELECT string_agg(pg_get_indexdef(indexrelid), ',' ORDER BY indexrelid::regclass::text)
     FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
    WHERE c.relnamespace IN (SELECT oid FROM user_ns)),
  (SELECT string_agg(p.oid::regprocedure::text || ':' || md5(p.prosrc), ','
                     ORDER BY p.oid::regprocedure::text)
     FROM pg_proc p WHERE p.pronamespace IN (SELECT oid FROM user_ns)),
  (SELECT string_agg(tgrelid::regclass::text || '.' || tgname || ':' || tgenabled::text, ','
                     ORDER BY tgrelid::regclass::text, tgname)
     FROM pg_trigger WHERE NOT tgisinternal),
  (SELECT string_agg(array_to_string(setconfig, ';'), ',' ORDER BY setrole)
     FROM pg_db_role_setting
    WHERE setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())),
  (SELECT count(*) FROM pg_largeobject_metadata)::text,
  (SELECT string_agg(extname || ':' || extversion, ',' ORDER BY extname) FROM pg_extension),
  -- what the planner and the next rows see of a table besides its rows: analyzed (or
  -- vacuumed, unless reset), or any page (a clone's empty tables have none: new rows lie in
  -- the order written); of an index, 10 pages or more
  (SELECT string_agg(c.oid::regclass::text, ',' ORDER BY c.oid::regclass::text)
     FROM pg_class c JOIN user_ns n ON n.oid = c.relnamespace
    WHERE c.relkind = 'r' AND (c.reltuples >= 0 OR pg_relation_size(c.oid) > 0
                               OR EXISTS (SELECT FROM pg_statistic s WHERE s.starelid = c.oid))
       OR c.relkind = 'i' AND pg_relation_size(c.oid) >= 10 * current_setting('block_size')::int)
))"""

USER_TABLES = """
SELECT format('%I.%I', n.nspname, c.relname) AS name, c.oid
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition
   AND n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema'
 ORDER BY 1"""

SEQUENCES = """
SELECT format('%I.%I', schemaname, sequencename) AS name, start_value, last_value
  FROM pg_sequences ORDER BY 1"""


@dataclass(frozen=True, slots=True)
class TemplateState:
    """What a used database must hold again to be taken for a fresh clone."""

    emptied: tuple[str, ...]  # the tables the template has no row in
    kept: tuple[str, ...]  # the tables it has rows in (compared in the fingerprint)
    filled: str  # a query: the positions in `emptied` of the tables with pages (rows)
    sequences: tuple[tuple[str, int, int | None], ...]  # (name, start, last value or None)
    fingerprint: str


async def execute(url: str, statements: str) -> None:
    """Run `statements` (one or several) on the database at `url`, on a connection of their own."""
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(statements)
    finally:
        await conn.close()


def with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


async def _content(conn: asyncpg.Connection[Any], tables: tuple[str, ...]) -> str:
    parts = []
    for table in tables:
        sql = f"SELECT md5(string_agg(t::text, ',' ORDER BY t::text)) FROM {table} t"
        parts.append(str(await conn.fetchval(sql)))
    return ",".join(parts)


async def fingerprint(conn: asyncpg.Connection[Any], kept: tuple[str, ...]) -> str:
    return f"{await conn.fetchval(FINGERPRINT)}/{await _content(conn, kept)}"


async def template_state(template_url: str) -> TemplateState:
    conn = await asyncpg.connect(template_url)
    try:
        oids = {row["name"]: row["oid"] for row in await conn.fetch(USER_TABLES)}  # as in a clone
        tables = list(oids)
        kept = tuple([t for t in tables if await conn.fetchval(f"SELECT EXISTS (SELECT FROM {t})")])
        emptied = tuple(t for t in tables if t not in kept)
        sequences = tuple(
            (row["name"], row["start_value"], row["last_value"])
            for row in await conn.fetch(SEQUENCES)
        )
        # rows, or the pages of rows deleted since (a relay's outbox, say)
        filled = " UNION ALL ".join(
            f"SELECT {i} AS position WHERE EXISTS (SELECT FROM {t})"
            f" OR pg_relation_size({oids[t]}) > 0"
            for i, t in enumerate(emptied)
        )
        return TemplateState(emptied, kept, filled, sequences, await fingerprint(conn, kept))
    finally:
        await conn.close()


async def empty_again(url: str, state: TemplateState) -> bool:
    """Empty the database at `url` as the template is; whether it now matches the template."""
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("SET lock_timeout = '5s'")
        async with conn.transaction():
            rows = await conn.fetch(state.filled) if state.emptied else []
            filled = [state.emptied[row["position"]] for row in rows]
            if filled:
                # superuser only (the test cluster's); elsewhere this fails and the database
                # is dropped, as any failing step
                await conn.execute("SET LOCAL session_replication_role = replica")
                for table in filled:
                    await conn.execute(f"DELETE FROM {table}")
            for name, start, last in state.sequences:
                if last is None:
                    await conn.execute(f"SELECT setval('{name}', {start}, false)")
                else:
                    await conn.execute(f"SELECT setval('{name}', {last}, true)")
        if filled:
            await _as_never_filled(conn, filled)
        return await fingerprint(conn, state.kept) == state.fingerprint
    finally:
        await conn.close()


async def _as_never_filled(conn: asyncpg.Connection[Any], tables: list[str]) -> None:
    """Give emptied tables what a clone's have (docs/decisions.md "A test's database")."""
    for table in tables:
        # the deleted rows' pages: nobody else is connected, so VACUUM removes them all and
        # gives the file back (no page left, as a clone's table has none)
        await conn.execute(f"VACUUM {table}")
    # VACUUM counted the rows it left (none), which a clone's table never had counted: its
    # planner takes a table never counted to hold at least 10 pages
    await conn.execute("UPDATE pg_class SET reltuples = -1 WHERE oid = ANY($1::regclass[])", tables)
    # the counters autovacuum reads, the DELETEs' and the VACUUMs' included (written once this
    # connection is idle): a clone's are zero, so autovacuum would not analyze the next
    # test's tables for rows the last test wrote
    await conn.execute("SELECT pg_stat_force_next_flush()")
    await conn.execute("SELECT pg_stat_reset()")


class DatabaseFactory:
    """Hands out fresh databases, one ready ahead, and empties used ones again in the background
    (module docstring): a test waits for PostgreSQL only when it outruns the factory."""

    def __init__(self, server_url: str, template: str, template_url: str) -> None:
        self.server_url = server_url
        self.template = template
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._admin: asyncpg.Connection[Any] | None = None
        self._lock: asyncio.Lock | None = None
        self._next: Future[str] | None = None
        self._pending: list[Future[None]] = []
        self._emptied: list[str] = []  # used databases emptied again, ready for a test
        self._recycling = 0  # used databases being emptied now
        self._recycled: asyncio.Condition | None = None  # made in the loop's thread
        self._state = self._submit(template_state(template_url)).result(timeout=120)
        self.cloned = self.reused = 0  # how each database handed out was made

    def _submit(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    async def _execute(self, sql: str, *args: Any) -> Any:
        # one admin connection, one statement at a time (clones, renames and drops are queued)
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._admin is None:
                self._admin = await asyncpg.connect(self.server_url)
            return await self._admin.execute(sql, *args)

    def _condition(self) -> asyncio.Condition:
        if self._recycled is None:
            self._recycled = asyncio.Condition()
        return self._recycled

    async def _take(self) -> str:
        recycled = self._condition()
        async with recycled:  # a database being emptied is ready sooner than a clone
            await recycled.wait_for(lambda: self._emptied or not self._recycling)
        if self._emptied:
            self.reused += 1
            return self._emptied.pop()
        name = f"forge_test_{os.getpid()}_{next(_counter)}"
        await self._execute(f'CREATE DATABASE "{name}" TEMPLATE "{self.template}"')
        self.cloned += 1
        return name

    async def _recycle(self, name: str) -> None:
        self._recycling += 1
        try:
            await self._empty_or_drop(name)
        finally:
            self._recycling -= 1
            recycled = self._condition()
            async with recycled:
                recycled.notify_all()

    async def _empty_or_drop(self, name: str) -> None:
        """Empty `name` again under a new name (module docstring), or drop it."""
        fresh = f"forge_test_{os.getpid()}_{next(_counter)}"
        try:
            await self._execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", name
            )
            await self._rename(name, fresh)
        except (asyncpg.PostgresError, OSError):
            await self._execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            return
        try:
            matches = await empty_again(with_database(self.server_url, fresh), self._state)
        except (asyncpg.PostgresError, OSError):
            matches = False
        if matches:
            self._emptied.append(fresh)
        else:
            await self._execute(f'DROP DATABASE IF EXISTS "{fresh}" WITH (FORCE)')

    async def _rename(self, name: str, fresh: str) -> None:
        """Rename once the ended connections are gone (they end a moment after being told)."""
        for _ in range(100):
            try:
                await self._execute(f'ALTER DATABASE "{name}" RENAME TO "{fresh}"')
                return
            except asyncpg.ObjectInUseError:
                await asyncio.sleep(0.05)
        raise asyncpg.ObjectInUseError(f"{name}: still in use")

    def acquire(self) -> str:
        ready = self._next or self._submit(self._take())
        name = ready.result(timeout=120)
        self._next = self._submit(self._take())
        return name

    def release(self, name: str) -> None:
        self._pending = [f for f in self._pending if not f.done()]
        self._pending.append(self._submit(self._recycle(name)))

    def close(self) -> None:
        futures: list[Future[Any]] = [*self._pending, *([self._next] if self._next else [])]
        for future in futures:
            future.result(timeout=120)
        names = [*self._emptied, *([self._next.result()] if self._next else [])]
        for name in names:
            self._submit(self._execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')).result(
                timeout=120
            )
        if self._admin is not None:
            self._submit(self._admin.close()).result(timeout=30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=30)
        self._loop.close()
