#!/usr/bin/env python3
"""Offline check of pods against the Pod Security Standards (`baseline`, `restricted`), for
`make deploy-check`: no API server runs here, so neither `kubectl apply --dry-run=server` nor the
admission controller can be asked.

    pod_security.py --namespaces deploy/k8s/base/namespace.yaml MANIFESTS.yaml|-
    pod_security.py --namespaces deploy/k8s/base/namespace.yaml --docs docs/deploy.md [--print-pods]

With manifests (`kubectl kustomize DIR | ...`), every pod template (Pod, Deployment, StatefulSet,
DaemonSet, ReplicaSet, Job, CronJob) is checked against the level its namespace enforces (the
label `pod-security.kubernetes.io/enforce` of the Namespace documents given). With `--docs`, every
`kubectl run` written in the Markdown files' shell blocks is turned into the pod kubectl would
create (its generated Pod with `--overrides` applied as a JSON merge patch, kubectl's default
`--override-type=merge`) and checked the same way: the documented one-off commands must pass the
namespace's policy as the manifests do. `--print-pods` writes those pods as YAML for
kubernetes-validate. Exit status 1 when anything is refused, naming the pod and the control.

The controls are those of https://kubernetes.io/docs/concepts/security/pod-security-standards/
(version "latest"), written out here; docs/deploy.md "Pod Security" says what is checked.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

LEVELS = ("privileged", "baseline", "restricted")
ENFORCE_LABEL = "pod-security.kubernetes.io/enforce"
BASELINE_CAPABILITIES = {
    "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
    "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
}  # fmt: skip
SAFE_SYSCTLS = {
    "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
}  # fmt: skip
RESTRICTED_VOLUMES = {
    "configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim",
    "projected", "secret",
}  # fmt: skip
SELINUX_TYPES = {"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}


def _containers(spec: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    for key in ("initContainers", "containers", "ephemeralContainers"):
        yield from spec.get(key) or []


def baseline(spec: Mapping[str, Any]) -> list[str]:
    """What the `baseline` level refuses in a pod spec."""
    found = [f"{key}=true" for key in ("hostNetwork", "hostPID", "hostIPC") if spec.get(key)]
    found += [f"volume {v['name']}: hostPath" for v in spec.get("volumes") or [] if "hostPath" in v]
    pod_context = spec.get("securityContext") or {}
    for sysctl in pod_context.get("sysctls") or []:
        if sysctl.get("name") not in SAFE_SYSCTLS:
            found.append(f"sysctl {sysctl.get('name')} is not a safe one")
    found += _profiles("pod", pod_context)
    for container in _containers(spec):
        name, context = container.get("name", "?"), container.get("securityContext") or {}
        if context.get("privileged"):
            found.append(f"container {name}: privileged")
        added = set((context.get("capabilities") or {}).get("add") or []) - BASELINE_CAPABILITIES
        if added:
            found.append(f"container {name}: adds capabilities {sorted(added)}")
        for port in container.get("ports") or []:
            if port.get("hostPort"):
                found.append(f"container {name}: hostPort {port['hostPort']}")
        if context.get("procMount", "Default") != "Default":
            found.append(f"container {name}: procMount {context['procMount']}")
        found += _profiles(f"container {name}", context)
    return found


def _profiles(where: str, context: Mapping[str, Any]) -> list[str]:
    found = []
    seccomp = (context.get("seccompProfile") or {}).get("type")
    if seccomp == "Unconfined":
        found.append(f"{where}: seccompProfile Unconfined")
    apparmor = (context.get("appArmorProfile") or {}).get("type")
    if apparmor == "Unconfined":
        found.append(f"{where}: appArmorProfile Unconfined")
    selinux = context.get("seLinuxOptions") or {}
    if selinux.get("type", "") not in SELINUX_TYPES or selinux.get("user") or selinux.get("role"):
        found.append(f"{where}: seLinuxOptions {selinux}")
    return found


def restricted(spec: Mapping[str, Any]) -> list[str]:
    """What the `restricted` level refuses in a pod spec (baseline's controls included)."""
    found = baseline(spec)
    for volume in spec.get("volumes") or []:
        kinds = set(volume) - {"name"}
        if not kinds <= RESTRICTED_VOLUMES:
            found.append(f"volume {volume['name']}: type {sorted(kinds)} is not allowed")
    pod = spec.get("securityContext") or {}
    if pod.get("runAsUser") == 0:
        found.append("pod: runAsUser 0")
    for container in _containers(spec):
        name, context = container.get("name", "?"), container.get("securityContext") or {}
        if context.get("allowPrivilegeEscalation") is not False:
            found.append(f"container {name}: allowPrivilegeEscalation must be false")
        if context.get("runAsNonRoot", pod.get("runAsNonRoot")) is not True:
            found.append(f"container {name}: runAsNonRoot must be true (pod or container)")
        if context.get("runAsUser") == 0:
            found.append(f"container {name}: runAsUser 0")
        seccomp = (context.get("seccompProfile") or pod.get("seccompProfile") or {}).get("type")
        if seccomp not in ("RuntimeDefault", "Localhost"):
            found.append(f"container {name}: seccompProfile must be RuntimeDefault or Localhost")
        capabilities = context.get("capabilities") or {}
        if "ALL" not in (capabilities.get("drop") or []):
            found.append(f"container {name}: capabilities must drop ALL")
        added = set(capabilities.get("add") or []) - {"NET_BIND_SERVICE"}
        if added:
            found.append(f"container {name}: may add only NET_BIND_SERVICE, not {sorted(added)}")
    return found


CHECKS = {"privileged": lambda spec: [], "baseline": baseline, "restricted": restricted}


def pod_specs(doc: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The pod spec a manifest creates pods from, or None."""
    kind, spec = doc.get("kind"), doc.get("spec") or {}
    if kind == "Pod":
        return spec
    if kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"):
        return (spec.get("template") or {}).get("spec")
    if kind == "CronJob":
        return (((spec.get("jobTemplate") or {}).get("spec") or {}).get("template") or {}).get(
            "spec"
        )
    return None


def namespace_levels(docs: list[Mapping[str, Any]]) -> dict[str, str]:
    return {
        d["metadata"]["name"]: (d["metadata"].get("labels") or {}).get(ENFORCE_LABEL, "privileged")
        for d in docs
        if d.get("kind") == "Namespace"
    }


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch: what `kubectl run --overrides` applies by default."""
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def _shell_commands(markdown: str) -> Iterator[str]:
    """Each command line of the ```sh blocks, continuation lines joined."""
    for block in re.findall(r"^ *```sh\n(.*?)^ *```", markdown, flags=re.MULTILINE | re.DOTALL):
        yield from re.sub(r"\\\n\s*", " ", block).splitlines()


def kubectl_run_pods(markdown: str) -> list[dict[str, Any]]:
    """The pods the `kubectl run` commands of `markdown` create, as kubectl generates them."""
    pods = []
    for line in _shell_commands(markdown):
        words = shlex.split(line, comments=True)
        if "kubectl" not in words:
            continue
        words = words[words.index("kubectl") + 1 :]
        if "run" not in words:
            continue
        pods.append(_generated_pod(words))
    return pods


def _generated_pod(words: list[str]) -> dict[str, Any]:
    options: dict[str, str] = {}
    positional: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word in ("-n", "--namespace"):
            options["namespace"], index = words[index + 1], index + 2
            continue
        if word.startswith("--") and "=" in word:
            key, _, value = word[2:].partition("=")
            options[key] = value
        elif not word.startswith("-"):
            positional.append(word)
        index += 1
    name = positional[positional.index("run") + 1]
    labels = dict(pair.split("=", 1) for pair in options.get("labels", f"run={name}").split(","))
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": options.get("namespace", "default"),
            "labels": labels,
        },
        "spec": {
            "containers": [{"name": name, "image": options.get("image", "")}],
            "restartPolicy": options.get("restart", "Always"),
        },
    }
    if options.get("override-type", "merge") != "merge":
        raise SystemExit(f"{name}: only --override-type=merge is understood here")
    patched: dict[str, Any] = merge_patch(pod, json.loads(options.get("overrides", "{}")))
    return patched


