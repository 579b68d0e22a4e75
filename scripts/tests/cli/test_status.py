"""`ll-loop status`, `list [--running]` and `history`: text and the documented --json shapes."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import UTC, datetime, timedelta

import pytest
from support import llproc
from support.loops import ERROR_TO_TERMINAL
from support.project import LoopProject

from little_loops.fsm.facts.outcomes import ExitCode
from little_loops.fsm.processes.pids import process_start_ticks
from little_loops.fsm.runs.store import StatePersistence

HELLO = """\
    name: hello
    initial: check
    states:
      check:
        action: test -f flag && echo present || { touch flag; exit 1; }
        on_success: done
        on_failure: check
      done:
        terminal: true
    max_iterations: 5
"""


def _crashed_state(project: LoopProject, name: str) -> int:
    """Make NAME's state say `running` with the pid of a process that has exited."""
    gone = subprocess.Popen(["true"])
    gone.wait()
    path = project.loops / ".running" / f"{name}.state.json"
    data = json.loads(path.read_text())
    data.update(status="running", pid=gone.pid, pid_start=None, terminated_by=None)
    path.write_text(json.dumps(data))
    return gone.pid


def test_status_text_and_json(loop_project: LoopProject) -> None:
    loop_project.write("hello", HELLO)
    assert loop_project.run("run", "hello", "-n", "4").code == ExitCode.OK
    result = loop_project.run("status", "hello")
    assert result.code == ExitCode.OK
    lines = result.out.splitlines()
    assert lines[:4] == [
        "loop:         hello",
        "status:       completed: ended in done (success)",
        "state:        done",
        "iteration:    2/4",  # the run's -n, not the file's 5
    ]
    assert lines[4].startswith("elapsed:      ")
    assert "last verdict: success" in lines
    assert "file:         .loops/hello.yaml" in lines

    data = json.loads(loop_project.run("status", "hello", "--json").out)
    assert data["loop_name"] == "hello"
    assert data["status"] == "completed"
    assert data["iteration"] == 2
    # The run ended: its process (this test) no longer writes its log.
    assert (data["alive"], data["crashed"]) == (False, False)
    assert set(data) >= {"current_state", "captured", "pid", "started_at", "elapsed_ms", "scope"}


def test_status_of_a_run_that_ended_in_a_terminal_reached_on_error(
    loop_project: LoopProject,
) -> None:
    loop_project.write("gives-up", ERROR_TO_TERMINAL)
    assert loop_project.run("run", "gives-up").code == ExitCode.TERMINAL_FAILURE
    lines = loop_project.run("status", "gives-up").out.splitlines()
    assert lines[1:3] == ["status:       failed: ended in stuck (failure)", "state:        stuck"]
    assert "error:        reached from state 'work' on the verdict error: exit code 2" in lines
    # Ended, and not at a limit: nothing to resume, and it says why.
    refused = loop_project.run("resume", "gives-up")
    assert (refused.code, refused.err) == (
        ExitCode.FAILED,
        "ll-loop: error: loop 'gives-up' ended (failed): reached from state 'work' on the verdict"
        " error: exit code 2; nothing to resume, start it again with 'll-loop run gives-up'\n",
    )


def test_status_of_a_crashed_run(loop_project: LoopProject) -> None:
    loop_project.write("hello", HELLO)
    loop_project.run("run", "hello")
    pid = _crashed_state(loop_project, "hello")
    result = loop_project.run("status", "hello")
    assert (
        f"status:       crashed: its process (pid {pid}) is gone; resume with ll-loop resume hello"
        in result.out.splitlines()
    )
    data = json.loads(loop_project.run("status", "hello", "--json").out)
    assert (data["alive"], data["crashed"]) == (False, True)


def test_status_of_a_loop_that_never_ran(loop_project: LoopProject) -> None:
    loop_project.write("hello", HELLO)
    result = loop_project.run("status", "hello")
    assert (result.code, result.err) == (
        ExitCode.FAILED,
        "ll-loop: loop 'hello' has not run yet (no .loops/.running/hello.state.json);"
        " start it with 'll-loop run hello'\n",
    )
    unknown = loop_project.run("status", "nope")
    assert unknown.code == ExitCode.USAGE
    assert unknown.err.startswith("ll-loop: error: no loop named 'nope'; looked for ")


