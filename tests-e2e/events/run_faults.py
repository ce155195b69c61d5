"""The events-under-faults test (tests-e2e/test_events_faults.py) with more events: it creates
releases until the faults are over and at least N events were committed, then checks them all.

    .venv/bin/python tests-e2e/events/run_faults.py --events 5000 [--rate 50]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1000, help="at least this many events")
    parser.add_argument("--rate", type=float, default=20.0, help="releases created per second")
    args = parser.parse_args()
    env = {**os.environ, "FORGE_E2E_EVENTS": str(args.events), "FORGE_E2E_RATE": str(args.rate)}
    test = "tests-e2e/test_events_faults.py"
    return subprocess.call([sys.executable, "-m", "pytest", "-q", "-s", test], cwd=ROOT, env=env)


if __name__ == "__main__":
    sys.exit(main())
