"""Velopack packages made by the tests (docs/releases.md "Velopack"): a `.nupkg` is a zip with its
`.nuspec` at the root, the app under `lib/app/`, and the two OPC files vpk writes, as
PackageBuilder.cs lays them out."""

from __future__ import annotations

import io
import zipfile
from xml.sax.saxutils import escape

FIXED_TIME = (2026, 1, 1, 0, 0, 0)
NUSPEC_NS = "http://schemas.microsoft.com/packaging/2010/07/nuspec.xsd"


def nuspec(
    package_id: str, version: str, channel: str | None, notes: str = "", notes_html: str = ""
) -> str:
    """A `.nuspec` as vpk writes it; `channel` None leaves it out (a Squirrel.Windows package)."""
    lines = [
        f"<id>{escape(package_id)}</id>",
        f"<title>{escape(package_id)}</title>",
        f"<version>{escape(version)}</version>",
        "<authors>forge tests</authors>",
        "<description>a test app</description>",
        f"<mainExe>{escape(package_id)}</mainExe>",
        "<os>linux</os>",
        "<rid>linux-x64</rid>",
    ]
    if channel is not None:
        lines.append(f"<channel>{escape(channel)}</channel>")
    if notes:
        lines.append(f"<releaseNotes><![CDATA[{notes}]]></releaseNotes>")
    if notes_html:
        lines.append(f"<releaseNotesHtml><![CDATA[{notes_html}]]></releaseNotesHtml>")
    metadata = "\n    ".join(lines)
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        f'<package xmlns="{NUSPEC_NS}">\n  <metadata>\n    {metadata}\n  </metadata>\n</package>\n'
    )


def nupkg(
    package_id: str,
    version: str,
    channel: str | None = "linux",
    *,
    notes: str = "",
    notes_html: str = "",
    app: bytes = b"",
) -> bytes:
    """A full package's bytes (`app`: the app's file, `lib/app/{id}.AppImage` as on Linux)."""
    files = {
        f"{package_id}.nuspec": nuspec(package_id, version, channel, notes, notes_html).encode(),
        f"lib/app/{package_id}.AppImage": app or f"{package_id} {version}".encode(),
        "[Content_Types].xml": b'<?xml version="1.0"?><Types/>',
        "_rels/.rels": b'<?xml version="1.0"?><Relationships/>',
    }
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package:
        for name, data in files.items():
            # a fixed time: the same arguments make the same bytes (tests compare downloads)
            package.writestr(zipfile.ZipInfo(name, FIXED_TIME), data, zipfile.ZIP_DEFLATED)
    return out.getvalue()
