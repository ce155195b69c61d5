"""The baseline of the benchmark: a minimal aiohttp app (uvloop, like `forge serve`) that answers
every GET with the bytes of one file, as application/json.

    python baseline.py BODY_FILE PORT
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

    async def handler(request: web.Request) -> web.Response:
        return web.Response(body=body, content_type="application/json")

    app = web.Application()
    app.router.add_get("/{tail:.*}", handler)
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    web.run_app(app, host="127.0.0.1", port=port, print=None, access_log=None)


if __name__ == "__main__":
    main()
