"""Insights (docs/insights.md): update checks, feed answers and downloads counted per repository,
time, version, platform, architecture, channel and feed; stored as aggregates only, read by
repository admins and publishers through the API and the page."""
