"""Action records: what `captured` and `prev` keep of an action, and how events shorten text."""

from __future__ import annotations

from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.engine.records import (
    SAVED_TEXT_LIMIT,
    acted_record,
    acted_result,
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


def test_a_finished_action_is_kept_as_the_evaluator_saw_it() -> None:
    """A resume judges the recorded action again: every trailing newline is kept (`captured`
    and `prev` chomp theirs), and a longer output keeps its tail and says so."""
    result = ActionResult("line1\n\n", "", 0, 3)
    acted = acted_record(result)
    assert acted["output"] == "line1\n\n"
    assert acted_result(acted).output == "line1\n\n"
    assert saved_result(result)["output"] == "line1"
    long = ActionResult("x" * SAVED_TEXT_LIMIT + "\n", "", 0, 3, output_path="/tmp/out")
    cut = acted_record(long)
    assert (len(cut["output"]), cut["output"][-1]) == (SAVED_TEXT_LIMIT, "\n")
    assert (cut["truncated"], cut["output_path"]) == (True, "/tmp/out")
