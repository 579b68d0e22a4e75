"""`retry:` through the `ll-loop` console script with real bash: attempts, waits, stop, resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from support import llproc
from support.project import LoopProject
from support.slowdown import scaled

from little_loops.fsm.facts.outcomes import ExitCode
from little_loops.fsm.runs.control import GRACE_SECONDS

CONSOLE_SCRIPT = str(Path(sys.executable).parent / "ll-loop")
# Waits may be late by the time a busy machine takes to wake the run up, never early.
TOLERANCE = 0.10


def late(planned: float) -> float:
    """How late a wait of *planned* seconds may end: 10% on an idle machine, more on a busy
    one, but never so late that a wait twice as long (a wrong backoff) would pass."""
    return scaled(planned * TOLERANCE, at_most=planned / 2)


# Fails until the third run of the action (a counter in a file), then succeeds.
FLAKY = """\
    name: flaky
    initial: work
    states:
      work:
        action: 'n=$(cat n 2>/dev/null || echo 0); n=$((n+1)); echo $n > n; [ "$n" -ge 3 ]'
        retry:
          on: [failure]
          max_attempts: {attempts}
          interval: {interval}
          backoff_rate: 2
        on_success: done
        on_failure: failed
      done:
        terminal: true
      failed:
        terminal: true
