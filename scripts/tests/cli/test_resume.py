"""`ll-loop resume`: after kill -9 of the whole process group, after Ctrl-C, and its refusals."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
from support import llproc
from support.project import LoopProject
from support.slowdown import scaled

from little_loops.fsm.facts.outcomes import ExitCode

CRASHY = """\
    name: crashy
    initial: count
    context:
      greeting: hi
    states:
      count:
        action: echo 41
        capture: n
        next: slow
      slow:
        action: if [ -e go ]; then echo fast; else touch started; sleep {marker}; fi
        on_success: report
      report:
        action: echo "n=${{captured.n.output}} greeting=${{context.greeting}} prev=${{prev.output}}"
        capture: report
        next: done
      done:
        terminal: true
"""


def test_kill_9_of_the_process_group_then_resume_to_completion(
    loop_project: LoopProject, marker: str
) -> None:
    loop_project.write("crashy", CRASHY.format(marker=marker))
    proc = llproc.start(loop_project.root, "run", "crashy")
    llproc.wait_for(lambda: (loop_project.root / "started").exists(), what="the slow action")
    # The state file is a snapshot of the event log, a few hundredths of a second behind.
    llproc.wait_for(
        lambda: llproc.state(loop_project.root, "crashy").get("current_state") == "slow",
        timeout=1,
        what="the snapshot of the slow state",
    )
    before = llproc.state(loop_project.root, "crashy")
    os.killpg(proc.pid, signal.SIGKILL)  # the loop's whole group, as closing a terminal might
    assert proc.wait(timeout=scaled(5)) == -signal.SIGKILL
    # The action has a session of its own, so it outlives the killed group...
    assert llproc.sleepers(marker) != []

    crashed = loop_project.run("status", "crashy")
    assert f"crashed: its process (pid {proc.pid}) is gone; resume with ll-loop resume crashy" in (
        crashed.out
    )
    # The file's context changes after the crash: the run keeps the context it started with.
    loop_project.write(
        "crashy", CRASHY.format(marker=marker).replace("greeting: hi", "greeting: changed")
    )
    (loop_project.root / "go").touch()
    resumed = llproc.ll_loop(loop_project.root, "resume", "crashy", "--json")
    assert resumed.returncode == ExitCode.OK, resumed.stderr
    assert "ll-loop: resuming loop 'crashy' at state 'slow' (iteration 1, " in resumed.stderr
    # ...until resume ends it before running the state again: never two agents at once.
    assert "process(es) the crashed run's action left running (pids " in resumed.stderr
    assert llproc.sleepers(marker) == []
    result = json.loads(resumed.stdout)
    assert result["terminated_by"] == "terminal"
    assert result["captured"]["n"]["output"] == "41"
    assert result["captured"]["report"]["output"] == "n=41 greeting=hi prev=fast"
    assert result["duration_ms"] >= before["elapsed_ms"]
    after = llproc.state(loop_project.root, "crashy")
    assert after["status"] == "completed"
    assert after["iteration"] == before["iteration"] == 1
    events = llproc.events(loop_project.root, "crashy")  # every line parses
    starts = [e for e in events if e["event"] == "loop_start"]
    assert [s["resumed"] for s in starts] == [False, True]
    assert [e["state"] for e in events if e["event"] == "state_enter"] == [
        "count",
        "slow",
        "slow",
        "report",
    ]
    assert events[-1]["event"] == "loop_complete"


def test_ctrl_c_then_resume_continues_in_process(loop_project: LoopProject, marker: str) -> None:
    loop_project.write("crashy", CRASHY.format(marker=marker))
    proc = llproc.start(loop_project.root, "run", "crashy")
    llproc.wait_for(lambda: (loop_project.root / "started").exists(), what="the slow action")
    os.kill(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=scaled(5))
    assert proc.returncode == ExitCode.INTERRUPTED
    assert "Loop interrupted in slow (1 iteration, " in err
    assert llproc.sleepers(marker) == []
    assert llproc.state(loop_project.root, "crashy")["status"] == "interrupted"

    (loop_project.root / "go").touch()
    resumed = loop_project.run("resume", "crashy")
    assert resumed.code == ExitCode.OK, resumed.err
    assert "[1/50] slow → if [ -e go ]" in resumed.err
    assert "Loop completed: done (1 iteration, " in resumed.err
    state = llproc.state(loop_project.root, "crashy")
    assert state["captured"]["report"]["output"] == "n=41 greeting=hi prev=fast"


def test_resume_keeps_the_runs_overrides(loop_project: LoopProject) -> None:
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
    # Simulate a crash after the run started with -n 2: its state says running, pid gone.
    assert loop_project.run("run", "spin", "-n", "2").code == 3
    state_file = loop_project.loops / ".running" / "spin.state.json"
    data = json.loads(state_file.read_text())
    data.update(status="running", iteration=1, current_state="a", pid=2**22 + 1)
    state_file.write_text(json.dumps(data))
    result = loop_project.run("resume", "spin")
    assert result.code == 3
    assert "[2/2] a → false" in result.err


def test_resume_refusals_are_one_line(loop_project: LoopProject) -> None:
    loop_project.write(
        "ok",
        """\
        name: ok
        initial: done
        states:
          done:
            terminal: true
        """,
    )
    never = loop_project.run("resume", "ok")
    assert never.code == ExitCode.FAILED
    assert never.err == (
        "ll-loop: error: loop 'ok' has no saved run to resume; start it with 'll-loop run ok'\n"
    )
    assert loop_project.run("run", "ok").code == ExitCode.OK
    done = loop_project.run("resume", "ok")
    assert done.code == ExitCode.FAILED
    assert done.err == (
        "ll-loop: error: loop 'ok' completed; nothing to resume, start it again with "
        "'ll-loop run ok'\n"
    )


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ('{"schema_version": 1, "loop_name": "ok", "sta', "invalid or truncated JSON at line 1"),
        ("", "empty"),
        ("[1, 2]", "expected a JSON object, found a list"),
    ],
)
def test_corrupt_state_file_gives_a_clear_message(
    loop_project: LoopProject, content: str, why: str
) -> None:
    loop_project.write(
        "ok",
        """\
        name: ok
        initial: done
        states:
          done:
            terminal: true
        """,
    )
    running = loop_project.loops / ".running"
    running.mkdir()
    (running / "ok.state.json").write_text(content)
    for command in ("resume", "status", "stop"):
        result = loop_project.run(command, "ok")
        assert result.code == ExitCode.FAILED
        assert result.err.startswith(
            "ll-loop: error: .loops/.running/ok.state.json: corrupt state file ("
        ), result.err
        assert why in result.err
        assert result.err.endswith("); delete it, or start the loop over with 'll-loop run ok'\n")
        assert "Traceback" not in result.err


COUNTER = """\
    name: counter
    initial: bump
    {limits}
    states:
      bump:
        action: "echo x >> ticks; echo ${{context.word}}"
        capture: last
        evaluate:
          type: exit_code
        on_success: check
      check:
        action: "[ $(wc -l < ticks) -ge 5 ]"
        on_success: done
        on_failure: bump
      done:
        action: "echo final=${{captured.last.output}}"
        terminal: true