def test_list_loops_and_runs(loop_project: LoopProject) -> None:
    loop_project.write("hello", HELLO)
    loop_project.write(
        "goal",
        """\
        name: goal
        paradigm: goal
        goal: tests pass
        tools: ["pytest"]
        """,
    )
    loop_project.write("broken", "name: [unclosed\n")
    loop_project.run("run", "hello")
    listing = loop_project.run("list")
    assert listing.code == ExitCode.OK
    assert listing.out.splitlines() == [
        "NAME    PARADIGM  STATUS     PATH",
        "broken  invalid   -          .loops/broken.yaml",
        "goal    goal      -          .loops/goal.yaml",
        "hello   fsm       completed  .loops/hello.yaml",
    ]
    rows = json.loads(loop_project.run("list", "--json").out)
    assert [(r["name"], r["paradigm"], r["status"]) for r in rows] == [
        ("broken", None, None),
        ("goal", "goal", None),
        ("hello", "fsm", "completed"),
    ]
    assert rows[0]["error"].startswith(".loops/broken.yaml:2:1: YAML syntax error")

    pid = _crashed_state(loop_project, "hello")
    running = loop_project.run("list", "--running")
    assert running.out.splitlines() == [
        "LOOP   STATUS   STATE  ITER  PID",
        f"hello  crashed  done   2     {pid} (dead)",
    ]
    (run,) = json.loads(loop_project.run("list", "--running", "--json").out)
    assert run == {
        "loop": "hello",
        "status": "running",
        "alive": False,
        "crashed": True,
        "current_state": "done",
        "iteration": 2,
        "pid": pid,
        "started_at": run["started_at"],
        "updated_at": run["updated_at"],
        "state_file": ".loops/.running/hello.state.json",
    }


WAITS = """\
name: waits
initial: wait
scope: [w]
states:
  wait:
    action: "until [ -f go ]; do sleep 0.05; done # {marker}"
    next: done
  done:
    terminal: true
"""


def test_list_running_lists_only_the_runs_going_on(loop_project: LoopProject, marker: str) -> None:
    """Runs that ended (completed, failed, stopped ...) are not listed; a live one is."""
    loop_project.write("hello", HELLO)
    assert loop_project.run("run", "hello").code == ExitCode.OK
    for status in ("failed", "stopped", "interrupted", "awaiting_approval"):
        path = loop_project.loops / ".running" / "hello.state.json"
        path.write_text(json.dumps({**json.loads(path.read_text()), "status": status}))
        nothing = loop_project.run("list", "--running")
        assert (nothing.code, nothing.out) == (ExitCode.OK, ""), status
        assert nothing.err == "ll-loop: no runs going on in .loops/\n"
        assert json.loads(loop_project.run("list", "--running", "--json").out) == []
    loop_project.write("waits", WAITS.format(marker=marker))
    live = llproc.start(loop_project.root, "run", "waits")
    try:
        # The state is saved as routed to (iteration 0), then as entered (iteration 1).
        llproc.wait_for(
            lambda: llproc.state(loop_project.root, "waits").get("iteration") == 1,
            60,
            "the run to wait",
        )
        listed = loop_project.run("list", "--running").out.splitlines()
        assert listed == [
            "LOOP   STATUS   STATE  ITER  PID",
            f"waits  running  wait   1     {live.pid} (alive)",
        ]
        (loop_project.root / "go").touch()
        assert live.wait(timeout=60) == ExitCode.OK
    finally:
        live.kill()
    assert loop_project.run("list", "--running").out == ""


def test_list_running_shows_a_corrupt_state_file(loop_project: LoopProject) -> None:
    running = loop_project.loops / ".running"
    running.mkdir()
    (running / "x.state.json").write_text("{")
    result = loop_project.run("list", "--running")
    assert result.out.splitlines()[1] == "x     corrupt  -      -     -"
    (row,) = json.loads(loop_project.run("list", "--running", "--json").out)
    assert row["error"].startswith(".loops/.running/x.state.json: corrupt state file (")


def test_history_lines_tail_and_json(loop_project: LoopProject) -> None:
    loop_project.write("hello", HELLO)
    loop_project.run("run", "hello")
    result = loop_project.run("history", "hello")
    assert result.code == ExitCode.OK
    lines = [line.split(" ", 1)[1].strip() for line in result.out.splitlines()]
    assert lines[:3] == [
        "loop_start      hello at check",
        "state_enter     check (iteration 1)",
        "action_start    check → test -f flag && echo present || { touch flag; exit 1; }",
    ]
    assert lines[3].startswith("action_complete check → exit 1 in ")
    assert lines[4:6] == [
        "evaluate        check → failure (exit 1)",
        "route           check → check (failure)",
    ]
    assert lines[-1].startswith("loop_complete   Loop completed: done (2 iterations, ")
    tail = loop_project.run("history", "hello", "--tail", "2").out.splitlines()
    assert len(tail) == 2
    assert tail[1] == result.out.splitlines()[-1]
    events = json.loads(loop_project.run("history", "hello", "--json", "--tail", "3").out)
    assert [e["event"] for e in events] == ["evaluate", "route", "loop_complete"]
    assert events[-1]["terminated_by"] == "terminal"


