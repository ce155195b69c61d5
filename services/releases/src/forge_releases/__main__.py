"""`python -m forge_releases`: the same as `forge serve --service releases`."""

import sys

from forge_common.cli import main

sys.exit(main(["serve", "--service", "releases", *sys.argv[1:]]))
