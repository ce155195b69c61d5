"""forge at `https://127.0.0.1/` on port 443, for clients that speak nothing else
(electron-builder's GitHubPublisher builds every address from `https://${host}` and uploads to
the hostname of `upload_url` with the port dropped).

Port 443 of the machine is not the test's to take, so the client and a TLS-terminating nginx run
in a network namespace the test creates (`ip netns`), where 127.0.0.1:443 is the namespace's own
loopback and no traffic leaves it. That nginx reaches the running stack through a Unix socket
(a path on the file system, not bound to a network namespace) on which a second nginx, in the
machine's namespace, relays to the stack's own nginx on 127.0.0.1. Both are real nginx with
configurations written here; the certificate is a fresh CA's, trusted by Node through
NODE_EXTRA_CA_CERTS.
"""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from forge_testing.nginx import find_nginx
from forge_testing.waiting import until

START_TIMEOUT = 15.0
HOST = "127.0.0.1"  # inside the namespace


@dataclass(frozen=True)
class TlsFront:
    namespace: str
    ca_file: Path

    def run(
        self, argv: list[str], env: dict[str, str], timeout: float
    ) -> subprocess.CompletedProcess[str]:
        """`argv` inside the namespace, trusting the front's CA."""
        clean = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
        full = {**clean, **env, "NODE_EXTRA_CA_CERTS": str(self.ca_file)}
        return subprocess.run(
            ["ip", "netns", "exec", self.namespace, *argv],
            env=full,
            capture_output=True,
            text=True,
            timeout=timeout,
        )


def _skip_unless_namespaces() -> None:
    if os.geteuid() != 0:
        pytest.skip("creating a network namespace needs root (ip netns); CI runs as root")
    if shutil.which("ip") is None:
        pytest.skip("the ip command (iproute2) is not installed")
    if find_nginx() is None:
        pytest.skip("nginx is not installed (make deploy-tools installs it as root)")


@contextlib.contextmanager
def _namespace() -> Iterator[str]:
    name = f"forge-e2e-{os.getpid()}"
    added = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True)
    if added.returncode != 0:
        pytest.skip(f"this machine cannot create a network namespace: {added.stderr.strip()}")
    try:
        subprocess.run(
            ["ip", "netns", "exec", name, "ip", "link", "set", "lo", "up"],
            check=True,
            capture_output=True,
        )
        yield name
    finally:
        subprocess.run(["ip", "netns", "delete", name], capture_output=True)


def _write_certificates(folder: Path) -> Path:
    """A fresh CA (returned: its PEM) and a server certificate for 127.0.0.1 signed by it."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "forge e2e test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=2))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, HOST)]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=2))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address(HOST)), x509.DNSName("localhost")]
            ),
            critical=False,
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    (folder / "ca.pem").write_bytes(ca.public_bytes(pem))
    (folder / "cert.pem").write_bytes(cert.public_bytes(pem) + ca.public_bytes(pem))
    (folder / "key.pem").write_bytes(
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return folder / "ca.pem"


_COMMON = """
worker_processes 1;
pid {name}.pid;
error_log logs/{name}-error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log off;
    client_body_temp_path temp/{name}-body;
    proxy_temp_path temp/{name}-proxy;
    fastcgi_temp_path temp/{name}-fastcgi;
    uwsgi_temp_path temp/{name}-uwsgi;
    scgi_temp_path temp/{name}-scgi;
    client_max_body_size 0;
    server {{
        listen {listen};
        {tls}
        location / {{
            proxy_pass {upstream};
            proxy_http_version 1.1;
            proxy_set_header Host $http_host;
            proxy_set_header Connection "";
            {forwarded}
        }}
    }}
}}
"""


def _start_nginx(prefix: Path, name: str, conf: str, wrapper: list[str]) -> subprocess.Popen[bytes]:
    (prefix / f"{name}.conf").write_text(conf)
    nginx = find_nginx()
    assert nginx is not None
    argv = [*wrapper, nginx, "-p", f"{prefix}/", "-e", f"logs/{name}-error.log"]
    argv += ["-c", f"{name}.conf", "-g", "daemon off;"]
    with (prefix / "logs" / f"{name}.out").open("wb") as log:
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)

    def started() -> bool:
        if process.poll() is not None:
            errors = (prefix / "logs" / f"{name}-error.log").read_text(errors="replace")
            pytest.fail(f"nginx ({name}) exited: {errors}")
        # nginx writes its pid file after opening its listening sockets
        return (prefix / f"{name}.pid").exists()

    until(started, START_TIMEOUT, lambda: f"nginx ({name}) did not start")
    return process


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


@contextlib.contextmanager
def tls_front(stack_nginx_port: int) -> Iterator[TlsFront]:
    """The stack's nginx (127.0.0.1:`stack_nginx_port`) also at https://127.0.0.1/ inside a
    network namespace of its own; skips where the machine cannot make one."""
    _skip_unless_namespaces()
    # nginx's workers run as `nobody` when started as root: the prefix must be traversable
    prefix = Path(tempfile.mkdtemp(prefix="forge-e2e-tls-"))
    prefix.chmod(0o755)
    (prefix / "logs").mkdir()
    (prefix / "temp").mkdir()
    processes: list[subprocess.Popen[bytes]] = []
    try:
        with _namespace() as namespace:
            ca_file = _write_certificates(prefix)
            socket = prefix / "relay.sock"
            relay = _COMMON.format(
                name="relay",
                listen=f"unix:{socket}",
                tls="",
                upstream=f"http://127.0.0.1:{stack_nginx_port}",
                forwarded="proxy_set_header X-Forwarded-Proto $http_x_forwarded_proto;",
            )
            processes.append(_start_nginx(prefix, "relay", relay, []))
            socket.chmod(0o666)  # the TLS front's workers (nobody) connect to it
            front = _COMMON.format(
                name="front",
                listen=f"{HOST}:443 ssl",
                tls="ssl_certificate cert.pem; ssl_certificate_key key.pem;",
                upstream=f"http://unix:{socket}:",
                forwarded="proxy_set_header X-Forwarded-Proto https;",
            )
            wrapper = ["ip", "netns", "exec", namespace]
            processes.append(_start_nginx(prefix, "front", front, wrapper))
            yield TlsFront(namespace, ca_file)
    finally:
        for process in reversed(processes):
            _stop(process)
        shutil.rmtree(prefix, ignore_errors=True)
