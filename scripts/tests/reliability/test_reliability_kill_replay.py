"""kill -9 at any moment, then `ll-loop resume`: the run goes on from its event log as if
never interrupted (same side effects, same final record), and no recorded action runs again."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from support import forkserver, llproc
from support.slowdown import scaled

from little_loops.fsm.facts.outcomes import ExitCode
from little_loops.fsm.runs.store import StatePersistence

pytestmark = pytest.mark.reliability

# Every step leaves a line in side.log naming the state and the pass; `capture`, `prev`, a
# `next:` state and a terminal action are all on the way, so all of them must survive.
LOOP = """\
name: tally
initial: count
max_iterations: 12
context:
  limit: 9
states:
  count:
    action: 'echo "count ${state.iteration}" >> side.log; echo ${state.iteration}'
    capture: n
    evaluate:
      type: output_numeric
      operator: lt
      target: 9
    on_success: note
    on_failure: report
  note:
    action: 'echo "note ${captured.n.output} after ${prev.verdict}" >> side.log'
    next: count
  report:
    action: 'echo "report ${captured.n.output}" >> side.log'
    terminal: true
"""

# The loop, run by the executor `ll-loop run` uses, dies (os._exit, as SIGKILL would: no
# cleanup, no flush) right after its K-th event is in the log. One process imports the
# executor once and forks a fresh child per K (each in its own project, argv: K DIR ...):
# every death is still a real process of its own; the parent prints each child's exit code.
DIE_AT_EVENT = """\
import json, os, sys, traceback
from little_loops.fsm.actions.runners import DefaultActionRunner
from little_loops.fsm.validate.loopfile import load_and_validate
from little_loops.fsm.runs.persistent import PersistentExecutor

def die_at(k):
    seen = []
    def die(event):
        seen.append(event)
        if len(seen) == k:
            os._exit(137)
    fsm = load_and_validate(".loops/tally.yaml")
    PersistentExecutor(fsm, loops_dir=".loops", action_runner=DefaultActionRunner(),
                       loop_path=".loops/tally.yaml", event_callback=die).run()

codes = {}
for k, root in zip(sys.argv[1::2], sys.argv[2::2]):
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        try:
            os.chdir(root)
            die_at(int(k))
        except BaseException:
            traceback.print_exc()
            sys.stderr.flush()
            os._exit(1)
        os._exit(0)
    codes[k] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
print(json.dumps(codes))
"""


def project(root: Path) -> Path:
    (root / ".loops").mkdir(parents=True)
    (root / ".loops" / "tally.yaml").write_text(LOOP)
    return root


def store(root: Path) -> StatePersistence:
    return StatePersistence("tally", root / ".loops")


def final_record(root: Path) -> dict[str, Any]:
    """What must not depend on interruptions: where and how the run ended, and its data."""
    state = store(root).load_state()
    assert state is not None
    return {
        "status": state.status,
        "terminated_by": state.terminated_by,
        "current_state": state.current_state,
        "iteration": state.iteration,
        "captured": {k: v["output"] for k, v in state.captured.items()},
        "prev": (state.prev_result or {}).get("output"),
        "verdict": (state.last_result or {}).get("verdict"),
    }


def ended(root: Path) -> bool:
    events = store(root).tail_events(1)
    return bool(events) and events[0]["event"] == "loop_complete"


def resume_to_the_end(root: Path) -> None:
    """`ll-loop resume tally` until the run has ended (`run` if it died before it began),
    forked from a process that imported ll-loop once (support/forkserver.py): what is tested
    is what the resume does with the log a death left, not its start-up."""
    for _ in range(3):
        if ended(root):
            return
        command = "run" if store(root).load_state() is None else "resume"
        resumed = forkserver.ll_loop(root, command, "tally", timeout=60)
        assert "Traceback" not in resumed.stderr, resumed.stderr
    assert ended(root), resumed.stderr


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], dict[str, Any], int]:
    """Side effects, final record and event count of an uninterrupted run."""
    root = project(tmp_path_factory.mktemp("whole"))
    assert llproc.ll_loop(root, "run", "tally").returncode == ExitCode.OK
    side = (root / "side.log").read_text().splitlines()
    assert side[-1] == "report 9"
    assert len(side) == 18
    return side, final_record(root), len(store(root).read_events())


def test_death_right_after_each_event_resumes_exactly(
    tmp_path: Path, reference: tuple[list[str], dict[str, Any], int]
) -> None:
    side, record, count = reference
    roots = {k: project(tmp_path / f"k{k}") for k in range(1, count)}
    argv = [str(part) for k, root in roots.items() for part in (k, root)]
    died = subprocess.run(
        [sys.executable, "-c", DIE_AT_EVENT, *argv],
        capture_output=True,
        text=True,
        timeout=scaled(120),
    )
    assert died.returncode == 0, died.stderr
    codes = json.loads(died.stdout.splitlines()[-1])
    for k, root in roots.items():
        assert codes[str(k)] == 137, (k, died.stderr)
        resume_to_the_end(root)
        assert (root / "side.log").read_text().splitlines() == side, f"died at event {k}"
        assert final_record(root) == record, f"died at event {k}"


def test_kill_9_at_random_moments_then_resume(
    tmp_path: Path, reference: tuple[list[str], dict[str, Any], int]
) -> None:
    """200 SIGKILLs of `ll-loop run`/`resume` at random moments, up to six per run.

    An action killed while it ran (its start recorded, its end not) may have left its line
    and runs again: one extra copy of that line is allowed. Nothing else may differ."""
    side, record, _ = reference
    rng = random.Random(int(os.environ.get("LL_KILL_SEED", "2026")))
    kills = runs = 0
    while kills < 200:
        runs += 1
        root = project(tmp_path / f"r{runs}")
        allowed: list[str] = []
        command = "run"
        for _ in range(rng.randint(1, 6)):
            proc = llproc.start(root, command, "tally")
            time.sleep(rng.uniform(0.0, 0.3))
            if proc.poll() is not None:
                break
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=scaled(10))
            kills += 1
            last = store(root).tail_events(1)
            if last and last[0]["event"] == "action_start":
                allowed.append(last[0]["state"])
            command = "resume"
        resume_to_the_end(root)
        lines = (root / "side.log").read_text().splitlines()
        extra = list(lines)
        for line in side:
            assert line in extra, f"run {runs}: {line!r} missing: {lines}"
            extra.remove(line)
        for line in extra:
            assert line.split()[0] in allowed, f"run {runs}: {line!r} ran again: {lines}"
            allowed.remove(line.split()[0])
        assert final_record(root) == record, f"run {runs}"
    print(f"kill -9: {kills} kills in {runs} runs, every run resumed to the same end")
