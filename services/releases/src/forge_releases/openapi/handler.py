"""GET /api/v2/openapi.json: the document of document.py, rendered once (at the first request)
and served with the ETag of the service's other JSON answers."""

from __future__ import annotations

from forge_common.openapi import document_handler

from .document import build

serve = document_handler(build)
