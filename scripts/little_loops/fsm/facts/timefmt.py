"""Human-readable durations and timestamps, as the progress display and `${loop.*}` show them."""

from __future__ import annotations

import time
from datetime import UTC, datetime

# The last time `iso_now` gave, by the millisecond, and the last whole second it formatted
# (its text up to the seconds): a run stamps several events a millisecond, and datetime's
# own formatting costs ~5x this. Each is one tuple, replaced whole: threads see no half.
_LAST: tuple[int, str] = (-1, "")
_SECOND: tuple[int, str] = (-1, "")


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
    """The current UTC time as ISO 8601 with a `Z`-free offset, to the millisecond (rounded
    down), e.g. `2026-01-15T10:30:00.125+00:00`: the text and the clock of
    `datetime.now(UTC).isoformat(timespec="milliseconds")`."""
    global _LAST, _SECOND
    now = time.time_ns() // 1_000_000
    last = _LAST
    if last[0] == now:
        return last[1]
    seconds, ms = divmod(now, 1000)
    second = _SECOND
    if second[0] != seconds:
        text = datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds")
        second = _SECOND = (seconds, text.removesuffix("+00:00"))
    stamp = f"{second[1]}.{ms:03d}+00:00"
    _LAST = (now, stamp)
    return stamp
