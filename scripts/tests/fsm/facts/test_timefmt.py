from __future__ import annotations

from datetime import UTC, datetime

import pytest

from little_loops.fsm.facts import timefmt
from little_loops.fsm.facts.timefmt import format_duration


@pytest.mark.parametrize(
    ("ms", "text"),
    [
        (0, "0ms"),
        (850, "850ms"),
        (12_340, "12.3s"),
        (154_000, "2m 34s"),
        (3_900_000, "1h 5m 0s"),
        (-5, "0ms"),
    ],
)
def test_format_duration(ms: int, text: str) -> None:
    assert format_duration(ms) == text


def test_iso_now_is_datetime_s_own_text_rounded_down_to_the_millisecond(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def expected(ns: int) -> str:  # what iso_now gave before it kept the second's text
        when = datetime.fromtimestamp(ns // 10**9, UTC).replace(microsecond=ns % 10**9 // 1000)
        return when.isoformat(timespec="milliseconds")

    start = int(datetime(2026, 1, 15, 10, 30, tzinfo=UTC).timestamp()) * 1_000_000_000
    # within one millisecond, into the next, at a second's last nanosecond and the next
    for ns in (125_000_000, 125_999_999, 126_000_000, 999_999_999, 1_000_000_000, 0):
        monkeypatch.setattr(timefmt.time, "time_ns", lambda ns=ns: start + ns)
        assert timefmt.iso_now() == expected(start + ns)
    monkeypatch.setattr(timefmt.time, "time_ns", lambda: start + 125_000_000)
    assert timefmt.iso_now() == "2026-01-15T10:30:00.125+00:00"


def test_iso_now_reads_the_clock_datetime_reads() -> None:
    before = datetime.now(UTC).isoformat(timespec="milliseconds")
    now = timefmt.iso_now()
    after = datetime.now(UTC).isoformat(timespec="milliseconds")
    assert before <= now <= after
