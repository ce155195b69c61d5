"""Which account and repository names can exist (the world loader refuses others, and the HTTP
routes answer 404 for them without a query), and the one rule for every display name we store.
"""

from __future__ import annotations

import re
import unicodedata

# Users and organizations: a letter or digit first, at most 39 characters (GitHub's rule).
# \Z, not $: `$` also matches before a final newline, so "app\n" would pass.
ACCOUNT_NAME = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9._-]{0,38}\Z")
REPO_NAME = re.compile(r"\A[A-Za-z0-9._-]{1,100}\Z")


def is_account_name(name: str) -> bool:
    return ACCOUNT_NAME.match(name) is not None


def is_repo_name(name: str) -> bool:
    return REPO_NAME.match(name) is not None


# --- Display names: group names, release titles, full names, team and key names, file names ---

# Unicode categories a display name must not hold: control (Cc: C0 such as BEL, DEL, C1), format
# (Cf: bidi overrides such as U+202E, zero-width characters, BOM) and surrogates (Cs: text that was
# never valid UTF-8). They make a name display as something it is not ("\u202eexe.txt" shows as
# "txt.exe"), hide a character between two that look alike, or break headers and terminals.
# Zero-width joiners go too, emoji sequences built with them included (docs/architecture.md
# "Display names").
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs"})
# What a decoder puts where the bytes were not UTF-8 (`?name=%ff%fe`): not the name that was sent.
_REPLACEMENT = "\ufffd"


def hidden_character_problem(text: str) -> str | None:
    """Why `text` cannot be shown as a name (a control, format or surrogate character, or bytes
    that were not UTF-8), or None."""
    if _REPLACEMENT in text:
        return "must be valid UTF-8"
    if any(unicodedata.category(c) in _HIDDEN_CATEGORIES for c in text):
        return "must not contain control, format or surrogate characters"
    return None


def display_name_problem(name: str, *, max_length: int, allow_empty: bool = False) -> str | None:
    """Why `name` cannot be stored as a display name, or None: not blank (unless `allow_empty`
    and empty), at most `max_length` characters, nothing hidden."""
    if not name.strip() and not (allow_empty and name == ""):
        return "must not be empty"
    if len(name) > max_length:
        return f"must be at most {max_length} characters"
    return hidden_character_problem(name)


def login_key(name: str) -> str:
    """The one normalisation of a name someone typed to sign in, under which attempts are counted:
    NFKC, then Unicode case folding, so that look-alikes (`ｖict-demo`, fullwidth) count as the
    name they look like. For an account name (ASCII) it is the name lower-cased, as looked up."""
    return unicodedata.normalize("NFKC", name.strip()).casefold()


def login_lookup(name: str) -> str | None:
    """The account name to look up (lower-cased) for a typed name; None when it cannot be one, so
    it matches no account: `vİct-demo` (U+0130), which PostgreSQL's `lower()` would have matched
    to `vict-demo` while the throttle counted it apart, signs in as nobody."""
    name = name.strip()
    return name.lower() if is_account_name(name) else None
