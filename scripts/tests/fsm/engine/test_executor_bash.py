"""FSMExecutor with the real DefaultActionRunner: real bash, a fake `claude` on PATH."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.fake_claude import install_claude
from support.loops import run_loop

from little_loops.fsm.definition.model.typed import FSMLoop, LLMConfig, RouteConfig, StateConfig


def test_current_retry_with_captures_in_bash(tmp_path: Path) -> None:
    fsm = FSMLoop(
        name="retry",
        initial="flaky",
        states={
            "flaky": StateConfig(
                action='n=$(( $(cat n 2>/dev/null || echo 0) + 1 )); echo $n > n; echo "try $n"; '
                '[ "$n" -ge 3 ]',
                capture="attempt",
                route=RouteConfig.from_dict({"success": "report", "failure": "$current"}),
            ),
            "report": StateConfig(
                action="echo 'done after: ${captured.attempt.output}'",
                capture="report",
                next="done",
            ),
            "done": StateConfig(terminal=True),
        },
        max_iterations=5,
    )
    result, _ = run_loop(fsm, tmp_path)
    assert result.terminated_by == "terminal"
    assert result.iterations == 3
    assert result.captured["attempt"]["output"] == "try 3"
    assert result.captured["report"]["output"] == "done after: try 3"


def test_undeclared_interpolated_target_with_bash(tmp_path: Path) -> None:
    fsm = FSMLoop(
        name="bad-route",
        initial="pick",
        states={
            "pick": StateConfig(
                action="printf nowhere",
                capture="next_state",
                route=RouteConfig.from_dict({"success": "${captured.next_state.output}"}),
            ),
            "done": StateConfig(terminal=True),
        },
    )
    result, events = run_loop(fsm, tmp_path)
    assert result.terminated_by == "error"
    assert "illegal transition pick → nowhere" in (result.error or "")
    assert "declared: pick, done" in (result.error or "")
    assert [e for e in events if e["event"] == "route"] == []


def test_prompt_action_reaches_fake_claude_with_right_argv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv_file = tmp_path / "argv.json"
    install_claude(
        tmp_path,
        monkeypatch,
        "#!/usr/bin/env python3\n"
        "import json, sys\n"
        f"json.dump(sys.argv[1:], open({str(argv_file)!r}, 'w'))\n"
        "print('I fixed it')\n",
    )
    fsm = FSMLoop(
        name="prompt",
        initial="ask",
        states={
            "ask": StateConfig(
                action="Fix the failing test in ${context.file}",
                action_type="prompt",
                on_success="done",
                on_failure="done",
            ),
            "done": StateConfig(terminal=True),
        },
        context={"file": "test_a.py"},
        llm=LLMConfig(enabled=False),
    )
    result, events = run_loop(fsm, tmp_path)
    assert result.terminated_by == "terminal"
    assert json.loads(argv_file.read_text()) == [
        "--dangerously-skip-permissions",
        "--output-format",
        "stream-json",
        "--verbose",
        "-p",
        "--",
        "Fix the failing test in test_a.py",
    ]
    complete = next(e for e in events if e["event"] == "action_complete")
    assert complete["output"] == "I fixed it\n"


def test_action_runs_in_loop_working_directory(tmp_path: Path) -> None:
    fsm = FSMLoop(
        name="cwd",
        initial="where",
        states={
            "where": StateConfig(action="pwd", capture="dir", next="done"),
            "done": StateConfig(terminal=True),
        },
    )
    result, _ = run_loop(fsm, tmp_path)
    assert result.captured["dir"]["output"].strip() == str(tmp_path)
