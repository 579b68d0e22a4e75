"""A user's regular expression run with a time limit."""

from __future__ import annotations

import re
import threading
import time

import pytest
from support.slowdown import scaled

from little_loops.fsm.values.regex_limit import RegexTooSlow, within


def test_a_backtracking_match_is_abandoned_after_its_seconds() -> None:
    slow = re.compile("(?:a+)+b")
    started = time.monotonic()
    with pytest.raises(RegexTooSlow):
        within(0.3, lambda: slow.search("a" * 40 + "!"))
    assert time.monotonic() - started < scaled(2, at_most=30)


def test_a_quick_match_gives_its_answer_and_leaves_no_timer() -> None:
    assert within(5, lambda: re.search("b+", "abbc")).group(0) == "bb"  # type: ignore[union-attr]
    time.sleep(0.05)  # an alarm left behind would raise here
    assert within(0.3, lambda: 1) == 1


def test_off_the_main_thread_the_match_runs_unbounded() -> None:
    got: list[object] = []
    worker = threading.Thread(target=lambda: got.append(within(0.01, lambda: "done")))
    worker.start()
    worker.join(10)
    assert got == ["done"]
