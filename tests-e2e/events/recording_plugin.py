"""A plugin for the event fault tests, on the SDK: appends one line per OnEvent call to a file
(`<x-event-id> <type> <tag>`, flushed at once), so what it received survives its own restarts.
`--delay` keeps each call in flight that long (a gateway killed mid-delivery has calls to lose).

    python tests-e2e/events/recording_plugin.py --address 127.0.0.1:50051 --log events.log
"""

from __future__ import annotations

import argparse
import asyncio
from typing import TextIO

from forge_plugin_sdk import Event, Plugin

EVENT_TYPES = ("release.created", "release.published")


def create_plugin(log: TextIO, delay: float) -> Plugin:
    plugin = Plugin("recorder", "1.0.0", "Appends each event it receives to a file")

    @plugin.on_event(*EVENT_TYPES)
    async def record(event: Event) -> None:
        if delay:
            await asyncio.sleep(delay)
        log.write(f"{event.id} {event.type} {event.payload.get('tag', '')}\n")

    return plugin


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--address", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--delay", type=float, default=0.0)
    args = parser.parse_args()
    with open(args.log, "a", buffering=1) as log:  # a line each, flushed
        create_plugin(log, args.delay).serve(args.address, grace=0)


if __name__ == "__main__":
    main()
