"""Spend and limits: Claude Code's JSON report, cost accounting, max_cost_usd, idle_timeout."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path
from typing import Any

import pytest

from little_loops.fsm.actions.claude import apply_report, parse_report
from little_loops.fsm.actions.request import ActionRequest, ActionResult
from little_loops.fsm.actions.runners import DefaultActionRunner
from little_loops.fsm.definition.model import FSMLoop, LLMConfig, StateConfig
from little_loops.fsm.engine.executor import FSMExecutor
from little_loops.fsm.persistence import PersistentExecutor, StatePersistence
from little_loops.fsm.runs.pricing import estimate_cost
from little_loops.fsm.runs.spend import Spend, dollars

REPORT = {
    "type": "result",
    "subtype": "success",
    "is_error": False,
    "result": "Fixed the bug",
    "total_cost_usd": 0.0125,
    "usage": {"input_tokens": 1200, "output_tokens": 80, "cache_read_input_tokens": 300},
}


def fake_claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cost: float) -> Path:
    """A `claude` on PATH that prints the JSON shape of `--output-format json` and logs argv."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "claude-calls.jsonl"
    script = bin_dir / "claude"
    report = {**REPORT, "total_cost_usd": cost}
    script.write_text(
        "#!/usr/bin/env python3\n"
        "import json, sys\n"
        f"open({str(log)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
        f"print(json.dumps({report!r}))\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return log


class PayingRunner:
    """A runner that records actions; each Claude action costs *cost* dollars."""

    def __init__(self, cost: float, exit_code: int) -> None:
        self.cost = cost
        self.exit_code = exit_code
        self.calls: list[str] = []

    def run(self, action: str, timeout: float, is_slash_command: bool) -> ActionResult:
        self.calls.append(action)
        out = ActionResult("x", "", self.exit_code, 1)
        out.cost_usd = self.cost if is_slash_command else None
        return out


def prompt_loop(state_idle_timeout: float | None = None, **kw: Any) -> FSMLoop:
    """A loop of repeated prompt actions that never succeeds on its own."""
    return FSMLoop(
        name="spender",
        initial="fix",
        states={
            "fix": StateConfig(
                action="Fix it",
                action_type="prompt",
                on_success="fix",
                on_failure="fix",
                idle_timeout=state_idle_timeout,
            ),
            "done": StateConfig(terminal=True),
        },
        llm=LLMConfig(enabled=False),
        **kw,
    )


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


class TestPricing:
    def test_known_model_and_dated_snapshot(self) -> None:
        usage = {"input_tokens": 1_000_000, "output_tokens": 100_000}
        assert estimate_cost("claude-haiku-4-5", usage) == pytest.approx(1.5)
        assert estimate_cost("claude-haiku-4-5-20251001", usage) == pytest.approx(1.5)

    def test_unknown_model_is_not_guessed(self) -> None:
        assert estimate_cost("someone-elses-model", {"input_tokens": 5}) is None
        assert estimate_cost("claude-haiku-4-5", {"input_tokens": "5"}) is None

    def test_a_newer_model_is_priced_as_its_family(self) -> None:
        usage = {"input_tokens": 1_000_000, "output_tokens": 1_000_000}
        assert estimate_cost("claude-opus-4-8", usage) == pytest.approx(5 + 25)
        assert estimate_cost("claude-sonnet-4-6-20260101", usage) == pytest.approx(3 + 15)
        assert estimate_cost("claude-3-7-sonnet-latest", usage) == pytest.approx(3 + 15)
        assert estimate_cost("claude-opus-4-1", usage) == pytest.approx(15 + 75)  # listed
        # Older models are listed with their own (higher) price, dated or not.
        assert estimate_cost("claude-opus-4-20250514", usage) == pytest.approx(15 + 75)
        assert estimate_cost("claude-3-opus-20240229", usage) == pytest.approx(15 + 75)
        # Provider prefixes name the same model; names that only contain a family do not.
        assert estimate_cost("us.anthropic.claude-sonnet-4-5-20250929-v1:0", usage) == 18
        assert estimate_cost("anthropic/claude-haiku-4-5", usage) == pytest.approx(1 + 5)
        assert estimate_cost("my-claude-haiku", usage) is None
        # Vertex, OpenRouter-style dotted versions, context-window tags, any case.
        for name, price in (
            ("claude-sonnet-4-5@20250929", 3 + 15),
            ("claude-3-5-sonnet-v2@20241022", 3 + 15),
            ("claude-opus-4-1@20250805", 15 + 75),
            ("anthropic/claude-opus-4.1", 15 + 75),
            ("anthropic/claude-opus-4", 15 + 75),
            ("anthropic/claude-3.5-sonnet", 3 + 15),
            ("claude-sonnet-4-5-20250929[1m]", 3 + 15),
            ("Claude-Haiku-4-5 ", 1 + 5),
        ):
            assert estimate_cost(name, usage) == pytest.approx(price), name
        assert estimate_cost("claude-haikus", usage) is None

    def test_cache_tokens_are_priced(self) -> None:
        # A Claude Code session is mostly cache reads: leaving them out would count ~nothing.
        usage = {
            "input_tokens": 3,
            "output_tokens": 200,
            "cache_creation_input_tokens": 20_000,
            "cache_read_input_tokens": 150_000,
        }
        expected = (3 * 3 + 200 * 15 + 20_000 * 3 * 1.25 + 150_000 * 3 * 0.1) / 1e6
        assert estimate_cost("claude-sonnet-4-5", usage) == pytest.approx(expected)

    def test_spend_adds_tokens_with_prefix(self) -> None:
        spend = Spend()
        spend.add(0.5, {"input_tokens": 3, "output_tokens": 1, "junk": "x"}, "claude_")
        spend.add(None, {"input_tokens": 2}, "claude_")
        assert spend.cost_usd == 0.5
        assert spend.usage == {"claude_input_tokens": 5, "claude_output_tokens": 1}
        assert spend.reached(0.5)
        assert not spend.reached(0.6)
        assert not spend.reached(None)
        assert [dollars(x) for x in (0.1, 2, 2.50, 1e-9, 0.12345)] == [
            "$0.1",
            "$2",
            "$2.5",
            "$0.000000001",
            "$0.12345",
        ]


class TestBudget:
    def test_budget_stops_after_the_first_paid_call_that_crosses_it(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        calls = fake_claude(tmp_path, monkeypatch, cost=0.04)
        events: list[dict[str, Any]] = []
        fsm = prompt_loop(max_cost_usd=0.1, max_iterations=20)
        result = FSMExecutor(
            fsm, event_callback=events.append, action_runner=DefaultActionRunner(cwd=tmp_path)
        ).run()
        # 0.04, 0.08, 0.12: the third call crosses $0.10, so no fourth call starts.
        assert len(calls.read_text().splitlines()) == 3
        assert result.terminated_by == "budget"
        assert result.cost_usd == pytest.approx(0.12)
        assert result.error == "spend $0.1200 reached max_cost_usd $0.1 before state 'fix'"
        complete = [e for e in events if e["event"] == "action_complete"]
        assert complete[0]["cost_usd"] == 0.04
        assert complete[0]["usage"]["input_tokens"] == 1200
        assert complete[-1]["spent_usd"] == pytest.approx(0.12)
        assert result.usage["claude_input_tokens"] == 3600

    def test_recorded_dollars_are_rounded_to_micro_dollars(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # Claude Code sums its cost in floating point and can report float noise; the
        # event and the run's total must agree to the digit, whatever Claude printed.
        fake_claude(tmp_path, monkeypatch, cost=0.29152500000000003)
        events: list[dict[str, Any]] = []
        fsm = prompt_loop(max_iterations=1)
        result = FSMExecutor(
            fsm, event_callback=events.append, action_runner=DefaultActionRunner(cwd=tmp_path)
        ).run()
        (complete,) = [e for e in events if e["event"] == "action_complete"]
        assert repr(complete["cost_usd"]) == "0.291525"
        assert repr(complete["spent_usd"]) == "0.291525"
        assert result.cost_usd == complete["cost_usd"]

    def test_a_report_beyond_the_in_memory_tail_is_read_from_the_output_file(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # A long session (big tool results) and a long answer: more than the runner keeps.
        big_result = json.dumps({"type": "user", "message": {"content": "r" * 50_000}})
        answer = "A" * 300_000
        report = json.dumps({**REPORT, "type": "result", "result": answer})
        transcript = tmp_path / "transcript.jsonl"
        transcript.write_text((big_result + "\n") * 10 + report + "\n\n")
        _stream_claude(tmp_path, monkeypatch, f"cat {transcript}\n")
        runner = DefaultActionRunner(cwd=tmp_path, output_dir=tmp_path, tail_bytes=64 * 1024)
        result = runner.run("Fix it", 30, True)
        assert result.error is None
        assert (result.cost_usd, result.output, result.truncated) == (0.0125, answer, False)

    def test_a_paid_terminal_action_waits_for_the_budget_too(self) -> None:
        fsm = FSMLoop(
            name="maintained",
            initial="check",
            states={
                "check": StateConfig(action="true", on_success="done", on_failure="done"),
                "done": StateConfig(terminal=True, action="/report"),
            },
            maintain=True,
            max_iterations=10,
            max_cost_usd=0.15,
        )
        runner = PayingRunner(cost=0.1, exit_code=0)
        result = FSMExecutor(fsm, action_runner=runner).run()
        # $0.10, $0.20: the second report crosses $0.15, so no third one starts.
        assert runner.calls == ["true", "/report", "true", "/report", "true"]
        assert (result.terminated_by, result.final_state) == ("budget", "done")

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
        _stream_claude(tmp_path, monkeypatch, f"cat {transcript}\nexec sleep 30\n")
        runner = DefaultActionRunner(cwd=tmp_path, output_dir=tmp_path, tail_bytes=64 * 1024)
        result = runner.execute(ActionRequest("Fix it", 30, True, idle_timeout=0.5))
        assert result.exit_code == 124
        # 40 messages of 1000 + 100 tokens, though only ~3 fit in the 64 KiB tail.
        assert result.usage == {"input_tokens": 40_000, "output_tokens": 4_000}
        assert result.cost_usd == pytest.approx((40_000 * 3 + 4_000 * 15) / 1e6)
        assert result.output == "\n".join(["step"] * 40)

    def test_shell_states_run_on_after_the_budget_is_reached(self) -> None:
        fsm = FSMLoop(
            name="mixed",
            initial="fix",
            states={
                "fix": StateConfig(action="/fix", next="check"),
                "check": StateConfig(action="test", on_success="done", on_failure="fix"),
                "done": StateConfig(terminal=True),
            },
            max_cost_usd=0.5,
        )
        runner = PayingRunner(cost=1.0, exit_code=1)
        result = FSMExecutor(fsm, action_runner=runner).run()
        assert runner.calls == ["/fix", "test"]
        assert (result.terminated_by, result.final_state) == ("budget", "fix")

    def test_spend_is_saved_and_survives_resume(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        fake_claude(tmp_path, monkeypatch, cost=0.25)
        loops = tmp_path / ".loops"
        fsm = prompt_loop(max_iterations=2)
        first = PersistentExecutor(
            fsm, loops_dir=loops, action_runner=DefaultActionRunner(cwd=tmp_path)
        )
        assert first.run().terminated_by == "max_iterations"
        state = StatePersistence("spender", loops).load_state()
        assert state is not None
        assert state.cost_usd == pytest.approx(0.5)
        assert state.usage["claude_output_tokens"] == 160


class TestIdleTimeout:
    def test_silent_action_is_killed_within_two_seconds_of_the_limit(self, tmp_path: Path) -> None:
        fsm = FSMLoop(
            name="idle",
            initial="wait",
            states={
                "wait": StateConfig(action="sleep 30", idle_timeout=0.5, on_error="done"),
                "done": StateConfig(terminal=True),
            },
        )
        events: list[dict[str, Any]] = []
        started = time.monotonic()
        result = FSMExecutor(
            fsm, event_callback=events.append, action_runner=DefaultActionRunner(cwd=tmp_path)
        ).run()
        assert time.monotonic() - started < 2.5
        assert result.final_state == "done"
        complete = next(e for e in events if e["event"] == "action_complete")
        assert complete["exit_code"] == 124
        assert complete["error"] == "action printed nothing for 500ms (idle_timeout)"
        assert next(e for e in events if e["event"] == "evaluate")["verdict"] == "error"

    def test_loop_default_applies_and_chatty_action_survives(self, tmp_path: Path) -> None:
        fsm = FSMLoop(
            name="idle",
            initial="chatty",
            states={
                "chatty": StateConfig(
                    action="for i in 1 2 3 4 5 6; do echo $i; sleep 0.2; done",
                    on_success="silent",
                ),
                "silent": StateConfig(action="sleep 30", on_error="done"),
                "done": StateConfig(terminal=True),
            },
            idle_timeout=0.6,
        )
        events: list[dict[str, Any]] = []
        FSMExecutor(
            fsm, event_callback=events.append, action_runner=DefaultActionRunner(cwd=tmp_path)
        ).run()
        codes = [e["exit_code"] for e in events if e["event"] == "action_complete"]
        assert codes == [0, 124]


def test_llm_judge_tokens_and_estimate_count_toward_spend(fake_anthropic: Any) -> None:
    fake_anthropic.reply_tool(
        {"verdict": "success", "confidence": 0.9, "reason": "ok"},
        usage={"input_tokens": 1000, "output_tokens": 50},
    )

    class Runner:
        def run(self, action: str, timeout: float, is_slash_command: bool) -> ActionResult:
            return ActionResult("done", "", 0, 1)

    fsm = FSMLoop(
        name="judged",
        initial="fix",
        states={
            "fix": StateConfig(action="/fix", on_success="done", on_failure="fix"),
            "done": StateConfig(terminal=True),
        },
        llm=LLMConfig(model="claude-haiku-4-5"),
    )
    events: list[dict[str, Any]] = []
    result = FSMExecutor(fsm, event_callback=events.append, action_runner=Runner()).run()
    assert result.final_state == "done"
    assert result.usage == {"judge_input_tokens": 1000, "judge_output_tokens": 50}
    assert result.cost_usd == pytest.approx(0.00125)
    assert next(e for e in events if e["event"] == "evaluate")["cost_usd"] == 0.00125


def _first_action_complete(fsm: FSMLoop, project: Path) -> dict[str, Any]:
    """Run *fsm* with real processes in *project*; its first `action_complete` event."""
    events: list[dict[str, Any]] = []
    FSMExecutor(
        fsm, event_callback=events.append, action_runner=DefaultActionRunner(cwd=project)
    ).run()
    return next(e for e in events if e["event"] == "action_complete")


def _stream_claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> None:
    """A `claude` on PATH whose shell *body* prints a stream-json transcript."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "claude"
    script.write_text(f"#!/bin/sh\n{body}")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")


def _line(data: dict[str, Any]) -> str:
    return "echo '" + json.dumps(data) + "'\n"


def _said(text: str, message_id: str = "m1", output_tokens: int = 10) -> str:
    usage = {"input_tokens": 100, "output_tokens": output_tokens}
    message = {"id": message_id, "content": [{"type": "text", "text": text}], "usage": usage}
    return _line({"type": "assistant", "message": message})


def test_idle_timeout_ends_a_claude_session_that_goes_silent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Claude Code streams a line per message: a session that stops printing is stuck.
    _stream_claude(
        tmp_path,
        monkeypatch,
        _line({"type": "system", "subtype": "init"})
        + _said("Looking at the tests.", "m1", 5)
        + _said("Looking at the tests.", "m1", 12)  # the same message, its usage so far
        + _said("Running them now.", "m2", 7)
        + "exec sleep 30\n",
    )
    fsm = prompt_loop(state_idle_timeout=0.5, max_iterations=1)
    events: list[dict[str, Any]] = []
    started = time.monotonic()
    FSMExecutor(
        fsm, event_callback=events.append, action_runner=DefaultActionRunner(cwd=tmp_path)
    ).run()
    assert time.monotonic() - started < 10
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
    steps = "".join(_said(f"step {i}", f"m{i}") + "sleep 0.25\n" for i in range(6))
    report = {**REPORT, "type": "result"}
    _stream_claude(tmp_path, monkeypatch, steps + _line(report))
    fsm = prompt_loop(state_idle_timeout=0.8, max_iterations=1)
    complete = _first_action_complete(fsm, tmp_path)
    assert complete["exit_code"] == 0
    assert complete["output"] == "Fixed the bug"  # the result line's answer, not the steps
    assert complete["cost_usd"] == 0.0125


def test_the_loops_idle_timeout_does_not_end_a_claude_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A loop-level idle_timeout is for its shell steps: a Claude session inside a long
    # tool call (1 s of silence here) is not ended by it.
    report = {**REPORT, "type": "result"}
    _stream_claude(tmp_path, monkeypatch, _said("running the suite") + "sleep 1\n" + _line(report))
    fsm = prompt_loop(idle_timeout=0.3, max_iterations=1)
    complete = _first_action_complete(fsm, tmp_path)
    assert (complete["exit_code"], complete["output"]) == (0, "Fixed the bug")


def test_validate_warns_about_a_short_idle_timeout_on_a_claude_state() -> None:
    from little_loops.fsm.definition.loader import load_text
    from little_loops.fsm.definition.validation import check_document

    def warnings(idle: str) -> list[str]:
        text = (
            f"name: x\ninitial: fix\nidle_timeout: 5\nstates:\n  fix:\n    action: /ll:fix\n"
            f"{idle}    on_success: check\n    on_failure: check\n    on_error: check\n"
            "  check:\n    action: make test\n    idle_timeout: 5\n    next: done\n"
            "  done:\n    terminal: true\n"
        )
        report = check_document(load_text(text, "x.yaml"))
        return [str(w) for w in report.warnings if "idle_timeout" in str(w)]

    # Shell actions may have any idle_timeout (the loop's applies to them only); a Claude
    # action's own needs room for long steps.
    assert warnings("") == []
    assert warnings("    idle_timeout: 300\n") == []
    assert warnings("    idle_timeout: 60\n") == [
        "loop 'x' > states > fix > idle_timeout: 60s is short for a Claude action: Claude "
        "Code prints a line only when a message or a tool call is finished, so a long reply "
        "or a long tool call (a test run) is silent for longer; 120s or more is safer"
    ]
