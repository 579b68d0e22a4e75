"""Human-readable durations and timestamps, as the progress display and `${loop.*}` show them."""

from __future__ import annotations

from datetime import UTC, datetime


def format_duration(ms: int | float) -> str:
    """`2m 34s` style: `850ms`, `12.3s`, `2m 34s`, `1h 5m 0s`."""
    ms = max(0, int(ms))
    if ms < 1000:
        return f"{ms}ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f}s"
    total = ms // 1000
    hours, rest = divmod(total, 3600)
    minutes, seconds = divmod(rest, 60)
    if hours:
        return f"{hours}h {minutes}m {seconds}s"
    return f"{minutes}m {seconds}s"


def iso_now() -> str:
    """The current UTC time as ISO 8601 with a `Z`-free offset, e.g. `2026-01-15T10:30:00+00:00`."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")