def test_history_of_a_loop_that_never_ran(loop_project: LoopProject) -> None:
    loop_project.write("hello", HELLO)
    result = loop_project.run("history", "hello")
    assert (result.code, result.out, result.err) == (
        ExitCode.FAILED,
        "",
        "ll-loop: loop 'hello' has no events yet\n",
    )
    assert loop_project.run("history", "hello", "--json").out == "[]\n"


def test_history_shows_events_of_unexpected_shape_raw(loop_project: LoopProject) -> None:
    loop_project.write("odd", HELLO.replace("name: hello", "name: odd"))
    running = loop_project.loops / ".running"
    running.mkdir()
    (running / "odd.events.jsonl").write_text(
        '{"event": "action_complete", "ts": "t1", "state": "s", "duration_ms": "slow"}\n'
        '{"event": "loop_complete", "ts": "t2", "iterations": 1, "duration_ms": 1e999}\n'
    )
    result = loop_project.run("history", "odd")
    assert result.code == ExitCode.OK
    assert result.out.splitlines() == [
        't1 action_complete {"state": "s", "duration_ms": "slow"}',
        't2 loop_complete   {"iterations": 1, "duration_ms": Infinity}',
    ]


def test_status_of_a_live_run_counts_the_time_in_its_state(loop_project: LoopProject) -> None:
    loop_project.write("hello", HELLO)
    assert loop_project.run("run", "hello").code == ExitCode.OK
    path = loop_project.loops / ".running" / "hello.state.json"
    data = json.loads(path.read_text())
    entered = (datetime.now(UTC) - timedelta(seconds=90)).isoformat()
    data.update(
        status="running",
        pid=os.getpid(),
        pid_start=process_start_ticks(os.getpid()),
        elapsed_ms=30_000,
        updated_at=entered,
    )
    path.write_text(json.dumps(data))
    writer = StatePersistence("hello", loop_project.loops)  # this process writes its log again
    writer.append_event({"event": "note", "ts": entered})
    out = loop_project.run("status", "hello").out
    assert "elapsed:      2m 0s (1m 30s in this state)" in out.splitlines()
    shown = json.loads(loop_project.run("status", "hello", "--json").out)
    assert 120_000 <= shown["elapsed_now_ms"] < 125_000
    writer.close()


# --- moved from test_qa_regressions.py ---


def test_json_of_a_run_never_holds_nan(loop_project: LoopProject) -> None:
    loop_project.write(
        "nan",
        """\
        name: nan
        initial: a
        states:
          a:
            action: "echo '{\\"a\\": NaN}'"
            evaluate: {type: output_json, path: .a, operator: eq, target: 0}
            on_success: done
            on_failure: done
            on_error: done
          done:
            terminal: true
        """,
    )
    # NaN is the verdict error, and `done` reached on it ends the run as a failure.
    assert loop_project.run("run", "nan", "--quiet").code == ExitCode.TERMINAL_FAILURE
    status = loop_project.run("status", "nan", "--json").out
    json.loads(status, parse_constant=lambda name: pytest.fail(f"{name} in status --json"))


def test_a_state_naming_a_live_stranger_says_it_is_not_this_run(
    loop_project: LoopProject,
) -> None:
    loop_project.write("hello", HELLO)
    assert loop_project.run("run", "hello").code == ExitCode.OK
    path = loop_project.loops / ".running" / "hello.state.json"
    data = json.loads(path.read_text())
    me = os.getpid()  # alive, but it does not hold the run's log
    data.update(status="running", pid=me, pid_start=process_start_ticks(me))
    path.write_text(json.dumps(data))
    out = loop_project.run("status", "hello").out
    assert (
        f"status:       crashed: its process (pid {me}) runs but is not this run's ll-loop"
        " (it does not hold the run's log); resume with ll-loop resume hello"
    ) in out.splitlines()
    listed = loop_project.run("list", "--running").out
    assert f"{me} (not this run)" in listed


def test_list_shows_a_pid_whose_process_is_gone_as_dead(loop_project: LoopProject) -> None:
    loop_project.write("hello", HELLO)
    assert loop_project.run("run", "hello").code == ExitCode.OK
    path = loop_project.loops / ".running" / "hello.state.json"
    data = json.loads(path.read_text())
    data.update(status="running", pid=2**22 + 1)  # above the kernel's pid_max: never alive
    path.write_text(json.dumps(data))
    assert f"{2**22 + 1} (dead)" in loop_project.run("list", "--running").out
