"""`ll-loop run` through main_loop: progress lines, outcomes and exit codes, flags, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.fake_anthropic import FakeAnthropic
from support.fake_claude import shell_claude, spender_loop, spending_claude
from support.project import LoopProject

from little_loops import __version__
from little_loops.cli import main_loop
from little_loops.fsm.facts.outcomes import ExitCode

HELLO = """\
    name: hello
    initial: check
    states:
      check:
        action: test -f flag && echo present || { echo missing; exit 1; }
        capture: seen
        on_success: done
        on_failure: fix
      fix:
        action: touch flag && echo fixed
        next: check
      done:
        terminal: true
    max_iterations: 5
"""


def test_run_completes_with_the_doc_progress_lines(loop_project: LoopProject) -> None:
    loop_project.write("hello", HELLO)
    result = loop_project.run("run", "hello")
    assert result.code == ExitCode.OK
    assert result.out == ""  # stdout is kept for data
    lines = result.err.splitlines()
    assert lines[0] == "[1/5] check → test -f flag && echo present || { echo missing; exit 1; }"
    assert lines[1].startswith("       ✗ failure (exit 1)  ")
    assert lines[2:4] == [  # a failure shows the end of the output, and where all of it is
        "         stdout │ missing",
        "         full output: .loops/.running/hello.check.out",
    ]
    assert lines[4:6] == ["       → fix", "[1/5] fix → touch flag && echo fixed"]
    assert lines[6].startswith("       • exit 0  ")
    assert lines[7:9] == [
        "       → check",
        "[2/5] check → test -f flag && echo present || { echo missing; exit 1; }",
    ]
    assert lines[9].startswith("       ✓ success (exit 0)  ")
    assert lines[10] == "       → done"
    assert lines[-1].startswith("Loop completed: done (2 iterations, ")
    assert "\033[" not in result.err  # not a terminal: no colour, no ticker


def test_shorthand_name_means_run(loop_project: LoopProject) -> None:
    loop_project.write("hello", HELLO)
    result = loop_project.run("hello", "--quiet")
    assert result.code == ExitCode.OK
    assert result.err.strip().startswith("Loop completed: done (2 iterations, ")
    assert "→" not in result.err  # --quiet: the outcome line only


def test_shorthand_takes_run_flags_before_the_name(loop_project: LoopProject) -> None:
    loop_project.write("hello", HELLO)
    result = loop_project.run("-n", "1", "--quiet", "hello")
    assert result.code == ExitCode.MAX_ITERATIONS
    assert result.err.startswith("Loop stopped: max_iterations reached in check (1 iteration, ")
    # A flag's value is not taken for the name, even when it is a command's name.
    model = loop_project.run("--llm-model", "list", "-n", "1", "-q", "hello")
    assert (model.code, model.err.startswith("Loop completed: done (1 iteration")) == (
        ExitCode.OK,
        True,
    )
    # `--` ends the flags: a loop may be called like a command.
    named = loop_project.run("-q", "--", "status")
    assert named.code == ExitCode.USAGE
    assert "no loop named 'status'" in named.err
    # Flags written before a command are a usage error that says where they go.
    for argv, flags in (
        (("--json", "status", "hello"), "--json"),
        (("--format", "dot", "graph", "hello"), "--format dot"),
        (("-n", "5", "run", "hello"), "-n 5"),
    ):
        misplaced = loop_project.run(*argv)
        assert misplaced.code == ExitCode.USAGE
        command = argv[-2]
        assert misplaced.err.endswith(
            f"ll-loop: error: options go after the command: write 'll-loop {command} ... "
            f"{flags}', not '{flags}' before '{command}'\n"
        )
    # A loop name then a stray word is not taken for a misplaced command: it is a value.
    stray = loop_project.run("-q", "hello", "status")
    assert stray.err.endswith(
        "ll-loop: error: loop 'hello' takes no values (it declares no parameters), "
        "got 1: extra status\n"
    )
    assert loop_project.run("--version", "status", "hello").out == f"ll-loop {__version__}\n"
    assert loop_project.run("--version").code == ExitCode.OK
    top_help = loop_project.run("--help")
    assert (top_help.code, top_help.out.startswith("usage: ll-loop [-h] [--version] COMMAND")) == (
        ExitCode.OK,
        True,
    )


def test_run_by_path_and_fsm_yaml_first(loop_project: LoopProject) -> None:
    loop_project.write("hello", HELLO)
    loop_project.write("hello.fsm", HELLO.replace("max_iterations: 5", "max_iterations: 7"))
    assert "[1/7] check" in loop_project.run("run", "hello").err
    other = loop_project.root / "elsewhere.yaml"
    other.write_text(loop_project.loops.joinpath("hello.yaml").read_text())
    assert "[1/5] check" in loop_project.run("run", str(other)).err


def test_json_prints_the_execution_result(loop_project: LoopProject) -> None:
    loop_project.write("hello", HELLO)
    result = loop_project.run("run", "hello", "--json")
    data = json.loads(result.out)
    assert data == {
        "final_state": "done",
        "iterations": 2,
        "terminated_by": "terminal",
        "duration_ms": data["duration_ms"],
        "captured": {
            "seen": {
                "output": "present",
                "stderr": "",
                "exit_code": 0,
                "duration_ms": data["captured"]["seen"]["duration_ms"],
            }
        },
        "error": None,
        "handoff": None,
        "cost_usd": 0.0,
        "usage": {},
        "waited_ms": {},
    }
    assert "Loop completed" in result.err  # progress still goes to stderr


def test_max_iterations_flag_overrides_the_file_and_exits_3(loop_project: LoopProject) -> None:
    loop_project.write(
        "spin",
        """\
        name: spin
        initial: a
        states:
          a:
            action: "false"
            on_failure: a
            on_success: done
          done:
            terminal: true
        """,
    )
    for flag in ("-n", "--max-iterations"):
        result = loop_project.run("run", "spin", flag, "2")
        assert result.code == ExitCode.MAX_ITERATIONS
        assert "[2/2] a → false" in result.err
        assert "[3/2]" not in result.err
        assert "Loop stopped: max_iterations reached in a (2 iterations, " in result.err


def test_error_outcome_exits_1_with_the_reason(loop_project: LoopProject) -> None:
    loop_project.write(
        "broken",
        """\
        name: broken
        initial: a
        states:
          a:
            action: exit 3
            on_success: done
          done:
            terminal: true
        """,
    )
    result = loop_project.run("run", "broken")
    assert result.code == ExitCode.FAILED
    assert (
        "Loop failed in a: no valid transition from 'a' for verdict 'error': exit code 3"
        in result.err
    )


# The README's example as it was: its Claude step calls a slash command no project has.
README_AS_IT_WAS = """\
    name: fix-types
    initial: check
    states:
      check:
        action: exit 1
        on_success: done
        on_failure: fix
      fix:
        action: /ll:manage_issue bug fix
        route:
          success: check
          _: check
          _error: stuck
      done:
        terminal: true
      stuck:
        terminal: true
    max_iterations: 10
