"""`python -m forge_gateway`: the same as `forge serve --service plugin`."""

import sys

from forge_common.cli import main

sys.exit(main(["serve", "--service", "plugin", *sys.argv[1:]]))
