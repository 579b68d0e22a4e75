"""Action records: what `captured` and `prev` keep of an action, and how events shorten text."""

from __future__ import annotations

from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.engine.records import (
    SAVED_TEXT_LIMIT,
    chomp,
    event_value,
    prev_record,
    saved_result,
    short,
)


def test_chomp_removes_trailing_newlines_only() -> None:
    assert chomp("3\r\n\n") == "3"
    assert chomp("\n a \n") == "\n a "


def test_saved_result_keeps_the_tail_and_says_it_was_cut() -> None:
    big = "x" * SAVED_TEXT_LIMIT + "END\n"
    result = ActionResult(big, "warn\n", 1, 12)
    result.output_path = "/tmp/out"
    saved = saved_result(result)
    assert saved["output"].endswith("END")
    assert len(saved["output"]) == SAVED_TEXT_LIMIT
    assert (saved["stderr"], saved["exit_code"], saved["duration_ms"]) == ("warn\n", 1, 12)
    assert (saved["truncated"], saved["output_path"]) == (True, "/tmp/out")
    assert "truncated" not in saved_result(ActionResult("ok\n", "", 0, 1))


def test_prev_record_has_no_duration_and_defaults_without_an_action() -> None:
    assert prev_record("check", ActionResult("1\n", "", 0, 5), "success") == {
        "state": "check",
        "output": "1",
        "stderr": "",
        "exit_code": 0,
        "verdict": "success",
    }
    assert prev_record("wait", None, "success")["exit_code"] == 0


def test_short_and_event_value() -> None:
    assert short("abcdef", 3) == "abc…"
    assert short("abcdef", 3, tail=True) == "…def"
    assert event_value(7) == 7
    assert event_value("a" * 10_000).endswith("…")
