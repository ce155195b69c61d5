"""The baseline of the benchmark: a minimal aiohttp app (uvloop, like `forge serve`) that answers
every GET with the bytes of one file, as application/json (or CONTENT_TYPE).

    python baseline.py BODY_FILE PORT [CONTENT_TYPE]
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import uvloop
from aiohttp import web


def main() -> None:
    body = Path(sys.argv[1]).read_bytes()
    port = int(sys.argv[2])
    headers = {"Content-Type": sys.argv[3] if len(sys.argv) > 3 else "application/json"}

    async def handler(request: web.Request) -> web.Response:
        return web.Response(body=body, headers=headers)

    app = web.Application()
    app.router.add_get("/{tail:.*}", handler)
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    web.run_app(app, host="127.0.0.1", port=port, print=None, access_log=None)


if __name__ == "__main__":
    main()
