"""The insights API's query (`from`, `to`, `interval`, `by`), checked: a bad value is a 400
naming the parameter, never a 500 or a query over years of rows."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from forge_common.errors import InvalidInput

# `by` as the API spells it → the stored dimension
BY = {
    "version": "running",
    "offered": "offered",
    "platform": "platform",
    "arch": "arch",
    "channel": "channel",
    "feed": "feed",
    "file": "file",
}
DEFAULT_DAYS = 30
MAX_DAYS = 731
DEFAULT_HOURS = 48
MAX_HOURS = 72  # hourly rows are kept 48 h (docs/insights.md "Retention")


@dataclass(frozen=True, slots=True)
class Window:
    interval: str  # day | hour
    by: str  # as asked
    dim: str  # as stored
    start: datetime  # first bucket (a day's midnight UTC for days)
    end: datetime  # last bucket, inclusive

    def buckets(self) -> list[datetime]:
        # counted, not stepped past `end`: the step after 9999-12-31 is no date at all
        step = timedelta(days=1) if self.interval == "day" else timedelta(hours=1)
        return [self.start + i * step for i in range((self.end - self.start) // step + 1)]


def _day(name: str, text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise InvalidInput(f"{name} must be a date (YYYY-MM-DD): {text[:40]!r}") from None


def _hour(name: str, text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInput(
            f"{name} must be a time (YYYY-MM-DDTHH:MM:SSZ) or a date: {text[:40]!r}"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    moment = moment.astimezone(UTC)
    return moment.replace(minute=0, second=0, microsecond=0)


def window(query: Mapping[str, str], now: datetime) -> Window:
    try:
        return _window(query, now)
    except OverflowError:  # a default `from` before year 1, an hour after year 9999
        raise InvalidInput("from and to must lie between the years 1 and 9999") from None


def _window(query: Mapping[str, str], now: datetime) -> Window:
    interval = query.get("interval") or "day"
    by = query.get("by") or "version"
    if interval not in ("day", "hour"):
        raise InvalidInput(f"interval must be day or hour: {interval[:40]!r}")
    if by not in BY:
        raise InvalidInput(f"by must be one of {', '.join(BY)}: {by[:40]!r}")
    raw_from, raw_to = query.get("from") or "", query.get("to") or ""
    if interval == "day":
        last = _day("to", raw_to) if raw_to else now.astimezone(UTC).date()
        first = _day("from", raw_from) if raw_from else last - timedelta(days=DEFAULT_DAYS - 1)
        if first > last:
            raise InvalidInput("from must not be after to")
        if (last - first).days >= MAX_DAYS:
            raise InvalidInput(f"at most {MAX_DAYS} days at a time")
        start = datetime(first.year, first.month, first.day, tzinfo=UTC)
        end = datetime(last.year, last.month, last.day, tzinfo=UTC)
    else:
        end = (
            _hour("to", raw_to)
            if raw_to
            else now.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
        )
        start = _hour("from", raw_from) if raw_from else end - timedelta(hours=DEFAULT_HOURS - 1)
        if start > end:
            raise InvalidInput("from must not be after to")
        if end - start >= timedelta(hours=MAX_HOURS):
            raise InvalidInput(f"at most {MAX_HOURS} hours at a time")
    return Window(interval, by, BY[by], start, end)
