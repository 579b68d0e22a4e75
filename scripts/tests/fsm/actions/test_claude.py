"""What a person is shown of a running Claude session: its latest step, from the stream."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from little_loops.cli.display import printable
from little_loops.fsm.actions import claude as claude_output
from little_loops.fsm.actions.claude import describe_step, latest_step, report_from_file


def assistant(*blocks: dict[str, Any]) -> str:
    return json.dumps({"type": "assistant", "message": {"id": "m", "content": list(blocks)}})


def tool(name: str, **inputs: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": inputs}


@pytest.mark.parametrize(
    ("line", "step"),
    [
        (
            assistant(tool("Bash", command="pytest -q\n  --lf", description="run")),
            "Bash: pytest -q --lf",
        ),
        (assistant(tool("Read", file_path="/src/app.py")), "Read: /src/app.py"),
        (assistant(tool("Grep", pattern="TODO", path="src")), "Grep: src"),
        (assistant(tool("TodoWrite", todos=[])), "TodoWrite"),
        (assistant({"type": "text", "text": "\n  Let me look.\nThen fix it."}), "Let me look."),
        # The last block of a message is the newest thing it did.
        (
            assistant({"type": "text", "text": "First"}, tool("Edit", file_path="a.py")),
            "Edit: a.py",
        ),
        (assistant({"type": "thinking", "thinking": "hmm"}), None),
        (json.dumps({"type": "user", "message": {"content": [{"type": "tool_result"}]}}), None),
        (json.dumps({"type": "result", "result": "done"}), None),
        (json.dumps({"type": "assistant", "message": "not a dict"}), None),
        (json.dumps({"type": "assistant", "message": {"content": [1, None, "x"]}}), None),
        ("not json at all", None),
        ("[1, 2]", None),
        ("", None),
    ],
)
def test_describe_step(line: str, step: str | None) -> None:
    assert describe_step(line) == step


def test_latest_step_reads_the_end_of_a_growing_transcript(tmp_path: Path) -> None:
    path = tmp_path / "fix.out"
    assert latest_step(str(path)) is None  # not there yet
    path.write_text(json.dumps({"type": "system", "subtype": "init"}) + "\n")
    assert latest_step(str(path)) is None
    # A long transcript: megabytes of tool results, then the step that matters.
    big = json.dumps({"type": "user", "message": {"content": "x" * 100_000}})
    with path.open("a") as handle:
        handle.write(assistant(tool("Read", file_path="old.py")) + "\n")
        handle.write((big + "\n") * 30)
        handle.write(assistant(tool("Write", file_path="new.py")) + "\n")
        handle.write('{"type": "assistant", "message": {"content": [{"ty')  # mid-write
    assert latest_step(str(path)) == "Write: new.py"
    path.write_bytes(b"\xff\xfe garbage \n" + assistant(tool("Bash", command="ls")).encode())
    assert latest_step(str(path)) == "Bash: ls"


def test_printable_blanks_control_characters() -> None:
    assert printable("ok\x1b[31m red\x07") == "ok [31m red "


@pytest.mark.parametrize(
    ("content", "found"),
    [
        (b'{"type": "result", "result": "ok"}', True),  # no newline at all
        (b'{"type": "system"}\r\n{"type": "result", "result": "ok"}\r\n\r\n', True),
        (b'{"type": "result", "result": "ok"}\n{"type": "assistant"}\n', False),  # not last
        (b"", False),
        (b"\n\n\n", False),
        (b"\xff\xfe\n", False),
    ],
)
def test_report_from_file_reads_the_last_line(tmp_path: Path, content: bytes, found: bool) -> None:
    path = tmp_path / "t.out"
    path.write_bytes(content)
    report = report_from_file(str(path))
    assert (report == {"type": "result", "result": "ok"}) is found
    assert report_from_file(str(tmp_path / "missing.out")) is None


def test_report_from_file_finds_a_line_across_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(claude_output, "_BLOCK", 7)  # many small blocks
    path = tmp_path / "t.out"
    line = json.dumps({"type": "result", "result": "x" * 50})
    path.write_text(f'{{"type": "system"}}\n{line}\n')
    assert report_from_file(str(path)) == json.loads(line)
    monkeypatch.setattr(claude_output, "_MAX_REPORT_LINE", 20)  # longer than allowed
    assert report_from_file(str(path)) is None


def test_file_lines_reads_in_blocks_and_passes_over_overlong_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(claude_output, "_BLOCK", 4)
    monkeypatch.setattr(claude_output, "_MAX_REPORT_LINE", 10)
    path = tmp_path / "t.out"
    path.write_bytes(b"one\n" + b"x" * 50 + b"\ntwo\n\xff\nend")
    assert list(claude_output.file_lines(str(path))) == ["one", "two", "\ufffd", "end"]
    assert list(claude_output.file_lines(str(tmp_path / "missing"))) == []
    assert list(claude_output.file_lines(None)) == []


def test_a_cut_short_session_keeps_a_bounded_tail_and_survives_a_missing_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from little_loops.fsm.actions.claude import apply_report
    from little_loops.fsm.actions.request import ActionResult

    monkeypatch.setattr(claude_output, "_MAX_PARTIAL_TEXT", 12)
    words = "\n".join(
        assistant({"type": "text", "text": text}) for text in ("first words", "last words")
    )
    missing = str(tmp_path / "gone.out")
    # The runner said its tail was cut and the file has all, but the file is gone: the
    # tail in memory is used; the words kept are the last 12 characters.
    raw = ActionResult(words, "", 124, 5, error="timed out", truncated=True, output_path=missing)
    result = apply_report(raw)
    assert (result.output, result.truncated) == ("s\nlast words", True)
    # Under the cap but only the tail was read: still truncated, the lost start is shown.
    monkeypatch.setattr(claude_output, "_MAX_PARTIAL_TEXT", 1000)
    result = apply_report(raw)
    assert (result.output, result.truncated) == ("first words\nlast words", True)
    # All of it in memory, under the cap: whole.
    whole = apply_report(ActionResult(words, "", 124, 5, error="timed out"))
    assert whole.truncated is False