"""


def test_a_run_stopped_by_max_iterations_goes_on_with_a_higher_limit(
    loop_project: LoopProject,
) -> None:
    loop_project.write("counter", COUNTER.format(limits="context: {word: kept}"))
    first = loop_project.run("run", "counter", "-n", "2")
    assert first.code == 3
    assert first.err.endswith("to go on: ll-loop resume counter --max-iterations N\n")
    status = loop_project.run("status", "counter").out
    assert "to go on:     ll-loop resume counter --max-iterations N" in status.splitlines()

    # The limit the run had is remembered: resuming without raising it is refused, and
    # the saved run is left as it was.
    state_file = loop_project.loops / ".running" / "counter.state.json"
    saved = state_file.read_bytes()
    again = loop_project.run("resume", "counter")
    assert again.code == ExitCode.FAILED
    assert again.err == (
        "ll-loop: error: loop 'counter' has run 2 of its 2 iterations; "
        "to go on: ll-loop resume counter --max-iterations N\n"
    )
    assert state_file.read_bytes() == saved

    more = loop_project.run("resume", "counter", "--max-iterations", "4")
    assert more.code == 3
    assert "resuming loop 'counter' at state 'bump' (iteration 2," in more.err
    assert (loop_project.root / "ticks").read_text() == "x\n" * 4  # 2 + 2 more, none re-run

    # The raised limit is now the run's: a plain resume is refused at 4, and 10 finishes.
    assert "has run 4 of its 4 iterations" in loop_project.run("resume", "counter").err
    done = loop_project.run("resume", "counter", "-n", "10")
    assert done.code == ExitCode.OK, done.err
    assert (loop_project.root / "ticks").read_text() == "x\n" * 5
    assert "final=kept" in done.err  # the capture and context survived both stops
    state = json.loads(state_file.read_text())
    assert (state["status"], state["iteration"]) == ("completed", 5)


def test_a_run_stopped_by_its_timeout_goes_on_once_the_file_allows_more(
    loop_project: LoopProject,
) -> None:
    path = loop_project.write(
        "counter",
        COUNTER.format(limits="timeout: 0.5\n    context: {word: w}").replace(
            "echo x >> ticks;", "echo x >> ticks; sleep 0.2;"
        ),
    )
    first = loop_project.run("run", "counter")
    assert first.code == 4
    assert "to go on: raise timeout: in the loop file, then ll-loop resume counter" in first.err
    refused = loop_project.run("resume", "counter")
    assert refused.code == ExitCode.FAILED
    assert "of its 0.5s timeout; to go on: raise timeout: in the loop file" in refused.err
    path.write_text(path.read_text().replace("timeout: 0.5", "timeout: 30"))
    done = loop_project.run("resume", "counter")
    assert done.code == ExitCode.OK, done.err
    assert (loop_project.root / "ticks").read_text() == "x\n" * 5


def test_other_failures_are_still_not_resumable(loop_project: LoopProject) -> None:
    loop_project.write(
        "broken",
        """\
        name: broken
        initial: a
        states:
          a:
            action: "exit 7"
            on_success: done
          done:
            terminal: true
        """,
    )
    assert loop_project.run("run", "broken").code == ExitCode.FAILED
    refused = loop_project.run("resume", "broken", "-n", "99")
    assert refused.code == ExitCode.FAILED
    assert refused.err.startswith("ll-loop: error: loop 'broken' ended (failed): ")
    assert refused.err.endswith("nothing to resume, start it again with 'll-loop run broken'\n")


def test_a_run_stopped_in_the_terminal_it_reached_on_error_resumes_to_that_failure(
    loop_project: LoopProject, marker: str
) -> None:
    loop_project.write(
        "gives-up",
        f"""\
        name: gives-up
        initial: work
        states:
          work:
            action: exit 2
            on_success: done
            on_error: stuck
          stuck:
            action: if [ -e go ]; then echo bye; else touch started; sleep {marker}; fi
            terminal: true
          done:
            terminal: true
        """,
    )
    proc = llproc.start(loop_project.root, "run", "gives-up")
    llproc.wait_for(
        lambda: (loop_project.root / "started").exists(), timeout=60, what="stuck's action"
    )
    stopped = llproc.ll_loop(loop_project.root, "stop", "gives-up", timeout=60)
    assert stopped.returncode == ExitCode.OK, stopped.stderr
    assert proc.wait(timeout=60) == ExitCode.STOPPED
    # The state file keeps how the run came to `stuck`, so the resumed run ends as it would
    # have: a failure, saying why.
    saved = llproc.state(loop_project.root, "gives-up")
    why = "reached from state 'work' on the verdict error: exit code 2"
    assert (saved["current_state"], saved["arrived_on_error"]) == ("stuck", why)
    (loop_project.root / "go").touch()
    resumed = llproc.ll_loop(loop_project.root, "resume", "gives-up", timeout=60)
    assert resumed.returncode == ExitCode.TERMINAL_FAILURE, resumed.stderr
    assert resumed.stderr.splitlines()[-1].startswith(f"Loop ended in stuck, a failure: {why} (")
    assert llproc.state(loop_project.root, "gives-up")["terminated_by"] == "terminal_failure"


def test_a_resume_that_cannot_restore_changes_nothing(loop_project: LoopProject) -> None:
    path = loop_project.write("counter", COUNTER.format(limits="context: {word: w}"))
    assert loop_project.run("run", "counter", "-n", "2").code == 3
    running = loop_project.loops / ".running"
    before = {p.name: p.read_bytes() for p in running.iterdir() if p.is_file()}
    path.write_text(path.read_text().replace("bump", "grow"))  # the saved state is gone
    result = loop_project.run("resume", "counter", "-n", "9")
    assert result.code == ExitCode.FAILED
    assert result.err.startswith("ll-loop: error: cannot resume: saved state 'bump' ")
    assert "resuming" not in result.err  # nothing was resumed
    after = {p.name: p.read_bytes() for p in running.iterdir() if p.is_file()}
    assert after == before  # not even the new -n was recorded


def test_a_damaged_log_after_the_snapshot_is_reported_and_the_snapshot_used(
    loop_project: LoopProject,
) -> None:
    loop_project.write(
        "few",
        """\
        name: few
        initial: a
        max_iterations: 2
        states:
          a:
            action: "true"
            on_success: $current
          done:
            terminal: true
        """,
    )
    assert loop_project.run("run", "few").code == ExitCode.MAX_ITERATIONS
    events = loop_project.loops / ".running" / "few.events.jsonl"
    with events.open("a") as handle:
        handle.write('{"event":"x","ts":"t","saved":{"iteration+":1}}\n')
    why = (
        "showing the last snapshot: .loops/.running/few.events.jsonl: cannot apply the events"
        " after the snapshot ('iteration+' adds to 'iteration', which is not a list or an object)"
    )
    status = loop_project.run("status", "few")
    assert status.code == ExitCode.OK
    assert status.err == f"ll-loop: warning: {why}\n"
    assert "iteration:    2/2" in status.out
    resumed = loop_project.run("resume", "few", "-n", "3")
    assert resumed.err.startswith(
        f"ll-loop: warning: {why.replace('showing the last', 'resuming from the last')}\n"
    )
    assert resumed.code == ExitCode.MAX_ITERATIONS


# `check` holds (sleeps) once where a `hold` file was put: there the run is killed or stopped.
CAPPED = """\
name: capped
initial: work
{cap}
states:
  work:
    action: echo work >> ticks
    next: check
  check:
    action: echo check >> ticks; if [ -e hold ]; then rm hold; touch started; sleep {marker}; fi
    next: work
  done:
    terminal: true