"""
UNKNOWN_COMMAND_HINT = (
    "claude does not know the slash command /ll:manage_issue (is there a .claude/commands"
    " file for it in the loop's project?)"
)


def test_a_terminal_reached_on_error_exits_7_and_says_why_in_full(
    loop_project: LoopProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Claude Code answers a slash command it has no file for so, exit 0, no API call.
    shell_claude(loop_project.root, monkeypatch, 'echo "Unknown command: /ll:manage_issue"')
    loop_project.write("fix-types", README_AS_IT_WAS)
    result = loop_project.run("run", "fix-types")
    assert result.code == ExitCode.TERMINAL_FAILURE == 7
    lines = result.err.splitlines()
    # The hint is whole (it was cut at 80 characters), on the step and on the last line.
    assert any(line.startswith(f"       ✗ error ({UNKNOWN_COMMAND_HINT})  ") for line in lines)
    why = f"reached from state 'fix' on the verdict error: {UNKNOWN_COMMAND_HINT}"
    assert lines[-1].startswith(f"Loop ended in stuck, a failure: {why} (1 iteration, ")
    history = loop_project.run("history", "fix-types").out.splitlines()
    assert any(line.endswith(f" fix → error ({UNKNOWN_COMMAND_HINT})") for line in history)
    assert f"loop_complete   Loop ended in stuck, a failure: {why} (1 iteration, " in history[-1]
    state = json.loads(loop_project.run("status", "fix-types", "--json").out)
    assert (state["status"], state["terminated_by"], state["current_state"]) == (
        "failed",
        "terminal_failure",
        "stuck",
    )
    assert state["error"] == why


def test_a_loop_that_starts_in_a_terminal_state_shows_no_pass_number(
    loop_project: LoopProject,
) -> None:
    loop_project.write(
        "once",
        """\
        name: once
        initial: done
        states:
          done:
            action: echo hello
            terminal: true
        """,
    )
    result = loop_project.run("run", "once")
    assert result.code == ExitCode.OK
    lines = result.err.splitlines()
    # No pass begins in a terminal state: no `[0/50]` for a pass that never was.
    assert lines[0] == "done → echo hello"
    assert lines[-1].startswith("Loop completed: done (0 iterations, ")


def test_loop_timeout_exits_4(loop_project: LoopProject) -> None:
    loop_project.write(
        "slow",
        """\
        name: slow
        initial: a
        timeout: 0.3
        states:
          a:
            action: sleep 5
            next: done
          done:
            terminal: true
        """,
    )
    result = loop_project.run("run", "slow")
    assert result.code == ExitCode.TIMEOUT
    assert "Loop stopped: timeout reached in a" in result.err


def test_handoff_exits_5_and_resume_continues_with_the_note(
    loop_project: LoopProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    # First call hands off; the resumed call gets the note prepended to its prompt.
    shell_claude(
        loop_project.root,
        monkeypatch,
        'if [ -e handed ]; then printf "%s" "${@: -1}" > prompt.txt; exit 0; fi\n'
        'touch handed; echo "CONTEXT_HANDOFF: finish the parser"',
        shell="bash",
    )
    loop_project.write(
        "work",
        """\
        name: work
        initial: code
        states:
          code:
            action: /do-work
            next: done
          done:
            terminal: true
        """,
    )
    first = loop_project.run("run", "work")
    assert first.code == ExitCode.HANDOFF
    assert "Loop paused for handoff in code (1 iteration, " in first.err
    assert "continue with: ll-loop resume work" in first.err
    assert loop_project.run("status", "work", "--json").out.count('"awaiting_continuation"') == 1
    second = loop_project.run("resume", "work")
    assert second.code == ExitCode.OK, second.err
    prompt = (loop_project.root / "prompt.txt").read_text()
    assert prompt.startswith("Continue from this handoff note: finish the parser\n\n/do-work")


def test_budget_exits_6(loop_project: LoopProject, monkeypatch: pytest.MonkeyPatch) -> None:
    spending_claude(loop_project.root, monkeypatch)
    loop_project.write("spender", spender_loop(0.1))
    result = loop_project.run("run", "spender", "--json")
    assert result.code == ExitCode.BUDGET
    assert json.loads(result.out)["terminated_by"] == "budget"
    assert "Loop stopped: cost budget reached in fix (" in result.err
    # Three Claude calls ran, three passes are counted (none for the call that was not made).
    assert "reached in fix (3 iterations, " in result.err
    assert result.err.endswith(", $0.1200); to go on: ll-loop resume spender --max-cost USD\n")
    assert "cost:         $0.1200" in loop_project.run("status", "spender").out.splitlines()

    # The spend is kept: the same budget cannot go on, a higher one can.
    refused = loop_project.run("resume", "spender")
    assert refused.code == ExitCode.FAILED
    assert refused.err == (
        "ll-loop: error: loop 'spender' has spent $0.1200 of its $0.1 budget; "
        "to go on: ll-loop resume spender --max-cost USD\n"
    )
    more = loop_project.run("resume", "spender", "--max-cost", "0.2", "--json")
    assert more.code == ExitCode.BUDGET
    # 0.12 -> 0.16 -> 0.20: two more Claude calls, then the new budget is reached.
    assert json.loads(more.out)["cost_usd"] == pytest.approx(0.2)
    assert json.loads(more.out)["iterations"] == 5


JUDGED = """\
    name: judged
    initial: check
    states:
      check:
        action: echo looks fine
        evaluate:
          type: llm_structured
        on_success: done
        on_failure: done
        on_error: done
      done:
        terminal: true
