"""One pooled connection per request, typed as a plain connection.

The pool hands out proxies that behave as `asyncpg.Connection` (and pass `isinstance` for it) but
are typed apart in the stubs; this is the one place that says so, instead of a cast per call.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeAlias, cast

import asyncpg
from aiohttp import web
from forge_common.keys import DB_POOL

if TYPE_CHECKING:
    Conn: TypeAlias = asyncpg.Connection[Any]
else:  # the class is not subscriptable at run time
    Conn = asyncpg.Connection


@asynccontextmanager
async def connection(request: web.Request) -> AsyncIterator[Conn]:
    async with request.app[DB_POOL].acquire() as proxy:
        yield cast(Conn, proxy)
