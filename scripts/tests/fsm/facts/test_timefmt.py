from __future__ import annotations

import pytest

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
