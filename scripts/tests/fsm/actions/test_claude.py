"""What a person is shown of a running Claude session: its latest step, from the stream."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from support.fake_claude import REPORT, json_line, said, stream_claude
from support.loops import first_action_complete, prompt_loop
from support.slowdown import scaled

from little_loops.cli.display import printable
from little_loops.fsm.actions import claude as claude_output
from little_loops.fsm.actions.claude import (
    apply_report,
    describe_step,
    latest_step,
    parse_report,
    report_from_file,
)
from little_loops.fsm.actions.runners import ActionRequest, ActionResult, DefaultActionRunner
from little_loops.fsm.engine.executor import FSMExecutor


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


# --- moved from test_spend.py ---


class TestClaudeReport:
    def test_report_becomes_output_cost_and_usage(self) -> None:
        result = apply_report(ActionResult(json.dumps(REPORT), "", 0, 5))
        assert result.output == "Fixed the bug"
        assert result.cost_usd == 0.0125
        assert result.usage == {
            "input_tokens": 1200,
            "output_tokens": 80,
            "cache_read_input_tokens": 300,
        }
        assert result.error is None

    def test_stream_transcript_ends_in_the_report(self) -> None:
        transcript = "\n".join(
            json.dumps(line)
            for line in (
                {"type": "system", "subtype": "init", "tools": ["Read"]},
                {"type": "assistant", "message": {"id": "m", "content": [], "usage": {}}},
                {"type": "user", "message": {"content": [{"type": "tool_result"}]}},
                {**REPORT, "type": "result"},
            )
        )
        raw = ActionResult(transcript + "\n", "", 0, 5, truncated=True, output_path="x.out")
        result = apply_report(raw)
        assert (result.output, result.cost_usd) == ("Fixed the bug", 0.0125)
        # The answer is whole even if the transcript outgrew the tail; the file keeps it all.
        assert (result.truncated, result.output_path) == (False, "x.out")
        # One assistant line on its own is a session cut short, not a report.
        assert parse_report(json.dumps({"type": "assistant", "message": {}})) is None

    def test_lines_that_are_not_json_are_passed_over(self) -> None:
        report = json.dumps({**REPORT, "type": "result"})
        warning_first = f"Warning: update available\n{report}\n"
        assert parse_report(warning_first) == {**REPORT, "type": "result"}
        cut_tail = 'ol_result", "content": "xxxx"}}\n' + report  # a tail starts mid-line
        assert apply_report(ActionResult(cut_tail, "", 0, 5)).cost_usd == 0.0125

    def test_a_session_without_its_report_keeps_its_words_and_tokens(self) -> None:
        def said(text: str, message: dict[str, Any]) -> str:
            content = [{"type": "text", "text": text}]
            return json.dumps({"type": "assistant", "message": {**message, "content": content}})

        stream = "\n".join(
            [
                json.dumps({"type": "system", "subtype": "init"}),
                said("one", {"usage": {"input_tokens": 10, "output_tokens": 1}}),
                said("two", {"usage": {"input_tokens": 20, "output_tokens": 2}}),  # no ids
                said(
                    "three",
                    {
                        "id": "m3",
                        "model": "claude-haiku-4-5-20251001",
                        "usage": {"input_tokens": 1_000_000, "output_tokens": 0},
                    },
                ),
            ]
        )
        # Cut short by a limit: the runner's error stands; the tokens are priced.
        killed = apply_report(ActionResult(stream, "", 124, 5, error="action timed out"))
        assert (killed.output, killed.error) == ("one\ntwo\nthree", "action timed out")
        assert killed.usage == {"input_tokens": 1_000_030, "output_tokens": 3}
        assert killed.cost_usd == pytest.approx(1.0 + 30 / 1e6 + 3 * 5 / 1e6)
        # Exit 0 without a report: the session did not finish, which is not a success.
        ended = apply_report(ActionResult(stream, "", 0, 5))
        assert (ended.exit_code, ended.error) == (
            1,
            "claude ended without its final report (the session did not finish)",
        )

    def test_plain_text_is_left_alone(self) -> None:
        raw = ActionResult("just text\n", "", 0, 5)
        assert apply_report(raw) is raw
        assert parse_report("{not json") is None
        assert parse_report("[1, 2]") is None
        assert parse_report('{"a":' * 100_000) is None  # too deep for json: not a report

    def test_is_error_report_is_an_error(self) -> None:
        report = {**REPORT, "is_error": True, "result": "API Error: 500 overloaded\nmore"}
        result = apply_report(ActionResult(json.dumps(report), "", 0, 5))
        assert result.exit_code == 1
        assert result.error == "claude reported an error: API Error: 500 overloaded"

    def test_claude_failing_without_a_report_is_an_error(self) -> None:
        result = apply_report(ActionResult("", "Segmentation fault\n", 139, 5))
        assert result.error == "claude exited with status 139: Segmentation fault"

    def test_unknown_slash_command_is_an_error(self) -> None:
        result = apply_report(ActionResult("Unknown command: /ll:nope\n", "", 0, 5))
        assert result.error == (
            "claude does not know the slash command /ll:nope (is there a "
            ".claude/commands file for it in the loop's project?)"
        )

    def test_successful_plain_output_stays_unjudged_by_runner(self) -> None:
        raw = ActionResult("All done. Unknown command: is just text here\n", "", 0, 5)
        assert apply_report(raw).error is None


class TestClaudeSession:
    def test_a_report_beyond_the_in_memory_tail_is_read_from_the_output_file(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # A long session (big tool results) and a long answer: more than the runner keeps.
        big_result = json.dumps({"type": "user", "message": {"content": "r" * 50_000}})
        answer = "A" * 300_000
        report = json.dumps({**REPORT, "type": "result", "result": answer})
        transcript = tmp_path / "transcript.jsonl"
        transcript.write_text((big_result + "\n") * 10 + report + "\n\n")
        stream_claude(tmp_path, monkeypatch, f"cat {transcript}\n")
        runner = DefaultActionRunner(cwd=tmp_path, output_dir=tmp_path, tail_bytes=64 * 1024)
        result = runner.run(ActionRequest("Fix it", 30, "claude"))
        assert result.error is None
        assert (result.cost_usd, result.output, result.truncated) == (0.0125, answer, False)

    def test_a_long_session_cut_short_counts_every_message_not_just_the_tail(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        tool_result = json.dumps({"type": "user", "message": {"content": "r" * 20_000}})
        turn = {
            "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": "step"}],
            "usage": {"input_tokens": 1000, "output_tokens": 100},
        }
        lines = [
            json.dumps({"type": "assistant", "message": {**turn, "id": f"m{i}"}})
            + "\n"
            + tool_result
            for i in range(40)
        ]
        transcript = tmp_path / "transcript.jsonl"
        transcript.write_text("\n".join(lines) + "\n")
        stream_claude(tmp_path, monkeypatch, f"cat {transcript}\nexec sleep 30\n")
        runner = DefaultActionRunner(cwd=tmp_path, output_dir=tmp_path, tail_bytes=64 * 1024)
        result = runner.execute(ActionRequest("Fix it", 30, "claude", idle_timeout=0.5))
        assert result.exit_code == 124
        # 40 messages of 1000 + 100 tokens, though only ~3 fit in the 64 KiB tail.
        assert result.usage == {"input_tokens": 40_000, "output_tokens": 4_000}
        assert result.cost_usd == pytest.approx((40_000 * 3 + 4_000 * 15) / 1e6)
        assert result.output == "\n".join(["step"] * 40)


def test_idle_timeout_ends_a_claude_session_that_goes_silent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Claude Code streams a line per message: a session that stops printing is stuck.
    stream_claude(
        tmp_path,
        monkeypatch,
        json_line({"type": "system", "subtype": "init"})
        + said("Looking at the tests.", "m1", 5)
        + said("Looking at the tests.", "m1", 12)  # the same message, its usage so far
        + said("Running them now.", "m2", 7)
        + "exec sleep 30\n",
    )
    fsm = prompt_loop(state_idle_timeout=0.5, max_iterations=1)
    events: list[dict[str, Any]] = []
    started = time.monotonic()
    FSMExecutor(
        fsm, event_callback=events.append, action_runner=DefaultActionRunner(cwd=tmp_path)
    ).run()
    assert time.monotonic() - started < scaled(10, at_most=25)  # not the `sleep 30`
    complete = next(e for e in events if e["event"] == "action_complete")
    assert complete["exit_code"] == 124
    assert complete["error"] == "action printed nothing for 500ms (idle_timeout)"
    # What Claude had said and used before it went quiet is kept; no cost was reported.
    assert complete["output"] == "Looking at the tests.\nLooking at the tests.\nRunning them now."
    assert complete["usage"] == {"input_tokens": 200, "output_tokens": 19}
    assert "cost_usd" not in complete


def test_idle_timeout_spares_a_claude_session_that_keeps_streaming(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    steps = "".join(said(f"step {i}", f"m{i}") + "sleep 0.25\n" for i in range(6))
    report = {**REPORT, "type": "result"}
    stream_claude(tmp_path, monkeypatch, steps + json_line(report))
    # A message every 0.25 s, a limit of 0.8 s (longer on a slower machine).
    fsm = prompt_loop(state_idle_timeout=scaled(0.8), max_iterations=1)
    complete = first_action_complete(fsm, tmp_path)
    assert complete["exit_code"] == 0
    assert complete["output"] == "Fixed the bug"  # the result line's answer, not the steps
    assert complete["cost_usd"] == 0.0125


def test_a_cost_no_float_can_hold_is_left_out_not_a_crash() -> None:
    from little_loops.fsm.actions.request import ActionResult

    for cost in ("1" + "0" * 400, "1e999", "NaN", "0.25"):
        line = f'{{"type": "result", "result": "done", "total_cost_usd": {cost}}}'
        result = apply_report(ActionResult(line, "", 0, 5))
        assert result.output == "done"
        assert result.cost_usd == (0.25 if cost == "0.25" else None), cost


def test_a_cost_outside_any_plausible_range_is_an_error_of_the_output() -> None:
    from little_loops.fsm.actions.request import ActionResult

    for cost in ("1e300", "1" + "0" * 400, "NaN", "20000", "-Infinity", "-1e999"):
        line = f'{{"type": "result", "result": "done", "total_cost_usd": {cost}}}'
        result = apply_report(ActionResult(line, "", 0, 5))
        assert result.cost_usd is None, cost  # never counted
        assert result.error is not None, cost
        assert "outside any plausible range" in result.error, cost
    fine = apply_report(
        ActionResult('{"type": "result", "result": "ok", "total_cost_usd": 9.5}', "", 0, 5)
    )
    assert (fine.cost_usd, fine.error) == (9.5, None)
