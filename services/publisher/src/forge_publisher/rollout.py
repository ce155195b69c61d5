"""`forge release rollout show|plan|pause|resume|jump|finish OWNER/REPO TAG` (docs/rollouts.md
"CLI"): a release's rollout plan through the HTTP API at FORGE_URL with FORGE_TOKEN. `show` prints
the state, the step, why the last decision was taken and the steps; `plan` sets one from
`--steps 5:3600,25:86400,100:86400` (percent:seconds[:installs]); the others act at once and
print the state after. Exit status 0 on success, 1 with a one-line `forge: ...` message."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from .client import PublishError
from .connection import Target
from .keys import call_api, run_api_command

DENIED = "only those who may publish releases of the repository can change its plan (403)"


def add_rollout_commands(actions: Any) -> None:
    rollout = actions.add_parser(
        "rollout",
        help="show or change a release's rollout plan",
        description="Uses FORGE_URL (default http://localhost:8080/) and FORGE_TOKEN.",
    )
    commands = rollout.add_subparsers(dest="rollout_command", required=True)
    for name, text in (
        ("show", "the plan's state, step and why"),
        ("plan", "set (or replace) the plan"),
        ("pause", "pause a running plan"),
        ("resume", "resume a paused or halted plan"),
        ("jump", "go to a step"),
        ("finish", "offer the release to every install now"),
    ):
        command = commands.add_parser(name, help=text)
        command.add_argument("repository", metavar="OWNER/REPO")
        command.add_argument("tag", metavar="TAG")
    plan = commands.choices["plan"]
    plan.add_argument("--steps", required=True, help="percent:seconds[:installs],... e.g. 5:3600")
    plan.add_argument("--on-failure", choices=("halt", "withdraw"), default="halt")
    plan.add_argument("--no-uptake-gate", action="store_true", help="turn the uptake gate off")
    plan.add_argument("--no-external-gate", action="store_true", help="turn the health gate off")
    commands.choices["jump"].add_argument("--step", type=int, required=True, help="from 1")
    rollout.set_defaults(handler=run)


def steps_of(text: str) -> list[dict[str, int]]:
    steps = []
    for part in text.split(","):
        numbers = part.strip().split(":")
        if not 2 <= len(numbers) <= 3 or not all(n.strip().isdigit() for n in numbers):
            raise PublishError(f"--steps: {part.strip()!r} is not percent:seconds[:installs]")
        keys = ("percent", "hold_seconds", "min_installs")
        steps.append({key: int(n) for key, n in zip(keys, numbers, strict=False)})
    return steps


def describe(plan: Mapping[str, Any], tag: str) -> str:
    steps = plan["steps"]
    lines = [
        f"{tag}: {plan['state']}, step {plan['step'] + 1} of {len(steps)}, offered to "
        f"{plan['percent']}% of installs",
        f"why: {plan['reason']}",
        "steps: " + ", ".join(f"{s['percent']}% for {s['hold_seconds']}s" for s in steps),
    ]
    return "\n".join(lines)


def _body(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "steps": steps_of(args.steps),
        "on_failure": args.on_failure,
        "gates": {
            "uptake": {"enabled": not args.no_uptake_gate},
            "external": {"enabled": not args.no_external_gate},
        },
    }


async def _run(args: argparse.Namespace, where: Target) -> None:
    release = await call_api(where, "GET", "releases", f"/{quote(args.tag, safe='')}")
    path = f"/{release['id']}/rollout_plan"
    command = args.rollout_command
    if command == "show":
        plan = await call_api(where, "GET", "releases", path)
    elif command == "plan":
        plan = await call_api(where, "PUT", "releases", path, body=_body(args), denied=DENIED)
    elif command == "jump":
        plan = await call_api(
            where, "POST", "releases", f"{path}/jump", {"step": args.step - 1}, DENIED
        )
    else:
        plan = await call_api(where, "POST", "releases", f"{path}/{command}", denied=DENIED)
    print(describe(plan, args.tag))


def run(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    """The handler of `forge release rollout ...`: exit status."""
    return run_api_command(_run, args, env)
