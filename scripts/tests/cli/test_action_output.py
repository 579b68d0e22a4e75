"""What a user sees of an action's output: its end on a failure, and its stderr in a file."""

from __future__ import annotations

import io
import threading
from typing import Any

import pytest
from support import llproc
from support.project import LoopProject
from support.slowdown import scaled

from little_loops.cli.display import ProgressDisplay
from little_loops.cli.outputtail import TAIL_LINES
from little_loops.fsm.facts.outcomes import ExitCode

TYPO = """\
    name: typo
    initial: fix
    states:
      fix:
        action: "echo building; Fix the build"
        on_success: done
        on_failure: failed
        on_error: failed
      done:
        terminal: true
      failed:
        terminal: true
"""


def test_a_failing_command_shows_its_stderr_and_where_its_output_is(
    loop_project: LoopProject,
) -> None:
    loop_project.write("typo", TYPO)
    result = llproc.ll_loop(loop_project.root, "run", "typo")
    # "failed" is a terminal state, reached on the verdict error: the run is a failure.
    assert result.returncode == ExitCode.TERMINAL_FAILURE
    lines = result.stderr.splitlines()
    failure = next(i for i, line in enumerate(lines) if "✗ error (exit code 127" in line)
    shown = lines[failure + 1 : failure + 4]
    assert shown[0] == "         stdout │ building"
    assert shown[1].startswith("         stderr │ bash: ")
    assert shown[1].endswith("Fix: command not found")
    assert shown[2] == (
        "         full output: .loops/.running/typo.fix.out (stderr: .loops/.running/typo.fix.err)"
    )
    running = loop_project.root / ".loops" / ".running"
    assert (running / "typo.fix.out").read_text() == "building\n"
    assert "Fix: command not found" in (running / "typo.fix.err").read_text()
    events = llproc.events(loop_project.root, "typo")
    complete = next(e for e in events if e["event"] == "action_complete")
    assert "Fix: command not found" in complete["stderr"]


NOT_FOUND_HINT = (
    "         hint: exit 127: bash found no such command (see stderr above); check its "
    "spelling and that it is installed and on PATH, or, if the action is meant for Claude, "
    "add action_type: prompt to send it to Claude"
)
# validate's warning, word for word (`run` says it before the first step, and after a 127).
SENTENCE = (
    "this reads like a sentence for Claude, but with no action_type it runs in bash, which "
    "has no command 'Fix'; add action_type: prompt to send it to Claude"
)


def test_a_command_bash_cannot_find_gets_a_hint_after_bashs_message(
    loop_project: LoopProject,
) -> None:
    # A mistyped command, or a sentence after `;` (not the first word): what to check.
    for action in ("pytset -q", '"echo building; Fix the build"'):
        loop_project.write("typo", TYPO.replace('"echo building; Fix the build"', action))
        result = llproc.ll_loop(loop_project.root, "run", "typo")
        lines = result.stderr.splitlines()
        failure = next(i for i, line in enumerate(lines) if "✗ error (exit code 127" in line)
        hint = next(i for i in range(failure, len(lines)) if "hint:" in lines[i])
        assert lines[hint - 1].startswith("         full output: ")
        assert lines[hint : hint + 2] == [NOT_FOUND_HINT, "       → failed"]
        assert "warning:" not in result.stderr
    # A sentence: validate's warning, once before the first step, and as the hint.
    loop_project.write("typo", TYPO.replace('"echo building; Fix the build"', "Fix the build"))
    result = llproc.ll_loop(loop_project.root, "run", "typo")
    lines = result.stderr.splitlines()
    assert lines[0] == f"ll-loop: warning: loop 'typo' > states > fix > action: {SENTENCE}"
    failure = next(i for i, line in enumerate(lines) if "✗ error (exit code 127" in line)
    assert lines[failure + 1].endswith("Fix: command not found")
    assert lines[failure + 2].startswith("         full output: ")
    assert lines[failure + 3] == f"         hint: {SENTENCE}"


PASSES = """\
    name: passes
    initial: fix
    max_iterations: 2
    states:
      fix:
        action: Fix the failing test in the parser
        next: fix
      done:
        terminal: true
"""


