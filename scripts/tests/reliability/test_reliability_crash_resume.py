"""SIGKILL of a whole `ll-loop run` process group at random moments, then `ll-loop resume`.

The loop counts to N through four states with captures; every action sleeps a random
0-50 ms and is idempotent (it derives what it writes from captures, not from what an
interrupted run may already have written), so the final captures are known exactly. Each
repetition kills the run (and maybe the resumes) at a random moment and resumes until the
loop ends; afterwards the state file and every line of the event log must parse, the run
must be `completed`, and the captures must hold the final values.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from support.slowdown import scaled

from little_loops.fsm.facts.layout import leftover_temp_files, temp_file
from little_loops.fsm.processes.pids import pid_alive
from little_loops.fsm.runs.store import StatePersistence

pytestmark = pytest.mark.reliability

REPETITIONS = 20
N = 6  # passes: 4 actions each, 24 actions in all
SLEEP = "sleep 0.0$((RANDOM % 6))"  # 0-50 ms

LOOP = textwrap.dedent(
    f"""\
    name: crashy
    initial: read
    max_iterations: 50
    context:
      n: {N}
    states:
      read:
        action: '{SLEEP}; cat count 2>/dev/null || echo 0'
        capture: seen
        next: bump
      bump:
        action: >-
          {SLEEP}; echo $(( ${{captured.seen}} + 1 )) > count.tmp
          && mv count.tmp count && cat count
        capture: bumped
        next: square
      square:
        action: '{SLEEP}; echo $(( ${{captured.bumped}} * ${{captured.bumped}} ))'
        capture: squared
        next: check
      check:
        action: >-
          {SLEEP}; echo "${{captured.bumped}}/${{context.n}}";
          test ${{captured.bumped}} -ge ${{context.n}}
        capture: checked
        on_success: done
        on_failure: read
      done:
        terminal: true
    """
)


def start(root: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "little_loops.cli", *args],
        cwd=root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def record(root: Path) -> dict[str, Any] | None:
    """The run as its event log records it (the state file is a snapshot that may lag)."""
    with StatePersistence("crashy", root / ".loops") as store:
        state = store.load_state()
    return None if state is None else dict(state.to_dict())


def logged(root: Path) -> int:
    """How many events the log holds (lines ended so far)."""
    try:
        return (root / ".loops/.running/crashy.events.jsonl").read_bytes().count(b"\n")
    except OSError:
        return 0


def run_and_maybe_kill(
    root: Path, args: list[str], kill: tuple[int, float] | None
) -> tuple[int | None, str]:
    """Run ll-loop; with `kill` (events, seconds), SIGKILL its whole group that many seconds
    after it has logged that many more events. (exit code or None, stderr)

    Counted in events, not seconds from the start, the kills fall all over a run however
    slowly a busy machine runs it; the seconds (tens of milliseconds) land them between
    events, in an action or a save."""
    before = logged(root)
    proc = start(root, *args)
    try:
        if kill is not None:
            events, seconds = kill
            while logged(root) < before + events and proc.poll() is None:
                time.sleep(0.002)
            time.sleep(seconds)
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                return None, ""
        _, err = proc.communicate(timeout=scaled(30))
        return proc.returncode, err.decode()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_sigkill_at_random_moments_then_resume(tmp_path: Path) -> None:
    rng = random.Random(20260115)
    whole = tmp_path / "whole"
    (whole / ".loops").mkdir(parents=True)
    (whole / ".loops" / "crashy.yaml").write_text(LOOP)
    assert run_and_maybe_kill(whole, ["run", "crashy", "--quiet"], None)[0] == 0
    total = logged(whole)  # the events of a whole run

    def moment(most: int) -> tuple[int, float]:
        """A kill after up to *most* events; one in five while the process starts."""
        events = rng.randint(-most // 4, most)
        return (0, rng.uniform(0, 0.3)) if events < 0 else (events, rng.uniform(0, 0.03))

    kills = resumes = 0
    for repetition in range(REPETITIONS):
        root = tmp_path / f"r{repetition}"
        (root / ".loops").mkdir(parents=True)
        (root / ".loops" / "crashy.yaml").write_text(LOOP)
        started = time.monotonic()
        code, err = run_and_maybe_kill(root, ["run", "crashy", "--quiet"], moment(total - 1))
        attempts = 0
        while code != 0:
            assert code is None, f"repetition {repetition}: exit {code}: {err}"
            kills += 1
            attempts += 1
            assert attempts < 20, f"repetition {repetition} did not finish"
            recorded = record(root)
            if recorded is not None and recorded["status"] == "completed":
                break  # killed on its way out: the run had finished and logged that it had
            # Killed before the first save: nothing ran yet, so start it again.
            args = ["resume", "crashy"] if recorded is not None else ["run", "crashy"]
            resumes += args[0] == "resume"
            again = moment(total // 2) if rng.random() < 0.4 else None
            code, err = run_and_maybe_kill(root, [*args, "--quiet"], again)
        running = root / ".loops/.running"
        json.loads((running / "crashy.state.json").read_text())  # the snapshot parses
        state = record(root)
        assert state is not None
        assert state["status"] == "completed", state
        assert state["current_state"] == "done"
        outputs = {name: value["output"] for name, value in state["captured"].items()}
        assert outputs == {
            "seen": str(N - 1),
            "bumped": str(N),
            "squared": str(N * N),
            "checked": f"{N}/{N}",
        }, f"repetition {repetition}"
        assert (root / "count").read_text() == f"{N}\n"
        events = [
            json.loads(line) for line in (running / "crashy.events.jsonl").read_bytes().splitlines()
        ]
        assert events[-1]["event"] == "loop_complete"
        assert events[-1]["terminated_by"] == "terminal"
        left = sorted(running.glob(".*.tmp"))
        if code == 0:
            assert not left, (
                f"repetition {repetition}: temp files of killed saves were left: {left}"
            )
        for temp in left:  # killed on its way out, in its last snapshot: its temp file only
            target = running / temp.name[1:].rsplit(".", 2)[0]
            writer = int(temp.name.rsplit(".", 2)[1], 16)
            assert temp in leftover_temp_files(target)  # what the next writer removes
            assert temp == temp_file(target, writer)
            assert not pid_alive(writer)
        lock = running / "crashy.lock"
        if lock.exists():  # only a run killed after it finished may leave it, and it is stale
            assert not pid_alive(json.loads(lock.read_text())["pid"])
        assert time.monotonic() - started < scaled(15)
    print(f"kill -9: {kills} kills and {resumes} resumes in {REPETITIONS} runs")
    assert kills >= REPETITIONS // 2, "too few runs were actually killed to prove anything"
    assert resumes >= REPETITIONS // 2