"""


def _capped_end(root: Path) -> dict[str, object]:
    """How a run of `capped` ended: its status and its counts."""
    state = llproc.state(root, "capped")
    keys = ("status", "terminated_by", "current_state", "iteration", "caps")
    return {key: state[key] for key in keys}


@pytest.mark.parametrize("how", ["kill -9", "stop"])
@pytest.mark.parametrize("cap", ["max_steps: 5", "max_iterations: 2"])
def test_a_step_cut_short_and_resumed_counts_once_toward_the_caps(
    tmp_path: Path, marker: str, cap: str, how: str
) -> None:
    """Killed (or stopped) inside its second step's action and resumed, the run stops at
    the same step and pass as one never cut short: the step run again is the same step."""
    ends = []
    for name, cut in (("whole", False), ("cut", True)):
        root = tmp_path / name
        (root / ".loops").mkdir(parents=True)
        (root / ".loops" / "capped.yaml").write_text(CAPPED.format(cap=cap, marker=marker))
        if cut:
            (root / "hold").touch()
        proc = llproc.start(root, "run", "capped", "-q")
        if cut:
            llproc.wait_for(lambda r=root: (r / "started").exists(), what="the held action")
            llproc.wait_for(
                lambda r=root: any(
                    e["event"] == "action_start" and e["state"] == "check"
                    for e in llproc.events(r, "capped")
                ),  # fmt: skip
                what="the held action's start in the log",
            )
            if how == "kill -9":
                os.killpg(proc.pid, signal.SIGKILL)
            else:
                assert llproc.ll_loop(root, "stop", "capped").returncode == ExitCode.OK
            proc.wait(timeout=scaled(10))
            resumed = llproc.ll_loop(root, "resume", "capped", "-q")
            code = resumed.returncode
        else:
            code = proc.wait(timeout=scaled(20))
        ends.append((code, _capped_end(root), (root / "ticks").read_text().split()))
    (whole_code, whole, whole_ticks), (code, cut_end, ticks) = ends
    assert whole_code in (ExitCode.MAX_STEPS, ExitCode.MAX_ITERATIONS), whole
    assert (code, cut_end) == (whole_code, whole)
    # The held `check` ran once more (it was cut short): the only extra side effect.
    assert ticks == whole_ticks[:2] + ["check"] + whole_ticks[2:]