"""


def test_no_llm_judges_by_exit_code(loop_project: LoopProject) -> None:
    loop_project.write("judged", JUDGED)
    result = loop_project.run("run", "judged", "--no-llm")
    assert result.code == ExitCode.OK
    assert "✓ success (exit 0) (LLM off: judged by exit code)" in result.err


def test_llm_model_flag_reaches_the_api(
    loop_project: LoopProject, fake_anthropic: FakeAnthropic
) -> None:
    loop_project.write("judged", JUDGED)
    fake_anthropic.reply_tool({"verdict": "success", "confidence": 0.9, "reason": "ok"})
    result = loop_project.run("run", "judged", "--llm-model", "claude-test-model")
    assert result.code == ExitCode.OK, result.err
    (request,) = fake_anthropic.requests
    assert request.body["model"] == "claude-test-model"


def test_dry_run_prints_the_plan_and_runs_nothing(loop_project: LoopProject) -> None:
    loop_project.write(
        "plan",
        """\
        name: plan
        initial: make
        scope: [src]
        backoff: 2
        context:
          target: out.txt
        states:
          make:
            action: touch ${context.target}
            capture: made
            on_success: review
            on_failure: make
          review:
            action: /review the change
            route:
              success: done
              _: make
          done:
            terminal: true
        """,
    )
    result = loop_project.run("run", "plan", "--dry-run", "-n", "4", "--no-llm")
    assert result.code == ExitCode.OK
    assert result.out == (
        "loop: plan\n"
        "file: .loops/plan.yaml\n"
        "initial: make\n"
        "limits: max_iterations 4, timeout none, backoff 2.0s, maintain no, max_cost_usd none\n"
        "scope: src\n"
        "llm: claude-haiku-4-5 (off)\n"
        "needs: claude (review)\n"
        "context: target='out.txt'\n"
        "states:\n"
        "  make  [initial]\n"
        "    action (shell): touch ${context.target}\n"
        "    capture: made\n"
        "    evaluate: exit_code (default)\n"
        "    routes: success → review, failure → make\n"
        "  review\n"
        "    action (prompt): /review the change\n"
        "    agent: claude\n"
        "    evaluate: llm_structured (default for prompt actions) (LLM off: judged by exit code)\n"
        "    routes: success → done, _ → make\n"
        "  done  [terminal]\n"
    )
    assert not (loop_project.root / "out.txt").exists()
    assert not (loop_project.loops / ".running").exists()


def test_unknown_loop_lists_the_available_ones(loop_project: LoopProject) -> None:
    loop_project.write("hello", HELLO)
    result = loop_project.run("run", "helo")
    assert result.code == ExitCode.USAGE
    assert result.err == (
        "ll-loop: error: no loop named 'helo' (did you mean hello?); looked for "
        ".loops/helo.fsm.yaml, .loops/helo.yaml, .loops/helo.yml; available: hello\n"
    )


def test_a_typo_of_a_shipped_loop_suggests_it(loop_project: LoopProject) -> None:
    loop_project.write("hello", HELLO)
    for argv in (["fix-test"], ["run", "fix-test"], ["status", "fix-test"]):
        result = loop_project.run(*argv)
        assert result.code == ExitCode.USAGE
        assert result.err == (
            "ll-loop: error: no loop named 'fix-test' (did you mean library:fix-tests?); looked"
            " for .loops/fix-test.fsm.yaml, .loops/fix-test.yaml, .loops/fix-test.yml;"
            " available: hello\n"
        )
    # A loop of the project's own that is close comes first.
    loop_project.write("fix-tests", HELLO.replace("name: hello", "name: fix-tests"))
    assert "(did you mean fix-tests?)" in loop_project.run("fix-test").err


def test_no_loops_folder_is_a_message_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    for argv in (["run", "x"], ["status", "x"], ["resume", "x"], ["stop", "x"], ["history", "x"]):
        assert main_loop(argv) == ExitCode.USAGE
        err = capsys.readouterr().err
        assert err.endswith(
            "; there is no .loops/ folder here or above ('ll-loop init' makes one)\n"
        ), err
    assert main_loop(["list"]) == ExitCode.OK
    assert capsys.readouterr().err == "ll-loop: no loops in .loops/ (it does not exist)\n"


def test_invalid_definition_exits_2(loop_project: LoopProject) -> None:
    loop_project.write(
        "bad",
        """\
        name: bad
        initial: a
        states:
          a:
            action: "true"
            on_sucess: a
        """,
    )
    result = loop_project.run("run", "bad")
    assert result.code == ExitCode.USAGE
    assert result.err.startswith("ll-loop: error: .loops/bad.yaml:")
    assert "on_sucess" in result.err
    assert len(result.err.splitlines()) == 1


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "hello", "-n", "0"],
        ["run", "hello", "-n", "x"],
        ["run"],
        ["history", "h", "--tail", "0"],
    ],
)
def test_usage_errors_exit_2(loop_project: LoopProject, argv: list[str]) -> None:
    loop_project.write("hello", HELLO)
    assert loop_project.run(*argv).code == ExitCode.USAGE


def test_signal_handlers_are_restored_after_a_run(loop_project: LoopProject) -> None:
    import signal

    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    loop_project.write("hello", HELLO)
    assert loop_project.run("run", "hello").code == ExitCode.OK
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


def test_max_cost_flag_overrides_the_file(
    loop_project: LoopProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    spending_claude(loop_project.root, monkeypatch)
    loop_project.write("spender", spender_loop(100))
    result = loop_project.run("run", "spender", "--json", "--max-cost", "0.05")
    assert result.code == ExitCode.BUDGET
    assert json.loads(result.out)["cost_usd"] == pytest.approx(0.08)
    assert loop_project.run("run", "spender", "--max-cost", "0").code == 2
    assert (
        "--max-cost: must be more than 0, got 0"
        in loop_project.run("run", "spender", "--max-cost", "0").err
    )


def test_run_removes_temp_files_a_killed_run_left(loop_project: LoopProject) -> None:
    loop_project.write(
        "tidy",
        """\
        name: tidy
        initial: done
        states:
          done:
            terminal: true
        """,
    )
    running = loop_project.loops / ".running"
    running.mkdir()
    left = [
        running / f".tidy.{what}.k1ll3d_9.tmp" for what in ("state.json", "options.json", "lock")
    ]
    for path in left:
        path.write_text("{")
    assert loop_project.run("run", "tidy").code == 0
    assert [p.name for p in left if p.exists()] == []


def test_context_keys_that_look_like_numbers_are_read_as_written(
    loop_project: LoopProject,
) -> None:
    loop_project.write(
        "keys",
        """\
        name: keys
        initial: say
        context:
          010: ten
          1e3: thousand
        states:
          say:
            action: "echo ${context.010} ${context.1e3} > said.txt"
            next: done
          done:
            terminal: true
        """,
    )
    assert loop_project.run("validate", "--strict", "keys").code == ExitCode.OK
    assert loop_project.run("run", "keys", "-q").code == ExitCode.OK
    assert (loop_project.root / "said.txt").read_text() == "ten thousand\n"


# --- moved from test_qa_regressions.py ---


def test_a_running_folder_that_is_a_file_is_one_line(loop_project: LoopProject) -> None:
    loop_project.write(
        "hello",
        "name: hello\ninitial: a\nstates:\n  a:\n    action: 'true'\n    next: b\n"
        "  b:\n    terminal: true\n",
    )
    (loop_project.loops / ".running").write_text("")
    result = loop_project.run("run", "hello")
    assert result.code == 1
    assert result.err == "ll-loop: error: .loops/.running: File exists (errno 17)\n"
