"""Uploads are streamed: a real `forge serve --service releases` process receives a 64 MiB asset
and its peak RSS (VmHWM) grows by far less than that (the 1 GiB figure comes from
bench/releases/upload_rss.py)."""

from __future__ import annotations

import asyncio
import hashlib
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from forge_common.config import Settings
from forge_testing.ports import free_port
from forge_testing.processes import wait_until_ready

from .publish_support import TOKENS, api, publish_world

MIB = 1024 * 1024
UPLOAD = 64 * MIB
ALLOWED_GROWTH = 16 * MIB  # buffers of a few MiB at most; holding the file would be 64 MiB


def vm_hwm(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


async def blocks(sha: Any) -> AsyncIterator[bytes]:
    for i in range(UPLOAD // MIB):
        block = hashlib.sha512(i.to_bytes(4, "big")).digest() * (MIB // 64)
        sha.update(block)
        yield block


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc (Linux)")
async def test_64_mib_upload_keeps_server_peak_rss_growth_small(
    settings: Settings, load: Any
) -> None:
    await load(publish_world())
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    env = {
        **os.environ,
        "DATABASE_URL": settings.database_url,
        "STORAGE_PATH": str(settings.storage_path),
        "APP_URL": url,
        "LOG_LEVEL": "WARNING",
        "URL_SIGNING_SECRET": "test-url-signing-secret",
        "EVENTS_SECRET": "publish-memory-test-secret",
    }
    proc = await asyncio.create_subprocess_exec(
        str(Path(sys.executable).parent / "forge"),
        *("serve", "--service", "releases", "--host", "127.0.0.1", "--port", str(port)),
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
    )
    headers = {"Authorization": f"token {TOKENS['writer']}"}
    try:
        async with aiohttp.ClientSession() as http:
            await wait_until_ready(url + "readyz", exit_code=lambda: proc.returncode)
            async with http.post(
                url + api("owner/pub")[1:], json={"tag_name": "v9"}, headers=headers
            ) as resp:
                assert resp.status == 201
                rid = (await resp.json())["id"]
            assets = f"{url}{api('owner/pub')[1:]}/{rid}/assets"
            # warm up the upload path before the baseline
            async with http.post(f"{assets}?name=w.bin", data=b"w" * MIB, headers=headers) as resp:
                assert resp.status == 201
            before = vm_hwm(proc.pid)
            sha = hashlib.sha256()
            async with http.post(
                f"{assets}?name=big.bin",
                data=blocks(sha),
                headers={**headers, "Content-Length": str(UPLOAD)},
            ) as resp:
                body = await resp.json()
            growth = vm_hwm(proc.pid) - before
            assert resp.status == 201 and body["sha256"] == sha.hexdigest()
            # the same through multipart/form-data
            form_sha = hashlib.sha256()
            form = aiohttp.MultipartWriter("form-data")
            part = form.append_payload(aiohttp.payload.AsyncIterablePayload(blocks(form_sha)))
            part.set_content_disposition("form-data", name="attachment", filename="form.bin")
            async with http.post(assets, data=form, headers=headers) as resp:
                form_body = await resp.json()
            form_growth = vm_hwm(proc.pid) - before
            assert resp.status == 201 and form_body["sha256"] == form_sha.hexdigest()
        print(f"server peak RSS growth for a 64 MiB upload: {growth / MIB:.1f} MiB")
        print(f"... and after a 64 MiB multipart upload: {form_growth / MIB:.1f} MiB")
        assert growth < ALLOWED_GROWTH
        assert form_growth < ALLOWED_GROWTH
    finally:
        proc.terminate()
        await proc.wait()
