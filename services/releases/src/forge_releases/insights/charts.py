"""The insights page's charts as SVG made on the server by pygal (docs/insights.md "Page"): no
script in the page, an accessible name on each chart, and the same numbers as a table beside it.

pygal always writes a small configuration script into its SVG for its optional tooltips; it is
taken out of the tree before serialising (the page's CSP would block it anyway).
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pygal  # type: ignore[import-untyped]
from markupsafe import Markup
from pygal.style import Style  # type: ignore[import-untyped]

# pygal appends a finder of its own to sys.meta_path for its map plugins (unused here); it only
# has the API Python dropped, so every import that fails anywhere in the process then warns
# (ImportWarning, an error under the tests' warning filter). Taken out again at once
# (docs/insights.md "Page").
sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, pygal.PluginImportFixer)]

# Colours with at least 3:1 contrast against white, told apart by lightness too.
_STYLE = Style(
    background="#ffffff",
    plot_background="#ffffff",
    foreground="#1b1f24",
    foreground_strong="#1b1f24",
    foreground_subtle="#4b5563",
    font_family="system-ui, sans-serif",
    colors=(
        "#0b5cad",
        "#b8500c",
        "#0a6e31",
        "#8e2a8b",
        "#a1141c",
        "#4b5563",
        "#005f73",
        "#6b4e16",
        "#1b1f24",
    ),
)
_OPTIONS: dict[str, Any] = {
    "style": _STYLE,
    "js": [],
    "disable_xml_declaration": True,
    "width": 900,
    "height": 380,
    "legend_at_bottom": True,
    "truncate_legend": -1,
    "x_label_rotation": 30,
    "show_minor_x_labels": False,
    "print_values": False,
}


@dataclass(frozen=True)
class Table:
    """A chart's numbers: a header row and body rows (the first cell of each names the row)."""

    head: Sequence[str]
    rows: Sequence[Sequence[str | int]]


@dataclass(frozen=True)
class Chart:
    id: str
    title: str
    description: str
    svg: Markup
    table: Table
    empty: bool = False
    notes: list[str] = field(default_factory=list)


def _svg(chart: Any, label: str) -> Markup:
    root = chart.render_tree()
    for parent in root.iter():
        for child in list(parent):
            if isinstance(child.tag, str) and child.tag.rsplit("}", 1)[-1] == "script":
                parent.remove(child)
    root.set("role", "img")
    root.set("aria-label", label)
    root.set("focusable", "false")
    text = ET.tostring(root, encoding="unicode")
    return Markup(text)  # noqa: S704 - pygal's own escaped XML, from our numbers and labels


def _major(labels: Sequence[str]) -> list[str]:
    """About eight x labels whatever the window's length (the table has them all)."""
    step = max(1, len(labels) // 8)
    return [label for i, label in enumerate(labels) if i % step == 0]


def series_chart(
    chart_id: str,
    title: str,
    description: str,
    buckets: Sequence[str],
    series: Sequence[tuple[str, Sequence[float]]],
    *,
    kind: str = "stacked_area",
    unit: str = "",
) -> Chart:
    """A chart over time (one line, area or bar per series) and its table (a row per bucket)."""
    if kind == "stacked_area":
        chart = pygal.StackedLine(fill=True, show_dots=False, **_OPTIONS)
    elif kind == "line":
        chart = pygal.Line(show_dots=False, **_OPTIONS)
    else:
        chart = pygal.StackedBar(**_OPTIONS)
    chart.title = title
    chart.x_labels = list(buckets)
    chart.x_labels_major = _major(buckets)
    for name, values in series:
        chart.add(name, list(values))
    if not series:
        chart.add("none", [0] * len(buckets))

    def fmt(value: float) -> str:
        return f"{value:.1f}" if unit == "%" else str(int(value))

    rows = [[bucket, *(fmt(values[i]) for _, values in series)] for i, bucket in enumerate(buckets)]
    table = Table(["Day", *(name + (f" ({unit})" if unit else "") for name, _ in series)], rows)
    label = f"{title}. {description} The table after the chart has the numbers."
    return Chart(chart_id, title, description, _svg(chart, label), table, empty=not series)


def share_chart(chart_id: str, title: str, description: str, totals: dict[str, int]) -> Chart:
    """A pie of totals and its table (value, count, share)."""
    chart = pygal.Pie(inner_radius=0.45, **{**_OPTIONS, "x_label_rotation": 0})
    chart.title = title
    whole = sum(totals.values())
    for name, n in totals.items():
        chart.add(name, n)
    if not totals:
        chart.add("none", 0)
    rows: list[list[str | int]] = [
        [name, n, f"{100 * n / whole:.1f} %"] for name, n in totals.items()
    ]
    table = Table(["Value", "Checks", "Share"], rows)
    label = f"{title}. {description} The table after the chart has the numbers."
    return Chart(chart_id, title, description, _svg(chart, label), table, empty=not totals)
