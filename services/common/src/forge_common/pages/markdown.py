"""Release notes are markdown written by publishers: rendered by markdown-it-py with raw HTML
off, then sanitised by nh3 (an allow-list), so a hostile note can never run script in a page."""

from __future__ import annotations

from functools import lru_cache

import nh3
from markdown_it import MarkdownIt
from markupsafe import Markup

# CommonMark plus tables and strikethrough; raw HTML in the note is shown as text, not markup.
_MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
# nh3's default allow-list has no script, style, event handler or javascript: URL; links a
# publisher writes must not pass our origin on or act with its authority.
_URL_SCHEMES = {"http", "https", "mailto"}


@lru_cache(maxsize=2048)  # notes repeat on every view of a page; rendering is the costly part
def render_markdown(text: str, under: int = 1) -> Markup:
    """`text` as safe HTML whose headings sit below a heading of level `under`: the note's top
    heading level becomes `h{under + 1}`, so the page's headings stay in order."""
    tokens = _MARKDOWN.parse(text)
    headings = [t for t in tokens if t.type in {"heading_open", "heading_close"}]
    if headings:
        shift = under + 1 - min(int(t.tag[1]) for t in headings)
        for token in headings:
            token.tag = f"h{min(6, int(token.tag[1]) + shift)}"
    html = _MARKDOWN.renderer.render(tokens, _MARKDOWN.options, {})
    cleaned = nh3.clean(html, url_schemes=_URL_SCHEMES, link_rel="nofollow noopener noreferrer")
    return Markup(cleaned)  # noqa: S704 (sanitised by nh3 just above)
