"""How asset names change on their way between a build folder, GitHub and an updater
(docs/compat.md "Asset names").

- GitHub renames what it stores (`github_name`): `App-1.4.0 Setup.exe` becomes
  `App-1.4.0.Setup.exe`. Electron Forge's publisher-github computes the same name to find an
  asset it uploaded before (its `GitHub.sanitizeName`, taken from the GitHub CLI's upload code),
  so our `/api/v3` must store that name or a re-run uploads again.
- electron-builder writes `url:` in latest.yml with its "safe" artifact name, spaces turned into
  dashes (`MyApp-Setup-1.2.0.exe`) while the file on disk keeps them (`MyApp Setup 1.2.0.exe`).

`loose_key` forgets exactly those differences, so a name an updater asks for finds the stored
file whichever of the three spellings each side used.
"""

from __future__ import annotations

import re
import unicodedata

# What JavaScript's \p{Diacritic} (Forge's pattern) holds among spacing characters once a name is
# in NFD form; combining marks are recognised by unicodedata.combining.
_SPACING_DIACRITICS = frozenset("^`\u00a8\u00af\u00b4\u00b7\u00b8")
# Forge's /[^\w_.@+-]+/g without the `u` flag: \w is ASCII letters, digits and `_`.
_NOT_KEPT = re.compile(r"[^A-Za-z0-9_.@+-]+")
_DOTS = re.compile(r"\.+")
_SEPARATORS = re.compile(r"[^A-Za-z0-9_@+]+")


def github_name(name: str) -> str:
    """The name GitHub (and Forge's publisher) gives an uploaded file: diacritics dropped, each
    run of other characters a dot, dots collapsed, none leading or trailing. "" when nothing is
    left (the caller refuses such a name)."""
    decomposed = unicodedata.normalize("NFD", name)
    plain = "".join(
        c for c in decomposed if not unicodedata.combining(c) and c not in _SPACING_DIACRITICS
    )
    return _DOTS.sub(".", _NOT_KEPT.sub(".", plain)).strip(".")


def loose_key(name: str) -> str:
    """`name` with spaces, dots, dashes and GitHub's other replaced characters all one separator,
    case kept: `MyApp Setup 1.2.0.exe`, `MyApp-Setup-1.2.0.exe` and `MyApp.Setup.1.2.0.exe`
    share a key. Only for finding a file when the exact name is not there."""
    return _SEPARATORS.sub(".", github_name(name)).strip(".")
