"""TLS to a plugin (docs/plugins.md "The plugins file"): the `tls` entry of PLUGINS_FILE names the
CA that signed the plugin's certificate and the gateway's client certificate and key (mutual
TLS)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import grpc
import pytest

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")


def _run(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_pki(folder: Path) -> None:
    """A throwaway CA, a server certificate for 127.0.0.1 and a client certificate."""
    key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    _run(
        "req",
        "-x509",
        *key,
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "1",
        "-subj",
        "/CN=forge test CA",
        cwd=folder,
    )
    for name, extension in (
        ("server", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth"),
        ("client", "extendedKeyUsage=clientAuth"),
    ):
        (folder / f"{name}.ext").write_text(extension + "\n")
        _run(
            "req",
            *key,
            "-keyout",
            f"{name}.key",
            "-out",
            f"{name}.csr",
            "-subj",
            f"/CN={name}",
            cwd=folder,
        )
        _run(
            "x509",
            "-req",
            "-in",
            f"{name}.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            f"{name}.pem",
            "-days",
            "1",
            "-extfile",
            f"{name}.ext",
            cwd=folder,
        )


async def test_plugin_over_mutual_tls(
    gateway: Any, fakes: Any, helpers: Any, tmp_path: Path
) -> None:
    make_pki(tmp_path)
    credentials = grpc.ssl_server_credentials(
        [((tmp_path / "server.key").read_bytes(), (tmp_path / "server.pem").read_bytes())],
        root_certificates=(tmp_path / "ca.pem").read_bytes(),
        require_client_auth=True,
    )
    fake = helpers.FakePlugin("secure")
    await fake.start(0, credentials)
    try:
        tls = {
            "ca": str(tmp_path / "ca.pem"),
            "cert": str(tmp_path / "client.pem"),
            "key": str(tmp_path / "client.key"),
        }
        client = await gateway(
            [
                helpers.entry(fake, tls=tls),
                # Without a client certificate the plugin refuses the connection.
                helpers.entry("anonymous", address=fake.address, tls={"ca": tls["ca"]}),
                # Cleartext to a TLS port does not work either.
                helpers.entry("cleartext", address=fake.address),
            ]
        )
        assert helpers.managed(client, "secure").state == "ready"
        assert (await client.get("/api/v1/plugins/secure/hello")).status == 200
        assert helpers.managed(client, "anonymous").state == "down"
        assert helpers.managed(client, "cleartext").state == "down"
        assert fake.calls["Initialize"] == 1
        response = await client.get(
            "/api/v1/admin/plugins", headers={"Authorization": "token root-token"}
        )
        assert [p["tls"] for p in await response.json()] == [True, True, False]
        await client.close()
    finally:
        await fake.stop(0)
