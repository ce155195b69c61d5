"""The download page's guess of the visitor's platform and architecture, in the update check's
terms (`darwin`/`windows`/`linux`, `arm64`/`x64`), so the asset is chosen by the same table.

Client hints come first: a Mac's User-Agent says "Intel Mac OS X" whatever its chip, and only
`Sec-CH-UA-Arch` (a high-entropy hint the page asks for with `Accept-CH`) tells Apple silicon
apart. Without hints the User-Agent decides, and the architecture defaults to x64.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

# Asked for on every download page; `Critical-CH` makes Chromium retry the first visit with them.
CLIENT_HINTS = "Sec-CH-UA-Platform, Sec-CH-UA-Arch"
HINT_HEADERS = {
    "Accept-CH": CLIENT_HINTS,
    "Critical-CH": "Sec-CH-UA-Arch",
    "Vary": f"User-Agent, {CLIENT_HINTS}",
}


@dataclass(frozen=True, slots=True)
class Target:
    label: str
    platform: str  # an update-check platform value
    arch: str  # an update-check arch value


# Every platform the download page lists, in the order shown.
TARGETS = (
    Target("macOS (Apple silicon)", "darwin", "arm64"),
    Target("macOS (Intel)", "darwin", "x64"),
    Target("Windows (x64)", "windows", "x64"),
    Target("Windows (ARM)", "windows", "arm64"),
    Target("Linux (x64)", "linux", "x64"),
    Target("Linux (ARM)", "linux", "arm64"),
)
_BY_KEY = {(t.platform, t.arch): t for t in TARGETS}
_HINT_PLATFORMS = {"macos": "darwin", "windows": "windows", "linux": "linux"}


def _hint(headers: Mapping[str, str], name: str) -> str:
    return headers.get(name, "").strip().strip('"').lower()


def _platform_from_agent(agent: str) -> str | None:
    if any(word in agent for word in ("iPhone", "iPad", "Android", "CrOS")):
        return None  # no desktop build runs there ("like Mac OS X", "Linux; Android")
    if "Windows" in agent:
        return "windows"
    if "Macintosh" in agent or "Mac OS X" in agent:
        return "darwin"
    if "Linux" in agent or "X11" in agent:
        return "linux"
    return None


def visitor_target(headers: Mapping[str, str]) -> Target | None:
    """The visitor's platform, or None when it is not one we build for (a phone, a bot)."""
    agent = headers.get("User-Agent", "")
    hinted = _hint(headers, "Sec-CH-UA-Platform")
    platform = _HINT_PLATFORMS.get(hinted) if hinted else _platform_from_agent(agent)
    if platform is None:
        return None
    arch_hint = _hint(headers, "Sec-CH-UA-Arch")
    if arch_hint:
        arch = "arm64" if arch_hint.startswith("arm") else "x64"
    else:
        lowered = agent.lower()
        arch = "arm64" if ("aarch64" in lowered or "arm64" in lowered) else "x64"
    return _BY_KEY[(platform, arch)]
