"""Command line: ``python -m event_recorder --address HOST:PORT`` (or ``forge-event-recorder``)."""

from __future__ import annotations

import argparse
import logging
import os

from .recorder import DEFAULT_MAX_EVENTS, Recorder, create_plugin


def main(argv: list[str] | None = None) -> None:
    """Parse the arguments, then serve until SIGINT or SIGTERM."""
    parser = argparse.ArgumentParser(prog="forge-event-recorder", description=__doc__)
    parser.add_argument(
        "--address",
        default=os.environ.get("PLUGIN_ADDRESS", "127.0.0.1:50051"),
        help="host:port (port 0 picks one) or unix:PATH; default $PLUGIN_ADDRESS or %(default)s",
    )
    parser.add_argument("--max-events", type=int, default=DEFAULT_MAX_EVENTS)
    parser.add_argument("--log-level", default=os.environ.get("LOG_LEVEL", "INFO"))
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s"
    )
    # serve() prints "listening on PORT" once ready.
    create_plugin(Recorder(args.max_events)).serve(args.address)


if __name__ == "__main__":
    main()
