"""Which account and repository names can exist: the world loader refuses others, and the
HTTP routes answer 404 for them without a query."""

from __future__ import annotations

import re

# Users and organizations: a letter or digit first, at most 39 characters (GitHub's rule).
# \Z, not $: `$` also matches before a final newline, so "app\n" would pass.
ACCOUNT_NAME = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9._-]{0,38}\Z")
REPO_NAME = re.compile(r"\A[A-Za-z0-9._-]{1,100}\Z")


def is_account_name(name: str) -> bool:
    return ACCOUNT_NAME.match(name) is not None


def is_repo_name(name: str) -> bool:
    return REPO_NAME.match(name) is not None
