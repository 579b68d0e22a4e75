"""The report model (runs/report.py): steps, passes and figures folded from a run's events."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from little_loops.fsm.runs.report import Report, build_report


def _at(second: float) -> str:
    """The time *second* seconds into the run, as events stamp it."""
    start = datetime.fromisoformat("2026-01-15T10:00:00.000+00:00")
    return (start + timedelta(seconds=second)).isoformat(timespec="milliseconds")


def _ev(kind: str, second: float, **fields: Any) -> dict[str, Any]:
    return {"event": kind, "ts": _at(second), **fields}


def _report(*events: dict[str, Any]) -> Report:
    return build_report("fix", None, list(events))


def _start(second: float, resumed: bool = False) -> dict[str, Any]:
    return _ev("loop_start", second, loop="fix", state="check", resumed=resumed)


def _step(
    state: str, start: float, end: float, iteration: int, *, to: str, verdict: str | None
) -> list[dict[str, Any]]:
    """A whole step: entered at *start*, its action, its verdict, routed at *end*."""
    events = [
        _ev("state_enter", start, state=state, iteration=iteration),
        _ev("action_start", start, state=state, action="x", action_type="shell"),
        _ev("action_complete", end, state=state, exit_code=0, duration_ms=1, output=""),
    ]
    if verdict is not None:
        events.append(_ev("evaluate", end, state=state, type="exit_code", verdict=verdict))
    return [*events, _ev("route", end, **{"from": state, "to": to, "verdict": verdict})]


def _complete(second: float, how: str, state: str, **fields: Any) -> dict[str, Any]:
    return _ev("loop_complete", second, terminated_by=how, final_state=state, **fields)


def test_a_stopped_then_resumed_step_is_one_step_in_one_pass_without_the_pause() -> None:
    # check (1 s) → fix, stopped 2 s into fix; resumed 100 s later, fix runs again (3 s).
    report = _report(
        _start(0),
        *_step("check", 0, 1, 1, to="fix", verdict="failure"),
        _ev("state_enter", 1, state="fix", iteration=1),
        _ev("action_start", 1, state="fix", action="sleep", action_type="shell"),
        _ev("action_complete", 3, state="fix", exit_code=143, duration_ms=2000, output=""),
        _complete(3, "stopped", "fix"),
        _start(103, resumed=True),
        *_step("fix", 103, 106, 1, to="check", verdict=None),
        *_step("check", 106, 107, 2, to="done", verdict="success"),
        _complete(107, "terminal", "done"),
    )
    assert [(p["pass"], p["path"], p["duration_ms"]) for p in report.passes] == [
        (1, ["check", "fix"], 6000),  # 1 s + 2 s + 3 s: not the 100 s paused
        (2, ["check"], 1000),
    ]
    assert report.pass_count == 2
    assert report.resumed == 1
    fix = report.states["fix"]
    assert (fix.visits, fix.total_ms) == (1, 5000)
    assert [(s.state, s.duration_ms, s.resumed) for s in report.steps] == [
        ("check", 1000, False),
        ("fix", 5000, True),
        ("check", 1000, False),
    ]
    assert report.steps[1].to == "check"


def test_a_resume_that_judges_the_finished_action_goes_on_with_its_step() -> None:
    # The action ended, then the run was stopped before its verdict: the resume judges it
    # without entering the state again.
    report = _report(
        _start(0),
        _ev("state_enter", 0, state="check", iteration=1),
        _ev("action_start", 0, state="check", action="x", action_type="shell"),
        _ev("action_complete", 4, state="check", exit_code=1, duration_ms=4000, output=""),
        _complete(4, "stopped", "check"),
        _start(50, resumed=True),
        _ev("evaluate", 52, state="check", type="exit_code", verdict="failure"),
        _ev("route", 52, **{"from": "check", "to": "done", "verdict": "failure"}),
        _complete(52, "terminal", "done"),
    )
    (step,) = report.steps
    assert (step.verdict, step.to, step.duration_ms, step.resumed) == (
        "failure",
        "done",
        6000,
        True,
    )
    assert report.states["check"].verdicts == {"failure": 1}
    assert [(p["path"], p["duration_ms"]) for p in report.passes] == [(["check"], 6000)]


def test_a_crashed_step_ends_with_the_last_event_before_the_crash() -> None:
    report = _report(
        _start(0),
        _ev("state_enter", 0, state="fix", iteration=1),
        _ev("action_start", 2, state="fix", action="x", action_type="shell"),
        # killed here; resumed an hour later in the next pass
        _start(3600, resumed=True),
        *_step("fix", 3600, 3601, 2, to="done", verdict=None),
        _complete(3601, "terminal", "done"),
    )
    assert [(s.duration_ms, s.resumed) for s in report.steps] == [(2000, False), (1000, False)]
    assert [(p["pass"], p["duration_ms"]) for p in report.passes] == [(1, 2000), (2, 1000)]


def test_a_run_that_ends_at_a_stall_says_which_breaker_and_its_counts() -> None:
    message = "stall (same_result: 3): state 'check' gave the same verdict 3 times in a row"
    stall = {"detector": "same_result", "state": "check", "limit": 3, "count": 3}
    report = _report(
        _start(0),
        _ev("state_enter", 0, state="check", iteration=1),
        _ev("evaluate", 1, state="check", type="exit_code", verdict="failure"),
        _ev("stall", 1, state="check", detector="same_result", limit=3, count=3, message=message),
        _complete(1, "stall", "check", error=message, stall=stall),
    )
    assert (report.error, report.stall, report.success) == (message, stall, False)
    assert report.steps[0].stall == message
    data = report.to_dict()
    assert (data["error"], data["stall"], data["success"]) == (message, stall, False)


@pytest.mark.parametrize(
    ("how", "success"),
    [
        ("terminal", True),
        ("terminal_failure", False),
        ("error", False),
        ("max_iterations", False),
        ("stopped", None),
        ("awaiting_approval", None),
    ],
)
def test_success_is_what_the_outcome_leaves(how: str, success: bool | None) -> None:
    report = _report(_start(0), _complete(1, how, "end"))
    assert (report.final_state, report.success) == ("end", success)
    assert report.to_dict()["success"] is success


def test_a_run_that_has_not_ended_is_neither() -> None:
    report = _report(_start(0), _ev("state_enter", 0, state="check", iteration=1))
    assert (report.outcome, report.success, report.error) == (None, None, None)


def test_a_resumed_run_that_ends_well_forgets_why_it_stopped_before() -> None:
    report = _report(
        _start(0),
        _complete(1, "max_iterations", "check", error="max_iterations reached"),
        _start(2, resumed=True),
        _complete(3, "terminal", "done"),
    )
    assert (report.outcome, report.error, report.success) == ("terminal", None, True)


def test_a_judged_step_keeps_its_evaluator_confidence_and_reason() -> None:
    report = _report(
        _start(0),
        _ev("state_enter", 0, state="fix", iteration=1),
        _ev("action_start", 0, state="fix", action="/fix", action_type="prompt"),
        _ev(
            "action_complete",
            5,
            state="fix",
            exit_code=0,
            duration_ms=5000,
            output="done",
            tool_calls=['→ Bash {"command": "pytest"}', "← 3 passed", 7],
        ),
        _ev(
            "evaluate",
            6,
            state="fix",
            type="llm_structured",
            verdict="success",
            confidence=0.92,
            reason="the tests pass",
        ),
    )
    (step,) = report.steps
    assert (step.evaluator, step.confidence, step.reason) == (
        "llm_structured",
        0.92,
        "the tests pass",
    )
    assert step.tool_calls == ['→ Bash {"command": "pytest"}', "← 3 passed"]  # not the 7


def test_an_error_verdict_keeps_the_error_as_its_reason() -> None:
    error = "claude does not know the slash command /x (is there a .claude/commands file?)"
    report = _report(
        _start(0),
        _ev("state_enter", 0, state="fix", iteration=1),
        _ev("action_complete", 1, state="fix", exit_code=0, duration_ms=1, output="", error=error),
        _ev("evaluate", 1, state="fix", type="none", verdict="error", error=error),
    )
    (step,) = report.steps
    assert (step.verdict, step.error, step.reason) == ("error", error, error)
