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
_COLOURS: dict[str, Any] = dict(
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
_STYLE = Style(**_COLOURS)
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
# The same chart drawn for a phone: an SVG scales with its width, so the 900-unit chart's 10-unit
# labels would be 4 px at 390 px. This one is narrow with larger type (at least 10 px there); the
# page shows one or the other by the viewport's width (insights.html).
_NARROW_STYLE = Style(
    **_COLOURS,
    label_font_size=13,
    major_label_font_size=13,
    legend_font_size=13,
    title_font_size=15,
    value_font_size=13,
    value_label_font_size=13,
    tooltip_font_size=13,
    no_data_font_size=15,
)
_NARROW: dict[str, Any] = {
    **_OPTIONS,
    "style": _NARROW_STYLE,
    "width": 360,
    "height": 460,
    "x_label_rotation": 45,
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
    svg_narrow: Markup  # for viewports up to 600 px wide
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


def _major(labels: Sequence[str], count: int) -> list[str]:
    """About `count` x labels whatever the window's length (the table has them all)."""
    step = max(1, len(labels) // count)
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
    bucket_name: str = "Day",
) -> Chart:
    """A chart over time (one line, area or bar per series) and its table (a row per bucket,
    named `bucket_name` in its head)."""

    def drawn(options: dict[str, Any], labels: int) -> Any:
        if kind == "stacked_area":
            chart = pygal.StackedLine(fill=True, show_dots=False, **options)
        elif kind == "line":
            chart = pygal.Line(show_dots=False, **options)
        else:
            chart = pygal.StackedBar(**options)
        chart.title = title
        chart.x_labels = list(buckets)
        chart.x_labels_major = _major(buckets, labels)
        for name, values in series:
            chart.add(name, list(values))
        if not series:
            chart.add("none", [0] * len(buckets))
        return chart

    def fmt(value: float) -> str:
        return f"{value:.1f}" if unit == "%" else str(int(value))

    rows = [[bucket, *(fmt(values[i]) for _, values in series)] for i, bucket in enumerate(buckets)]
    table = Table(
        [bucket_name, *(name + (f" ({unit})" if unit else "") for name, _ in series)], rows
    )
    label = f"{title}. {description} The table after the chart has the numbers."
    wide, narrow = _svg(drawn(_OPTIONS, 8), label), _svg(drawn(_NARROW, 4), label)
    return Chart(chart_id, title, description, wide, narrow, table, empty=not series)


def share_chart(chart_id: str, title: str, description: str, totals: dict[str, int]) -> Chart:
    """A pie of totals and its table (value, count, share)."""

    def drawn(options: dict[str, Any]) -> Any:
        chart = pygal.Pie(inner_radius=0.45, **{**options, "x_label_rotation": 0})
        chart.title = title
        for name, n in totals.items():
            chart.add(name, n)
        if not totals:
            chart.add("none", 0)
        return chart

    whole = sum(totals.values())
    rows: list[list[str | int]] = [
        [name, n, f"{100 * n / whole:.1f} %"] for name, n in totals.items()
    ]
    table = Table(["Value", "Checks", "Share"], rows)
    label = f"{title}. {description} The table after the chart has the numbers."
    wide, narrow = _svg(drawn(_OPTIONS), label), _svg(drawn(_NARROW), label)
    return Chart(chart_id, title, description, wide, narrow, table, empty=not totals)


def threshold_chart(
    chart_id: str, title: str, description: str, bars: Sequence[tuple[str, float, float]]
) -> Chart:
    """Measured figures (percentages) beside their thresholds: a bar pair per (name, measured,
    threshold), and its table."""

    def drawn(options: dict[str, Any]) -> Any:
        chart = pygal.Bar(**{**options, "x_label_rotation": 0}, range=(0, 100))
        chart.title = title
        chart.x_labels = [name for name, _, _ in bars]
        chart.add("measured (%)", [round(measured, 1) for _, measured, _ in bars])
        chart.add("threshold (%)", [round(threshold, 1) for _, _, threshold in bars])
        return chart

    rows: list[list[str | int]] = [
        [name, f"{measured:.1f} %", f"{threshold:.1f} %"] for name, measured, threshold in bars
    ]
    table = Table(["Gate", "Measured", "Threshold"], rows)
    label = f"{title}. {description} The table after the chart has the numbers."
    wide, narrow = _svg(drawn(_OPTIONS), label), _svg(drawn(_NARROW), label)
    return Chart(chart_id, title, description, wide, narrow, table, empty=not bars)
