"""Reading Gemini CLI's stream-json: tokens, cost, the readable transcript, the latest step."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from little_loops.fsm.actions.gemini_stream import (
    failed_call,
    latest_step,
    read_session,
    readable,
    usage_of,
)

TOOL_RUN = Path(__file__).parent / "test_gemini_recorded" / "tool.out"


def test_usage_counts_fresh_input_cache_reads_and_thinking_as_output() -> None:
    stats = {"input_tokens": 2200, "cached": 400, "input": 1800, "output_tokens": 30}
    assert usage_of({**stats, "total_tokens": 2260}) == {
        "input_tokens": 1800,
        "output_tokens": 60,
        "cache_read_input_tokens": 400,
    }
    # Without `input` (an older CLI), fresh input is the prompt less the cached part.
    assert usage_of({"input_tokens": 100, "cached": 30, "output_tokens": 5})["input_tokens"] == 70
    assert usage_of({"input_tokens": "x", "output_tokens": True}) == {
        "input_tokens": 0,
        "output_tokens": 0,
    }


def test_a_recorded_session_read_line_by_line() -> None:
    session = read_session(TOOL_RUN.read_text().splitlines())
    assert session.model == "gemini-2.5-flash"
    assert session.answer == "I will check.\nFixed the constant."
    assert session.failure() is None
    assert session.cost() == pytest.approx((1800 * 0.30 + 40 * 0.30 + 60 * 2.50) / 1e6)


def test_answer_deltas_join_within_a_turn() -> None:
    lines = [
        json.dumps({"type": "message", "role": "assistant", "content": "Hel", "delta": True}),
        json.dumps({"type": "message", "role": "assistant", "content": "lo.", "delta": True}),
        json.dumps({"type": "tool_use", "tool_name": "glob", "parameters": {"pattern": "*"}}),
        json.dumps({"type": "message", "role": "assistant", "content": "Bye.", "delta": True}),
        json.dumps({"type": "error", "severity": "error", "message": "blocked"}),
        json.dumps({"type": "result", "status": "error"}),
    ]
    session = read_session(lines)
    assert session.answer == "Hello.\nBye."
    assert session.failure() == "blocked"
    assert session.cost() is None  # no stats, no model


def test_the_transcript_as_a_person_reads_it() -> None:
    shown = [text for line in TOOL_RUN.read_text().splitlines() for text in readable(line)]
    assert shown == [
        "· session started (model gemini-2.5-flash)",
        "I will check.",
        '→ run_shell_command {"command": "printf \'one\\\\ntwo\\\\n\'; exit 3", "description": '
        '"Show two lines"}',
        "← one (+1 lines)",
        "Fixed the constant.",
        "tokens: 1800 in (+400 cached), 60 out",
    ]
    failed = {"type": "tool_result", "status": "error", "error": {"message": "denied\nmore"}}
    assert readable(json.dumps(failed)) == ["← error: denied"]
    report = {"type": "result", "status": "error", "error": {"message": "[API Error: x]\ny"}}
    assert readable(json.dumps(report)) == ["(gemini reported an error: [API Error: x])"]
    assert readable("plain text\n") == ["plain text"]
    assert readable("   \n") == []


def test_the_latest_step_is_the_last_tool_call_or_words(tmp_path: Path) -> None:
    lines = TOOL_RUN.read_text().splitlines()
    path = tmp_path / "run.out"
    path.write_text("\n".join(lines[:5]) + "\n")
    assert latest_step(str(path)) == "run_shell_command: printf 'one\\ntwo\\n'; exit 3"
    path.write_text("\n".join(lines) + "\n")
    assert latest_step(str(path)) == "Fixed the constant."
    assert latest_step(str(tmp_path / "missing.out")) is None


@pytest.mark.parametrize("count", ["Infinity", "1e300", str(10**400)])
def test_token_counts_outside_any_plausible_range_are_an_error_not_a_crash(count: str) -> None:
    lines = TOOL_RUN.read_text().splitlines()
    report = json.loads(lines[-1])
    assert report["type"] == "result"
    line = json.dumps(report).replace(
        f'"input_tokens": {report["stats"]["input_tokens"]}', f'"input_tokens": {count}'
    )
    assert count in line
    session = read_session([*lines[:-1], line])
    session.usage()  # int(inf) ended the run with an internal OverflowError
    failure = session.failure()
    assert failure is not None
    assert "outside any plausible range" in failure


@pytest.mark.parametrize(
    ("result", "failed"),
    [
        ({"status": "error", "error": {"message": "no such tool"}}, True),
        ({"status": "success", "output": "Command exited with code: 3"}, True),
        ({"status": "success", "output": "Command terminated by signal: SIGKILL"}, True),
        ({"status": "success", "output": "Command exited with code: 0"}, False),
        # a command's own output that says so is its output, not Gemini's report
        ({"status": "success", "output": "log: Command exited with code: 3"}, False),
        ({"status": "success", "output": None}, False),
    ],
)
def test_a_failed_tool_result(result: dict[str, object], failed: bool) -> None:
    assert failed_call({"type": "tool_result", "tool_id": "t1", **result}) is failed


def test_the_session_counts_its_failed_tool_calls() -> None:
    lines = [
        json.dumps({"type": "tool_result", "status": "error"}),
        json.dumps({"type": "tool_result", "status": "success", "output": "fine"}),
    ]
    assert len(read_session(lines).failed_ids) == 1
