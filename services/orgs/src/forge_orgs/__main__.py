"""`python -m forge_orgs`: the same as `forge serve --service orgs`."""

import sys

from forge_common.cli import main

sys.exit(main(["serve", "--service", "orgs", *sys.argv[1:]]))
