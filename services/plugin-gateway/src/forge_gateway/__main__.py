"""`python -m forge_gateway`: the same as `forge serve --service gateway`."""

import sys

from forge_common.cli import main

sys.exit(main(["serve", "--service", "gateway", *sys.argv[1:]]))
