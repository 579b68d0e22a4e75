"""The progress display: events in, the design doc's lines out."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from support import llproc

from little_loops.cli.display import (
    ProgressDisplay,
    outcome_line,
    shorten,
    use_color,
    verdict_detail,
)


def feed(events: list[dict[str, Any]], **kw: Any) -> str:
    out = io.StringIO()
    display = ProgressDisplay(out, max_iterations=20, loop_name="fix-types", **kw)
    for event in events:
        display(event)
    display.close()
    return out.getvalue()


DOC_RUN: list[dict[str, Any]] = [
    {"event": "loop_start", "loop": "fix-types"},
    {"event": "state_enter", "state": "check", "iteration": 1},
    {"event": "action_start", "state": "check", "action": "mypy src/"},
    {"event": "action_complete", "exit_code": 1, "duration_ms": 2340},
    {"event": "evaluate", "type": "exit_code", "verdict": "failure", "exit_code": 1},
    {"event": "route", "from": "check", "to": "fix", "verdict": "failure", "reason": "on_failure"},
    {"event": "state_enter", "state": "fix", "iteration": 1},
    {"event": "action_start", "state": "fix", "action": "/ll:manage_issue bug fix"},
    {"event": "action_complete", "exit_code": 0, "duration_ms": 45000},
    {"event": "evaluate", "type": "llm_structured", "verdict": "success", "confidence": 0.92},
    {"event": "route", "from": "fix", "to": "verify", "verdict": "success", "reason": "on_success"},
    {"event": "state_enter", "state": "verify", "iteration": 1},
    {"event": "action_start", "state": "verify", "action": "pytest tests/"},
    {"event": "action_complete", "exit_code": 0, "duration_ms": 107000},
    {"event": "evaluate", "type": "exit_code", "verdict": "success", "exit_code": 0},
    {
        "event": "route",
        "from": "verify",
        "to": "done",
        "verdict": "success",
        "reason": "on_success",
    },
    {
        "event": "loop_complete",
        "final_state": "done",
        "iterations": 1,
        "terminated_by": "terminal",
        "duration_ms": 154000,
    },
]


def test_doc_progress_display() -> None:
    assert feed(DOC_RUN) == (
        "[1/20] check → mypy src/\n"
        "       ✗ failure (exit 1)  2.3s\n"
        "       → fix\n"
        "[1/20] fix → /ll:manage_issue bug fix\n"
        "       ✓ success (confidence: 0.92)  45.0s\n"
        "       → verify\n"
        "[1/20] verify → pytest tests/\n"
        "       ✓ success (exit 0)  1m 47s\n"
        "       → done\n"
        "\n"
        "Loop completed: done (1 iteration, 2m 34s)\n"
    )


def test_quiet_prints_only_the_outcome() -> None:
    assert feed(DOC_RUN, quiet=True) == "Loop completed: done (1 iteration, 2m 34s)\n"


def test_color_codes_only_when_asked() -> None:
    assert "\033[" not in feed(DOC_RUN)
    assert "\033[32m✓\033[0m" in feed(DOC_RUN, color=True)


def test_next_state_and_decision_state_lines() -> None:
    text = feed(
        [
            {"event": "state_enter", "state": "apply", "iteration": 2},
            {"event": "action_start", "state": "apply", "action": "make fix"},
            {"event": "action_complete", "exit_code": 0, "duration_ms": 10},
            {"event": "route", "from": "apply", "to": "decide", "verdict": None, "reason": "next"},
            {"event": "state_enter", "state": "decide", "iteration": 2},
            {"event": "evaluate", "type": "output_numeric", "verdict": "failure", "value": 3.0},
            {"event": "route", "from": "decide", "to": "x", "verdict": "failure", "reason": "r"},
        ]
    )
    assert text == (
        "[2/20] apply → make fix\n"
        "       • exit 0  10ms\n"
        "       → decide\n"
        "[2/20] decide → (evaluate output_numeric)\n"
        "       ✗ failure (value: 3.0)\n"
        "       → x\n"
    )


def test_live_ticker_draws_and_clears() -> None:
    events = DOC_RUN[:4]
    text = feed(events, live=True)
    assert "running" in text
    assert text.endswith("\r\033[K")


def test_live_ticker_shows_the_latest_step_of_a_claude_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    transcript = tmp_path / "fix.out"
    tool = {"type": "tool_use", "name": "Bash", "input": {"command": "pytest -q\ttests/"}}
    out = io.StringIO()
    display = ProgressDisplay(out, max_iterations=5, live=True)
    display({"event": "state_enter", "state": "fix", "iteration": 1})
    display(
        {
            "event": "action_start",
            "state": "fix",
            "action": "Fix the tests",
            "action_type": "prompt",
            "output_path": str(transcript),
        }
    )
    transcript.write_text(
        json.dumps({"type": "system", "subtype": "init"})
        + "\n"
        + json.dumps({"type": "assistant", "message": {"content": [tool]}})
        + "\n"
    )
    llproc.wait_for(lambda: "· Bash: pytest -q tests/" in out.getvalue(), 5, "the step shown")
    display({"event": "action_complete", "exit_code": 0, "duration_ms": 700})
    display.close()
    # The tab in the command is shown as a space; the line is cleared to its end.
    assert re.search(r"running \d+m?s · Bash: pytest -q tests/\033\[K", out.getvalue())
    # A shell action's output file is not read: its output is not Claude's steps.
    shell = feed(
        [
            {"event": "state_enter", "state": "check", "iteration": 1},
            {
                "event": "action_start",
                "state": "check",
                "action": "cat fix.out",
                "action_type": "shell",
                "output_path": str(transcript),
            },
        ],
        live=True,
    )
    assert "running" in shell
    assert "Bash" not in shell


@pytest.mark.parametrize(
    ("action", "short"),
    [
        ("mypy src/", "mypy src/"),
        ("a" * 100, "a" * 59 + "…"),
        ("line one\nline two", "line one …"),
    ],
)
def test_shorten(action: str, short: str) -> None:
    assert shorten(action) == short


@pytest.mark.parametrize(
    ("event", "detail"),
    [
        ({"type": "exit_code", "verdict": "failure", "exit_code": 1}, "(exit 1)"),
        ({"type": "llm_structured", "verdict": "success", "confidence": 0.5}, "(confidence: 0.50)"),
        (
            {"type": "convergence", "verdict": "progress", "current": 3.0, "delta": -2.0},
            "(current: 3, delta: -2)",
        ),
        ({"type": "output_contains", "verdict": "success", "matched": True}, "(matched)"),
        (
            {"type": "exit_code", "verdict": "error", "error": "claude: not found"},
            "(claude: not found)",
        ),
        (  # an error is shown whole: its end is the hint (it was cut at 80 with `…`)
            {"type": "exit_code", "verdict": "error", "error": "x" * 70 + " (is there a hint?)"},
            "(" + "x" * 70 + " (is there a hint?))",
        ),
    ],
)
def test_verdict_detail(event: dict[str, Any], detail: str) -> None:
    assert verdict_detail(event) == detail


@pytest.mark.parametrize(
    ("final", "line"),
    [
        (
            {
                "terminated_by": "max_iterations",
                "final_state": "fix",
                "iterations": 3,
                "duration_ms": 5,
            },
            "Loop stopped: max_iterations reached in fix (3 iterations, 5ms); "
            "to go on: ll-loop resume NAME --max-iterations N",
        ),
        (
            {
                "terminated_by": "error",
                "final_state": "check",
                "iterations": 1,
                "duration_ms": 0,
                "error": "boom",
            },
            "Loop failed in check: boom (1 iteration, 0ms)",
        ),
        (
            {
                "terminated_by": "terminal_failure",
                "final_state": "stuck",
                "iterations": 1,
                "duration_ms": 0,
                "error": "reached from state 'fix' on the verdict error: " + "y" * 90,
            },
            "Loop ended in stuck, a failure: reached from state 'fix' on the verdict error: "
            + "y" * 90
            + " (1 iteration, 0ms)",
        ),
        (
            {
                "terminated_by": "terminal_failure",
                "final_state": "blocked",
                "iterations": 1,
                "duration_ms": 0,
            },
            "Loop ended in blocked, a failure outcome (1 iteration, 0ms)",
        ),
    ],
)
def test_outcome_line(final: dict[str, Any], line: str) -> None:
    assert outcome_line(final) == line


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_use_color_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert use_color(_Tty()) is True
    assert use_color(io.StringIO()) is False
    assert use_color(_Tty(), no_color_flag=True) is False
    monkeypatch.setenv("NO_COLOR", "")
    assert use_color(_Tty()) is False


def test_costs_are_shown_per_action_and_in_total() -> None:
    text = feed(
        [
            {"event": "state_enter", "state": "fix", "iteration": 1},
            {"event": "action_start", "state": "fix", "action": "/ll:fix"},
            {"event": "action_complete", "exit_code": 0, "duration_ms": 1500, "cost_usd": 0.0125},
            {
                "event": "evaluate",
                "type": "llm_structured",
                "verdict": "success",
                "confidence": 0.9,
            },
            {"event": "route", "from": "fix", "to": "done", "verdict": "success", "reason": "r"},
            {
                "event": "loop_complete",
                "final_state": "done",
                "iterations": 1,
                "terminated_by": "terminal",
                "duration_ms": 1500,
                "cost_usd": 0.0137,
            },
        ]
    )
    assert "       ✓ success (confidence: 0.90)  1.5s  $0.0125\n" in text
    assert text.endswith("Loop completed: done (1 iteration, 1.5s, $0.0137)\n")


def test_a_cost_under_a_cent_is_shown_not_rounded_to_nothing() -> None:
    text = feed(
        [
            {"event": "state_enter", "state": "fix", "iteration": 1},
            {"event": "action_start", "state": "fix", "action": "Say hi"},
            {"event": "action_complete", "exit_code": 0, "duration_ms": 5, "cost_usd": 0.0003},
            {"event": "route", "from": "fix", "to": "done", "verdict": None, "reason": "next"},
            {
                "event": "loop_complete",
                "final_state": "done",
                "iterations": 1,
                "terminated_by": "terminal",
                "duration_ms": 5,
                "cost_usd": 0.00001,
            },
        ]
    )
    assert "       • exit 0  5ms  $0.0003\n" in text
    assert text.endswith("Loop completed: done (1 iteration, 5ms, <$0.0001)\n")


def test_terminal_state_action_gets_its_result_line() -> None:
    text = feed(
        [
            {"event": "state_enter", "state": "done", "iteration": 2},
            {"event": "action_start", "state": "done", "action": "echo bye"},
            {"event": "action_complete", "exit_code": 0, "duration_ms": 3},
            {
                "event": "loop_complete",
                "final_state": "done",
                "iterations": 2,
                "terminated_by": "terminal",
                "duration_ms": 30,
            },
        ]
    )
    assert text == (
        "[2/20] done → echo bye\n"
        "       • exit 0  3ms\n"
        "\n"
        "Loop completed: done (2 iterations, 30ms)\n"
    )


def _said(text: str) -> str:
    return json.dumps(
        {"type": "assistant", "message": {"content": [{"type": "text", "text": text}]}}
    )


def test_a_second_claude_run_of_a_state_does_not_show_the_first_runs_last_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    transcript = tmp_path / "fix.out"
    transcript.write_text(_said("Old answer of the first run") + "\n")
    out = io.StringIO()
    display = ProgressDisplay(out, max_iterations=5, live=True)
    display({"event": "state_enter", "state": "fix", "iteration": 2})
    start = {"event": "action_start", "action": "Fix", "action_type": "prompt"}
    display(start | {"output_path": str(transcript)})
    # The ticker draws a frame every 0.1 s and reads the file at every fifth: past frame 5.
    llproc.wait_for(lambda: out.getvalue().count(" running ") > 6, 5, "seven frames")
    assert "Old answer" not in out.getvalue()
    transcript.write_text(_said("Now working") + "\n")  # the runner empties it, Claude writes
    llproc.wait_for(lambda: "Now working" in out.getvalue(), 5, "the new step shown")
    display({"event": "action_complete", "exit_code": 0, "duration_ms": 700})
    display.close()
    assert "· Now working" in out.getvalue()
    assert "Old answer" not in out.getvalue()


def test_an_action_that_could_not_be_filled_in_says_so_not_evaluate_none() -> None:
    text = feed(
        [
            {"event": "state_enter", "state": "a", "iteration": 1},
            {
                "event": "evaluate",
                "state": "a",
                "type": "none",
                "verdict": "error",
                "error": "in action of state 'a': ${captured.x.output}: nothing captured as 'x'",
            },
        ]
    )
    first, second = text.splitlines()[:2]
    assert first == "[1/20] a → (action not run)"
    assert "evaluate none" not in text
    assert "nothing captured as 'x'" in second


def test_an_agent_switch_is_a_line_even_when_quiet() -> None:
    switch = {
        "event": "agent_switch",
        "state": "fix",
        "from": "claude",
        "to": "mine",
        "reason": "usage_limit",
        "resets": "15:00",
    }
    line = "       ↪ claude's usage limit (resets 15:00): on with mine\n"
    assert line in feed([{"event": "state_enter", "state": "fix", "iteration": 1}, switch])
    assert feed([switch], quiet=True) == line


def test_a_fan_out_shows_each_branch_start_and_end() -> None:
    shown = feed(
        [
            {"event": "state_enter", "state": "fan", "iteration": 1},
            {"event": "branch_start", "key": "fix@ab12", "item": "a\x1b[31m", "worktree": "/w"},
            {
                "event": "branch_finish",
                "key": "fix@ab12",
                "verdict": "success",
                "outcome": "terminal",
            },
            {"event": "evaluate", "type": "fanout", "verdict": "success"},
        ]
    )
    assert shown.splitlines() == [
        "[1/20] fan → (fan-out)",
        "       ⇉ fix@ab12 (a\\x1b[31m) started in /w",
        "       ⇇ fix@ab12: success (terminal)",
        "       ✓ success",
    ]
    assert feed([{"event": "branch_start", "key": "k"}], quiet=True) == ""
