"""Gemini CLI's own session record read for the tool calls that failed."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from little_loops.fsm.actions.gemini_record import failed_calls, record_file

SESSION = "4916c2c1-bbd3-4fa8-aafb-a0b58ff1bd67"


def shell_call(
    call_id: str, output: str, status: str = "success", shown: str | None = None
) -> dict[str, Any]:
    response = {"functionResponse": {"id": call_id, "response": {"output": output}}}
    call = {"id": call_id, "name": "run_shell_command", "status": status, "result": [response]}
    if shown is not None:
        call["resultDisplay"] = shown
    return call


def write_record(home: Path, calls: list[dict[str, Any]], session: str = SESSION) -> Path:
    """A record as Gemini CLI 0.61 writes it: the session line, then messages (a message
    with tool calls is written again once they have run)."""
    chats = home / ".gemini" / "tmp" / "project" / "chats"
    chats.mkdir(parents=True, exist_ok=True)
    path = chats / f"session-2026-12-07T02-44-{session[:8]}.jsonl"
    lines = [
        {"sessionId": session, "kind": "main"},
        {"id": "m1", "type": "gemini", "content": ""},
        {"id": "m1", "type": "gemini", "content": "", "toolCalls": calls},
        {"id": "m1", "type": "gemini", "content": "", "toolCalls": calls},  # again
        {"$set": {"lastUpdated": "2026-12-07T02:44:03.718Z"}},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_a_command_that_printed_and_exited_non_zero_is_failed_once(tmp_path: Path) -> None:
    write_record(
        tmp_path,
        [
            shell_call(
                "c1", "<untrusted_context>\nOutput: boom\nExit Code: 3\n</untrusted_context>"
            ),
            shell_call("c2", "Output: fine\nProcess Group PGID: 7"),
            shell_call("c3", "Output: (empty)\nExit Code: 0"),
            shell_call("c4", "no such tool", status="error"),
        ],
    )
    assert failed_calls(SESSION, {"HOME": str(tmp_path)}) == {"c1", "c4"}


def test_a_command_that_prints_the_tool_s_exit_line_itself_is_not_failed(tmp_path: Path) -> None:
    # As 0.61 records `echo start; printf 'Exit Code: 1\nProcess Group PGID: 7\n'` (exit 0)
    # and `echo 'Exit Code: 0'; exit 2`: its output is resultDisplay; the tool's lines follow.
    wrap = "<untrusted_context>\nOutput: {}\n</untrusted_context>"
    printed = "start\nExit Code: 1\nProcess Group PGID: 7"
    write_record(
        tmp_path,
        [
            shell_call("c1", wrap.format(printed + "\nProcess Group PGID: 9"), shown=printed),
            shell_call(
                "c2",
                wrap.format("Exit Code: 0\nExit Code: 2\nProcess Group PGID: 9"),
                shown="Exit Code: 0",
            ),
            # No resultDisplay that lines up (a truncated output): the whole response is read.
            shell_call("c3", wrap.format("x\nExit Code: 4"), shown="something else"),
        ],
    )
    assert failed_calls(SESSION, {"HOME": str(tmp_path)}) == {"c2", "c3"}


def test_gemini_cli_home_wins_over_home(tmp_path: Path) -> None:
    write_record(tmp_path / "gemini", [shell_call("c1", "Output: x\nExit Code: 1")])
    env = {"HOME": str(tmp_path / "elsewhere"), "GEMINI_CLI_HOME": str(tmp_path / "gemini")}
    assert failed_calls(SESSION, env) == {"c1"}


def test_no_record_of_that_session_is_nothing_failed(tmp_path: Path) -> None:
    # Another session whose id starts the same: its first line names it, not ours.
    write_record(tmp_path, [shell_call("c1", "Exit Code: 1")], session=SESSION[:8] + "-other")
    env = {"HOME": str(tmp_path)}
    assert record_file(SESSION, env) is None
    assert failed_calls(SESSION, env) == set()
    assert failed_calls(None, env) == set()


def test_a_session_id_that_is_no_id_looks_nowhere(tmp_path: Path) -> None:
    write_record(tmp_path, [shell_call("c1", "Exit Code: 1")])
    for hostile in ("../../x", "*", "4916c2c1/../../", ""):
        assert record_file(hostile, {"HOME": str(tmp_path)}) is None, hostile


def test_an_unreadable_record_is_nothing_failed(tmp_path: Path) -> None:
    path = write_record(tmp_path, [shell_call("c1", "Exit Code: 1")])
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], "{not json", '{"toolCalls": "junk"}', "[1]"]) + "\n")
    assert failed_calls(SESSION, {"HOME": str(tmp_path)}) == set()


def test_a_fifo_or_a_link_in_the_record_s_place_is_not_read(tmp_path: Path) -> None:
    path = write_record(tmp_path, [shell_call("c1", "Exit Code: 1")])
    real = path.with_name("real.jsonl")
    path.rename(real)
    path.symlink_to(real)  # a link a sandboxed step could plant: not followed
    assert failed_calls(SESSION, {"HOME": str(tmp_path)}) == set()
    path.unlink()
    os.mkfifo(path)  # a FIFO nobody writes: reading it would hang the run
    assert failed_calls(SESSION, {"HOME": str(tmp_path)}) == set()


def test_an_exit_code_of_thousands_of_digits_is_read_without_converting_it(
    tmp_path: Path,
) -> None:
    # int() refuses more than 4,300 digits (ValueError): the step ended in a traceback.
    write_record(
        tmp_path,
        [
            shell_call("c1", "Output: x\nExit Code: " + "7" * 5000),
            shell_call("c2", "Output: x\nExit Code: -" + "0" * 5000),
        ],
    )
    assert failed_calls(SESSION, {"HOME": str(tmp_path)}) == {"c1"}