def test_a_sentence_with_next_says_why_at_every_pass_not_in_silence(
    loop_project: LoopProject,
) -> None:
    loop_project.write("passes", PASSES)
    result = llproc.ll_loop(loop_project.root, "run", "passes")
    assert result.returncode == ExitCode.MAX_ITERATIONS
    lines = result.stderr.splitlines()
    warning = f"ll-loop: warning: loop 'passes' > states > fix > action: {SENTENCE}"
    assert lines[0] == warning
    assert lines.count(warning) == 1  # said once, before the first step
    exits = [i for i, line in enumerate(lines) if line.startswith("       • exit 127")]
    assert len(exits) == 2  # each pass
    for at in exits:
        assert lines[at + 1].startswith("         stderr │ bash: ")
        assert lines[at + 1].endswith("Fix: command not found")
        assert lines[at + 2].startswith("         full output: .loops/.running/passes.fix.out")
        assert lines[at + 3] == f"         hint: {SENTENCE}"
        assert lines[at + 4] == "       → fix"
    quiet = llproc.ll_loop(loop_project.root, "run", "passes", "-q")
    assert "warning" not in quiet.stderr
    assert "hint" not in quiet.stderr


@pytest.mark.parametrize(
    ("state", "shown_after"),
    [
        # an evaluator that calls it a success
        (
            "        evaluate:\n          type: output_contains\n          pattern: ok\n"
            "          negate: true\n        on_success: done\n        on_failure: done\n",
            "✓ success",
        ),
        ("        next: done\n", "• exit 126"),  # no evaluation at all
    ],
)
def test_a_command_bash_cannot_execute_is_shown_whatever_the_verdict(
    loop_project: LoopProject, state: str, shown_after: str
) -> None:
    (loop_project.root / "build.sh").write_text("#!/bin/sh\necho built\n")  # not executable
    loop_project.write(
        "build",
        "name: build\ninitial: make\nstates:\n  make:\n    action: ./build.sh\n"
        + state.replace("        ", "    ")
        + "  done:\n    terminal: true\n",
    )
    result = llproc.ll_loop(loop_project.root, "run", "build")
    assert result.returncode == ExitCode.OK, result.stderr
    lines = result.stderr.splitlines()
    at = next(i for i, line in enumerate(lines) if line.lstrip().startswith(shown_after))
    assert lines[at + 1].startswith("         stderr │ bash: ")
    assert lines[at + 1].endswith("./build.sh: Permission denied")
    assert lines[at + 3] == (
        "         hint: exit 126: bash found the command but could not run it (see stderr "
        "above); make the file executable (chmod +x FILE) or run it with its interpreter "
        "(bash FILE)"
    )


def test_a_terminal_states_command_bash_cannot_find_is_shown(loop_project: LoopProject) -> None:
    loop_project.write(
        "ends",
        "name: ends\ninitial: done\nstates:\n  done:\n    terminal: true\n    action: pytset -q\n",
    )
    result = llproc.ll_loop(loop_project.root, "run", "ends")
    lines = result.stderr.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("       • exit 127"))
    assert lines[at + 1].endswith("pytset: command not found")
    assert lines[at + 3] == NOT_FOUND_HINT


def test_quiet_keeps_a_failure_quiet(loop_project: LoopProject) -> None:
    loop_project.write("typo", TYPO)
    result = llproc.ll_loop(loop_project.root, "run", "typo", "--quiet")
    assert "command not found" not in result.stderr
    assert result.stderr.startswith("Loop ended in failed, a failure: ")
    # The file has it all the same.
    err_file = loop_project.loops / ".running" / "typo.fix.err"
    assert "Fix: command not found" in err_file.read_text()


def _failed_step(output: str, stderr: str, **kw: Any) -> str:
    out = io.StringIO()
    display = ProgressDisplay(out, max_iterations=5, **kw)
    for event in (
        {"event": "state_enter", "state": "build", "iteration": 1},
        {"event": "action_start", "action": "make", "output_path": "/x/l.build.out"},
        {"event": "action_complete", "exit_code": 2, "duration_ms": 5, "output": output}
        | ({"stderr": stderr} if stderr else {}),
        {"event": "evaluate", "type": "exit_code", "verdict": "failure", "exit_code": 2},
    ):
        display(event)
    return out.getvalue()


def test_the_output_shown_is_bounded_cut_and_escaped() -> None:
    output = "".join(f"out {n}\n" for n in range(50))
    stderr = "".join(f"err {n}\n" for n in range(50)) + "\x1b[31mred\x1b[0m " + "y" * 500
    text = _failed_step(output, stderr)
    lines = text.splitlines()[2:]
    assert len(lines) == TAIL_LINES + 1  # and the path
    assert lines[0] == "         stdout │ out 40"  # the last lines of each stream
    assert lines[9] == "         stdout │ out 49"
    assert lines[10] == "         stderr │ err 41"
    assert lines[-2].startswith("         stderr │ \\x1b[31mred\\x1b[0m yyy")
    assert lines[-2].endswith("…")
    assert len(lines[-2]) < 200
    assert "\x1b" not in text
    assert lines[-1] == "         full output: /x/l.build.out (stderr: /x/l.build.err)"


