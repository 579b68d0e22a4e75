"""opencode's `run --format json` events read: sessions, tokens, tool calls, readable lines."""

from __future__ import annotations

import json
from typing import Any

from support.paths import DATA

from little_loops.fsm.actions.opencode_events import (
    MAX_TOOL_LINES,
    describe_step,
    error_text,
    failed_call,
    plain,
    read_session,
    readable,
    step_tokens,
    tool_call_lines,
)


def event(kind: str, **part: Any) -> str:
    return json.dumps({"type": kind, "sessionID": "ses_1", "part": part})


def tool(status: str, **state: Any) -> dict[str, Any]:
    return {"tool": "bash", "state": {"status": status, "input": {"command": "ls"}, **state}}


def test_a_recorded_session_read_whole() -> None:
    lines = (DATA / "opencode" / "tool_fix.stdout").read_text().splitlines()
    session = read_session(["a warning first", *lines])
    assert (session.session_id, session.steps, session.errors) == (
        "ses_de6444ed8ffevf1NizpQjfTE75",
        2,
        [],
    )
    assert session.answer == "Fixed: ANSWER is 42 now.\nThe check passes."
    assert session.cost > 0


def test_the_answer_is_the_last_message_that_said_something() -> None:
    session = read_session(
        [
            event("text", messageID="m1", text="Looking"),
            event("text", messageID="m2", text="Done, "),
            event("text", messageID="m2", text="all green."),
            event("text", messageID="m3", text="  "),
        ]
    )
    assert session.answer == "Done, all green."
    assert read_session([]).answer == ""
    assert not read_session(["{}", "not json"]).seen


def test_tokens_count_reasoning_as_output_and_ignore_nonsense() -> None:
    tokens = {"input": 5, "output": 2, "reasoning": 3, "cache": {"read": 7, "write": 1}}
    assert step_tokens({"tokens": tokens}) == {
        "input_tokens": 5,
        "output_tokens": 5,
        "cache_read_input_tokens": 7,
        "cache_creation_input_tokens": 1,
    }
    assert step_tokens({"tokens": {"input": "9", "output": True, "cache": None}}) == {}
    assert step_tokens({}) == {}


def test_tool_calls_show_the_call_and_the_first_line_of_its_result() -> None:
    assert tool_call_lines(tool("completed", output="a\nb\nc", metadata={"exit": 0})) == [
        '→ bash {"command": "ls"}',
        "← a (+2 lines)",
    ]
    assert tool_call_lines(tool("error", error="no such file")) == [
        '→ bash {"command": "ls"}',
        "← error: no such file",
    ]
    assert tool_call_lines(tool("running")) == ['→ bash {"command": "ls"}']
    long = tool_call_lines(tool("completed", output="x" * 300))[1]
    assert len(long) == len("← ") + 100
    assert long.endswith("…")


def test_a_long_session_keeps_its_first_tool_lines_and_counts_the_rest() -> None:
    calls = [event("tool_use", **tool("completed", output="ok"))] * (MAX_TOOL_LINES)
    session = read_session(calls)
    kept = session.tool_calls()
    assert len(kept) == MAX_TOOL_LINES + 1
    assert kept[-1] == f"(and {MAX_TOOL_LINES} more lines)"


def test_readable_lines_of_each_event() -> None:
    assert readable(event("text", text="one\ntwo")) == ["one", "two"]
    assert readable(event("step_start")) == []
    tokens = {"input": 800, "output": 50, "reasoning": 0, "cache": {"read": 200, "write": 0}}
    assert readable(event("step_finish", tokens=tokens, cost=0.002)) == [
        "· step done (800 in, 50 out, 200 from cache, $0.0020)"
    ]
    error = {"name": "APIError", "data": {"message": "Rate limit", "statusCode": 429}}
    line = json.dumps({"type": "error", "sessionID": "s", "error": error})
    assert readable(line) == ["error: APIError: Rate limit (HTTP 429)"]
    assert readable("plain words\n") == ["plain words"]
    assert readable("  ") == []


def test_error_text_and_plain() -> None:
    assert error_text({"name": "UnknownError", "data": {"message": "Unexpected\n error"}}) == (
        "UnknownError: Unexpected error"
    )
    assert error_text({}) == "Error: no detail"
    assert plain("\x1b[91m\x1b[1mError: \x1b[0mSession not found") == "Error: Session not found"


def test_describe_step_names_the_tool_and_its_subject() -> None:
    assert describe_step(event("tool_use", **tool("completed"))) == "bash: ls"
    read = {"tool": "read", "state": {"input": {"filePath": "/p/app.py"}}}
    assert describe_step(event("tool_use", **read)) == "read: /p/app.py"
    assert describe_step(event("tool_use", tool="todowrite", state={})) == "todowrite"
    assert describe_step(event("text", text="\nFirst line\nsecond")) == "First line"
    assert describe_step(event("step_finish")) is None
    assert describe_step("nope") is None


def test_a_failed_tool_call_is_an_error_state_or_a_command_s_non_zero_exit() -> None:
    assert failed_call(tool("error", error="no such file"))
    assert failed_call(tool("completed", output="", metadata={"exit": 3}))
    assert not failed_call(tool("completed", output="ok", metadata={"exit": 0}))
    assert not failed_call(tool("completed", output="ok", metadata={"exit": True}))
    assert not failed_call(tool("running", metadata={"exit": 3}))  # not finished
    assert not failed_call(tool("completed", output="ok", metadata="junk"))
    lines = [event("tool_use", **tool("error")), event("tool_use", **tool("completed"))]
    assert read_session(lines).tools_failed == 1