def check(docs: list[Mapping[str, Any]], levels: Mapping[str, str]) -> list[str]:
    problems = []
    for doc in docs:
        spec = pod_specs(doc)
        if spec is None:
            continue
        namespace = doc.get("metadata", {}).get("namespace", "default")
        level = levels.get(namespace, "privileged")
        where = f"{doc['kind']} {namespace}/{doc['metadata']['name']} ({level})"
        problems += [f"{where}: {problem}" for problem in CHECKS[level](spec)]
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--namespaces", type=Path, required=True, help="the Namespace manifests")
    parser.add_argument("--docs", type=Path, nargs="*", default=[], help="Markdown files")
    parser.add_argument("--print-pods", action="store_true", help="write the docs' pods as YAML")
    parser.add_argument("manifests", nargs="?", help="a YAML stream (- for standard input)")
    args = parser.parse_args(argv)
    levels = namespace_levels(list(yaml.safe_load_all(args.namespaces.read_text())))
    docs: list[Mapping[str, Any]] = []
    if args.manifests:
        text = sys.stdin.read() if args.manifests == "-" else Path(args.manifests).read_text()
        docs += [doc for doc in yaml.safe_load_all(text) if doc]
        levels |= namespace_levels(docs)
    for path in args.docs:
        docs += kubectl_run_pods(path.read_text())
    if args.print_pods:
        print(yaml.safe_dump_all([d for d in docs if d.get("kind") == "Pod"]), end="")
        return 0
    problems = check(docs, levels)
    for problem in problems:
        print(f"pod security: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