def test_a_short_output_is_shown_whole_and_dimmed_in_colour() -> None:
    text = _failed_step("one\ntwo\n", "", color=True)
    assert "\033[2mstdout │ one\033[0m" in text
    assert "\033[2mstdout │ two\033[0m" in text
    assert "\033[2mfull output: /x/l.build.out\033[0m" in text


def test_a_success_shows_no_output() -> None:
    out = io.StringIO()
    display = ProgressDisplay(out, max_iterations=5)
    display({"event": "state_enter", "state": "build", "iteration": 1})
    display({"event": "action_start", "action": "make", "output_path": "/x/l.build.out"})
    display({"event": "action_complete", "exit_code": 0, "duration_ms": 5, "output": "fine"})
    display({"event": "evaluate", "type": "exit_code", "verdict": "success", "exit_code": 0})
    assert "fine" not in out.getvalue()


WAITS = """\
    name: waits
    initial: work
    states:
      work:
        action: "echo first-line; echo warned >&2; until [ -f go ]; do sleep 0.05; done; echo after"
        next: done
      done:
        terminal: true
"""


def _read_lines(stream: Any, into: list[str]) -> threading.Thread:
    def read() -> None:
        for line in stream:
            into.append(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return reader


def test_verbose_streams_the_actions_output_while_it_runs(loop_project: LoopProject) -> None:
    loop_project.write("waits", WAITS)
    proc = llproc.start(loop_project.root, "run", "waits", "-v")
    seen: list[str] = []
    reader = _read_lines(proc.stderr, seen)
    try:
        # Shown while the action still waits for `go`: streamed, not printed at its end.
        llproc.wait_for(lambda: "         first-line\n" in seen, what="the first line")
        llproc.wait_for(lambda: "         stderr │ warned\n" in seen, what="the stderr line")
        assert not any("exit 0" in line for line in seen)
        (loop_project.root / "go").touch()
        assert proc.wait(timeout=scaled(20)) == ExitCode.OK
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(scaled(5))
    text = "".join(seen)
    assert text.index("first-line") < text.index("         after\n") < text.index("• exit 0")


def test_logs_prints_a_shell_steps_stdout_then_stderr(loop_project: LoopProject) -> None:
    loop_project.write("typo", TYPO)
    llproc.ll_loop(loop_project.root, "run", "typo")
    result = llproc.ll_loop(loop_project.root, "logs", "typo")
    assert result.returncode == ExitCode.OK
    lines = result.stdout.splitlines()
    assert lines[:3] == [
        "==> .loops/.running/typo.fix.out (state fix, shell action) <==",
        "building",
        "==> .loops/.running/typo.fix.err (stderr) <==",
    ]
    assert lines[3].endswith("Fix: command not found")
    assert llproc.ll_loop(loop_project.root, "logs", "typo", "fix").stdout == result.stdout
    missing = llproc.ll_loop(loop_project.root, "logs", "typo", "done")
    assert missing.returncode == ExitCode.FAILED
    assert "no step output of state 'done'" in missing.stderr


def test_logs_follow_prints_a_live_step_until_the_run_ends(loop_project: LoopProject) -> None:
    loop_project.write("waits", WAITS)
    run = llproc.start(loop_project.root, "run", "waits")
    started = [run]
    try:
        llproc.wait_for(
            lambda: "first-line" in llproc.ll_loop(loop_project.root, "logs", "waits").stdout,
            what="the step's output",
        )
        follow = llproc.start(loop_project.root, "logs", "waits", "-f")
        started.append(follow)
        seen: list[str] = []
        reader = _read_lines(follow.stdout, seen)
        llproc.wait_for(lambda: "stderr │ warned\n" in seen, what="the stderr line")
        assert follow.poll() is None  # the run is live: it keeps following
        (loop_project.root / "go").touch()
        assert run.wait(timeout=scaled(20)) == ExitCode.OK
        assert follow.wait(timeout=scaled(20)) == ExitCode.OK  # ends when the run ends
        reader.join(scaled(5))
        assert "after\n" in seen
    finally:
        for proc in started:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
