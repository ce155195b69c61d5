"""Render the forge nginx template (forge.conf.template) without envsubst.

    render.py --k8s                       the Kubernetes config (deploy/k8s/base/nginx/forge.conf)
    render.py --listen A --releases A --orgs A --gateway A         forge.conf on stdout
    render.py --prefix DIR --listen A ...  a plain-process prefix (DIR/nginx.conf, DIR/forge.conf,
                                           DIR/logs, DIR/temp) for
        nginx -p DIR/ -e logs/error.log -c nginx.conf -g 'daemon off;'

The end-to-end tests import `render` and `write_prefix` from this file. Standard library only.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
TEMPLATE = HERE / "forge.conf.template"
MAIN_CONF = HERE / "nginx.conf"
PLACEHOLDERS = ("NGINX_LISTEN", "RELEASES_UPSTREAM", "ORGS_UPSTREAM", "GATEWAY_UPSTREAM")
# In Kubernetes the services are reached by their Service names (deploy/k8s/base).
K8S_VALUES = {
    "NGINX_LISTEN": "8080",
    "RELEASES_UPSTREAM": "releases:8080",
    "ORGS_UPSTREAM": "orgs:8080",
    "GATEWAY_UPSTREAM": "gateway:8080",
    # the volume the nginx pod shares with its sidecar, which counts the checks answered from
    # the micro-cache (deploy/k8s/base/nginx.yaml, docs/insights.md "In Kubernetes")
    "INSIGHTS_LOG": "/var/log/forge-insights/hits.log",
}
# Placeholders with a value unless given: the asset folder where the containers mount it.
DEFAULTS = {
    "STORAGE_ROOT": "/var/lib/forge/storage",
    # the nginx image's access log (its nginx.conf names it too)
    "ACCESS_LOG": "/var/log/nginx/access.log",
    # compose mounts a volume there, shared with the releases service (INSIGHTS_PROXY_LOG)
    "INSIGHTS_LOG": "/var/log/forge-insights/hits.log",
}
# A plain-process prefix (write_prefix): its own nginx.conf's access log, and the hits in logs/.
PREFIX_DEFAULTS = {"ACCESS_LOG": "logs/access.log", "INSIGHTS_LOG": "logs/insights-hits.log"}
_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def render(values: Mapping[str, str], template: str | None = None) -> str:
    """The template with every `${NAME}` replaced; an unknown or missing name is an error."""
    text = TEMPLATE.read_text(encoding="utf-8") if template is None else template
    values = {**DEFAULTS, **values}

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            raise KeyError(f"no value for ${{{name}}} in the nginx template")
        return values[name]

    return _PLACEHOLDER.sub(substitute, text)


def write_prefix(prefix: Path, values: Mapping[str, str]) -> Path:
    """Lay out a prefix folder nginx can run from as a plain process; returns the prefix."""
    prefix.mkdir(parents=True, exist_ok=True)
    (prefix / "logs").mkdir(exist_ok=True)
    (prefix / "temp").mkdir(exist_ok=True)
    shutil.copyfile(MAIN_CONF, prefix / "nginx.conf")
    (prefix / "forge.conf").write_text(render({**PREFIX_DEFAULTS, **values}), encoding="utf-8")
    return prefix


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k8s", action="store_true", help="render with the Kubernetes addresses")
    parser.add_argument("--listen", help="address nginx listens on, e.g. 127.0.0.1:8080")
    parser.add_argument("--releases", help="host:port of the releases service")
    parser.add_argument("--orgs", help="host:port of the orgs service")
    parser.add_argument("--gateway", help="host:port of the plugin gateway")
    parser.add_argument("--prefix", type=Path, help="write a plain-process prefix folder here")
    args = parser.parse_args(argv)
    if args.k8s:
        header = (
            "# Rendered from forge.conf.template by deploy/nginx/render.py --k8s. Do not edit.\n"
        )
        sys.stdout.write(header + render(K8S_VALUES))
        return 0
    given = (args.listen, args.releases, args.orgs, args.gateway)
    if not all(given):
        parser.error("--listen, --releases, --orgs and --gateway are required without --k8s")
    values = dict(zip(PLACEHOLDERS, given, strict=True))
    if args.prefix is None:
        sys.stdout.write(render(values))
        return 0
    prefix = write_prefix(args.prefix.resolve(), values)
    print(f"nginx -p {prefix}/ -e logs/error.log -c nginx.conf -g 'daemon off;'")
    return 0


if __name__ == "__main__":
    sys.exit(main())
