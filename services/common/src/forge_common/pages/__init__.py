"""Server-rendered HTML pages (docs/pages.md): the shared layout, markdown notes and HTML errors.

Each service owns the pages of its data and their templates; this package holds what they share:
the Jinja2 environment (`setup`), the base template and its stylesheet, the error page, the
response headers of every page and the sanitised markdown renderer.
"""

from .markdown import render_markdown
from .render import (
    html_errors,
    mark_page,
    page,
    page_context,
    page_headers,
    page_response,
    see_other,
    setup,
)

__all__ = [
    "html_errors",
    "mark_page",
    "page",
    "page_context",
    "page_headers",
    "page_response",
    "render_markdown",
    "see_other",
    "setup",
]