"""


def start(root: Path, *args: str) -> subprocess.Popen[str]:
    """The console script in the background, in its own session (like a shell job)."""
    return subprocess.Popen(
        [CONSOLE_SCRIPT, *args],
        cwd=root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] == kind]


def ts(event: dict[str, Any]) -> float:
    return datetime.fromisoformat(event["ts"]).timestamp()


def waiting(root: Path, name: str) -> bool:
    path = root / ".loops" / ".running" / f"{name}.events.jsonl"
    return path.exists() and '"event":"retry_wait"' in path.read_text()


def test_a_step_that_fails_twice_then_succeeds(loop_project: LoopProject) -> None:
    loop_project.write("flaky", FLAKY.format(attempts=3, interval=0.5))

    done = llproc.console(loop_project.root, "run", "flaky", "--json")

    assert done.returncode == ExitCode.OK, done.stderr
    outcome = json.loads(done.stdout)
    assert (outcome["terminated_by"], outcome["final_state"]) == ("terminal", "done")
    assert outcome["iterations"] == 1  # attempts are not passes
    events = llproc.events(loop_project.root, "flaky")
    attempts = of(events, "attempt")
    assert [(a["attempt"], a["max_attempts"]) for a in attempts] == [(1, 3), (2, 3), (3, 3)]
    waits = of(events, "retry_wait")
    assert [(w["attempt"], w["seconds"]) for w in waits] == [(2, 0.5), (3, 1.0)]
    # Each wait lasts its schedule: 0.5 s, then 0.5 × 2.
    for wait, attempt, planned in zip(waits, attempts[1:], (0.5, 1.0), strict=True):
        took = ts(attempt) - ts(wait)
        assert planned * (1 - TOLERANCE) <= took <= planned + late(planned), (planned, took)
    waited = outcome["waited_ms"]["retry"]
    assert 1500 * (1 - TOLERANCE) <= waited <= 1500 + 1000 * late(1.5)
    assert [e["verdict"] for e in of(events, "evaluate")] == ["failure", "failure", "success"]
    assert "retrying in 0.5s (attempt 2 of 3)" in done.stderr
    assert "work (attempt 3/3) →" in done.stderr
    history = llproc.console(loop_project.root, "history", "flaky").stdout
    assert " attempt         work attempt 2 of 3\n" in history
    assert " retry_wait      work retrying in 1s (attempt 3 of 3)\n" in history


def test_the_last_attempts_verdict_is_routed_when_attempts_run_out(
    loop_project: LoopProject,
) -> None:
    loop_project.write("flaky", FLAKY.format(attempts=2, interval=0.1))

    done = llproc.console(loop_project.root, "run", "flaky", "--json")

    assert json.loads(done.stdout)["final_state"] == "failed"
    events = llproc.events(loop_project.root, "flaky")
    assert len(of(events, "attempt")) == 2
    (route,) = of(events, "route")
    assert (route["to"], route["verdict"], route["reason"]) == ("failed", "failure", "on_failure")


def test_on_retry_exhausted_and_exit_codes_and_the_loop_default(
    loop_project: LoopProject,
) -> None:
    loop_project.write(
        "codes",
        """\
        name: codes
        initial: work
        retry: {on: [7], max_attempts: 2, interval: 0.1}
        states:
          work:
            action: exit 7
            on_retry_exhausted: gave_up
            on_failure: failed
          gave_up:
            terminal: true
          failed:
            terminal: true
        """,
    )

    done = llproc.console(loop_project.root, "run", "codes", "--json")

    assert json.loads(done.stdout)["final_state"] == "gave_up"
    events = llproc.events(loop_project.root, "codes")
    assert [a["attempt"] for a in of(events, "attempt")] == [1, 2]
    (route,) = of(events, "route")
    assert (route["to"], route["reason"]) == ("gave_up", "on_retry_exhausted")
    plan = llproc.console(loop_project.root, "run", "codes", "--dry-run").stdout
    assert "    retry: on 7; 2 attempts; waits 100ms × 2, jitter none\n" in plan
    assert "retry_exhausted → gave_up" in plan


def test_stop_during_a_wait_ends_the_run_within_a_second(loop_project: LoopProject) -> None:
    loop_project.write("flaky", FLAKY.format(attempts=3, interval=60))
    proc = start(loop_project.root, "run", "flaky")
    try:
        llproc.wait_for(lambda: waiting(loop_project.root, "flaky"), what="the retry wait")
        status = llproc.console(loop_project.root, "status", "flaky")
        assert "waiting:      before attempt 2 of state work (" in status.stdout
        stop = llproc.console(loop_project.root, "stop", "flaky")
        code = proc.wait(timeout=scaled(5))
        assert llproc.stop_seconds(stop) < scaled(1.0, at_most=GRACE_SECONDS)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert code == ExitCode.STOPPED
    assert llproc.state(loop_project.root, "flaky")["status"] == "stopped"


def test_kill_9_during_a_wait_then_resume_keeps_the_attempt_count(
    loop_project: LoopProject,
) -> None:
    # The wait lasts long enough (longer on a slower machine) to be killed in.
    loop_project.write("flaky", FLAKY.format(attempts=3, interval=round(scaled(1), 2)))
    proc = start(loop_project.root, "run", "flaky")
    llproc.wait_for(lambda: waiting(loop_project.root, "flaky"), what="the retry wait")
    os.killpg(proc.pid, signal.SIGKILL)
    assert proc.wait(timeout=scaled(5)) == -signal.SIGKILL
    (wait,) = of(llproc.events(loop_project.root, "flaky"), "retry_wait")

    done = llproc.console(loop_project.root, "resume", "flaky", "--json")

    assert done.returncode == ExitCode.OK, done.stderr
    events = llproc.events(loop_project.root, "flaky")
    attempts = of(events, "attempt")
    assert [a["attempt"] for a in attempts] == [1, 2, 3]
    # The resumed run finished the same wait: attempt 2 began when it was due, not at once.
    due = datetime.fromisoformat(wait["until"]).timestamp()
    assert ts(attempts[1]) >= due - 0.05
    assert (loop_project.root / "n").read_text().strip() == "3"  # three runs in all


def test_a_wait_never_runs_past_the_loops_timeout(loop_project: LoopProject) -> None:
    loop_project.write(
        "flaky",
        FLAKY.format(attempts=3, interval=30).replace(
            "initial: work", "initial: work\n    timeout: 1"
        ),
    )
    asked = time.monotonic()

    done = llproc.console(loop_project.root, "run", "flaky", "--json")

    assert done.returncode == ExitCode.TIMEOUT
    assert time.monotonic() - asked < scaled(10, at_most=25)  # not the 30 s the retry asked for
    outcome = json.loads(done.stdout)
    assert outcome["terminated_by"] == "timeout"
    assert outcome["error"] == "loop timeout reached during a wait"
    assert outcome["duration_ms"] >= 1000


def test_the_loops_retry_leaves_decision_states_alone(loop_project: LoopProject) -> None:
    loop_project.write(
        "decide",
        """\
        name: decide
        initial: measure
        retry: {on: [failure], interval: 5}
        states:
          measure:
            action: echo 3
            capture: n
            next: check
          check:
            evaluate:
              type: output_numeric
              source: "${captured.n.output}"
              operator: eq
              target: 0
            on_success: done
            on_failure: failed
          done:
            terminal: true
          failed:
            terminal: true
        """,
    )

    done = llproc.console(loop_project.root, "run", "decide", "--json")

    assert json.loads(done.stdout)["final_state"] == "failed"
    events = llproc.events(loop_project.root, "decide")
    assert of(events, "retry_wait") == []  # judging the same capture again changes nothing
