"""A Claude session's stream-json lines as the text a person reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from little_loops.fsm.actions.transcript import (
    MAX_TOOL_LINES,
    TOOL_LINE_WIDTH,
    failed_tools,
    readable,
    tool_lines,
)


def _line(data: dict[str, Any]) -> str:
    return json.dumps(data)


def test_a_session_reads_as_words_tool_calls_results_answer_and_cost() -> None:
    lines = [
        _line({"type": "system", "subtype": "init", "model": "claude-x", "tools": ["Bash"]}),
        _line(
            {
                "type": "assistant",
                "message": {
                    "content": [
                        {"type": "text", "text": "Let me run the tests."},
                        {
                            "type": "tool_use",
                            "name": "Bash",
                            "input": {"command": "pytest -q", "description": "run"},
                        },
                    ]
                },
            }
        ),
        _line(
            {
                "type": "user",
                "message": {
                    "content": [
                        {"type": "tool_result", "content": "3 passed\nin 0.1s\nok", "id": "t"}
                    ]
                },
            }
        ),
        _line(
            {
                "type": "user",
                "message": {
                    "content": [
                        {
                            "type": "tool_result",
                            "is_error": True,
                            "content": [{"type": "text", "text": "x" * 300}],
                        }
                    ]
                },
            }
        ),
        _line({"type": "rate_limit_event"}),
        _line({"type": "result", "result": "All pass.", "total_cost_usd": 0.0123, "num_turns": 2}),
    ]
    shown = [text for line in lines for text in readable(line)]
    assert shown == [
        "· session started (model claude-x)",
        "Let me run the tests.",
        '→ Bash {"command": "pytest -q", "description": "run"}',
        "← 3 passed (+2 lines)",
        "← error: " + "x" * 99 + "…",
        "answer:",
        "All pass.",
        "cost: $0.0123 (2 turns)",
    ]


def test_plain_lines_are_kept_and_blank_ones_dropped() -> None:
    assert readable("Warning: something\n") == ["Warning: something"]
    assert readable("{not json") == ["{not json"]
    assert readable("   ") == []


def _call(command: str) -> str:
    block = {"type": "tool_use", "name": "Bash", "input": {"command": command}}
    return _line({"type": "assistant", "message": {"content": [block]}})


def _result(text: str) -> str:
    block = {"type": "tool_result", "content": text}
    return _line({"type": "user", "message": {"content": [block]}})


def test_tool_lines_are_the_calls_and_results_as_readable_shows_them() -> None:
    lines = [
        _line({"type": "system", "subtype": "init", "model": "claude-x"}),
        _line({"type": "assistant", "message": {"content": [{"type": "text", "text": "Hi"}]}}),
        _call("pytest -q"),
        _result("1 failed\nsee above"),
        "plain text, not stream-json",
        _line({"type": "result", "result": "Done", "total_cost_usd": 0.01}),
    ]
    shown = [text for line in lines for text in readable(line)]
    assert tool_lines(lines) == [
        '→ Bash {"command": "pytest -q"}',
        "← 1 failed (+1 lines)",
    ]
    assert all(text in shown for text in tool_lines(lines))


def test_tool_lines_keep_a_long_session_within_bounds() -> None:
    lines = [_call("x" * (TOOL_LINE_WIDTH * 2))] + [_call(f"n{n}") for n in range(MAX_TOOL_LINES)]
    kept = tool_lines(lines)
    assert len(kept) == MAX_TOOL_LINES + 1
    assert len(kept[0]) == TOOL_LINE_WIDTH
    assert kept[0].endswith("…")
    assert kept[-1] == "(and 1 more lines)"


def test_latest_step_is_the_last_line_the_reader_describes(tmp_path: Path) -> None:
    from little_loops.fsm.actions.transcript import STEP_WINDOW, latest_step

    def describe(line: str) -> str | None:
        return line.removeprefix("step ") if line.startswith("step ") else None

    out = tmp_path / "a.out"
    out.write_text("step one\n" + "x" * (STEP_WINDOW + 10) + "\nstep two\nnoise\n")
    assert latest_step(str(out), describe) == "two"
    out.write_text("step one\n" + "x" * (STEP_WINDOW + 10) + "\n")
    assert latest_step(str(out), describe) is None  # only the file's end is read
    assert latest_step(str(tmp_path / "missing.out"), describe) is None


def test_failed_tools_counts_the_tool_results_claude_code_marked_as_errors() -> None:
    def result(**extra: Any) -> dict[str, Any]:
        return {"type": "tool_result", "tool_use_id": "t", "content": "x", **extra}

    lines = [
        _line({"type": "user", "message": {"content": [result(is_error=True), result()]}}),
        _line({"type": "user", "message": {"content": [result(is_error="true")]}}),
        _line({"type": "assistant", "message": {"content": [result(is_error=True)]}}),
        "not json",
        _line({"type": "user", "message": {"content": [result(is_error=True)]}}),
    ]
    assert failed_tools(lines) == 2
