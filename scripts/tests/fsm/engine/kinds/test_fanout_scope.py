"""A fan-out outside git, through real `ll-loop` processes: its branches run under the
parent's scope lock; any other run of an overlapping scope is still refused."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

from support import fanout
from support.llproc import events, finish, ll_loop, start, state, wait_for
from support.slowdown import scaled

from little_loops.fsm.fanout.children import PARENT_ENV
from little_loops.fsm.processes.pids import pid_alive

OTHER = """\
name: other
initial: go
states:
  go:
    action: touch other.txt
    next: done
  done:
    terminal: true
"""

PARALLEL = """\
name: both
initial: fan
states:
  fan:
    parallel:
      branches:
        - loop: fix
          with: {item: a}
        - loop: fix2
          with: {item: b}
    on_success: done
    on_failure: done
  done:
    terminal: true
"""


def _gated(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """The gate file each branch waits for, the file of the items started, and their env."""
    gate, runs = tmp_path / "gate", tmp_path / "runs"
    wait = f'while [ ! -e "{gate}" ]; do sleep 0.05; done'
    return gate, runs, {"LL_TEST_WAIT": wait, "LL_TEST_RUNS": str(runs)}


def _started(runs: Path) -> list[str]:
    return runs.read_text().split() if runs.exists() else []


def _verdicts(root: Path, name: str) -> dict[str, str]:
    branches = state(root, name)["captured"]["fan"]["branches"]
    return {b["item"]: b["verdict"] for b in branches}


def test_every_branch_of_a_map_outside_git_runs_under_the_parents_scope(tmp_path: Path) -> None:
    root = fanout.project(tmp_path, git=False, fan=fanout.map_loop(["a", "b"]))
    done = ll_loop(root, "run", "fan", timeout=120)
    assert done.returncode == 0, done.stderr
    assert "overlaps" not in (root / ".loops" / ".running" / "fix.log").read_text()
    assert _verdicts(root, "fan") == {"a": "success", "b": "success"}
    assert (root / "item-a.txt").read_text() == "a\n"
    assert (root / "item-b.txt").read_text() == "b\n"
    assert state(root, "fan")["captured"]["fan"]["verdict"] == "success"
    claims = [p.name for p in (root / ".loops" / ".running").glob("*.lock")]
    assert claims == [".scopes.lock"]  # every claim given back (the mutex file stays)


def test_branches_of_two_loops_run_at_once_in_the_same_folder(tmp_path: Path) -> None:
    fix2 = fanout.CHILD.replace("name: fix\n", "name: fix2\n")
    root = fanout.project(tmp_path, git=False, both=PARALLEL, fix2=fix2)
    gate, runs, env = _gated(tmp_path)
    proc = start(root, "run", "both", env=env)
    try:
        # Both wait for the gate: both started, side by side, each under the parent's claim.
        wait_for(lambda: sorted(_started(runs)) == ["a", "b"], scaled(60), "both branches")
        gate.touch()
        finish(proc, timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0
    assert _verdicts(root, "both") == {"fix": "success", "fix2": "success"}
    assert (root / "item-a.txt").exists()
    assert (root / "item-b.txt").exists()


def test_an_unrelated_run_during_the_fan_out_is_refused_even_with_the_variable_copied(
    tmp_path: Path,
) -> None:
    root = fanout.project(tmp_path, git=False, fan=fanout.map_loop(["a"]), other=OTHER)
    gate, runs, env = _gated(tmp_path)
    proc = start(root, "run", "fan", env=env)
    try:
        wait_for(lambda: _started(runs) == ["a"], scaled(60), "the branch")
        by_hand = ll_loop(root, "run", "other", timeout=60)
        forged = ll_loop(
            root, "run", "other", timeout=60, env={**os.environ, PARENT_ENV: str(proc.pid)}
        )
        gate.touch()
        finish(proc, timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    for refused in (by_hand, forged):
        assert refused.returncode == 1, refused.stderr
        assert "scope '.' of loop 'other' overlaps '.' held by loop" in refused.stderr
        assert "Traceback" not in refused.stderr
    assert not (root / "other.txt").exists()
    assert proc.returncode == 0
    assert _verdicts(root, "fan") == {"a": "success"}


def test_kill_9_of_the_parent_mid_fan_out_outside_git_then_resume(tmp_path: Path) -> None:
    root = fanout.project(
        tmp_path, git=False, fan=fanout.map_loop(["a", "b"], max_concurrency=1), other=OTHER
    )
    gate, runs, env = _gated(tmp_path)
    proc = start(root, "run", "fan", env=env)
    try:
        wait_for(lambda: _started(runs) == ["a"], scaled(60), "the first branch")
        os.killpg(proc.pid, signal.SIGKILL)  # the parent only: its branch has its own session
        proc.wait()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    lock = json.loads((root / ".loops" / ".running" / "fix.lock").read_text())
    assert pid_alive(lock["pid"])
    assert lock["parent"] == "fan"
    # The orphaned branch still edits the folder: an unrelated run is still refused ...
    refused = ll_loop(root, "run", "other", timeout=60)
    assert refused.returncode == 1
    assert "overlaps '.' held by loop 'fix'" in refused.stderr
    # ... and so is a fresh run of the fan-out (it would start that branch again beside it).
    fresh = ll_loop(root, "run", "fan", timeout=60)
    assert fresh.returncode == 1
    assert "scope '.' of loop 'fan' overlaps '.' held by loop 'fix'" in fresh.stderr
    # A resume takes over the dead parent's stale claim beside its branch still running (its
    # own), waits for that branch (not ended: its step is not repeated), then runs the other.
    resumed_proc = start(root, "resume", "fan", env=env)
    try:
        wait_for(
            lambda: _holder(root, "fan") == resumed_proc.pid or resumed_proc.poll() is not None,
            scaled(60),
            "its claim",
        )
        assert resumed_proc.poll() is None, finish(resumed_proc)[1]  # not refused
        assert pid_alive(lock["pid"])  # the gate shut: the branch still runs, waited for
        gate.touch()
        out, err = finish(resumed_proc, timeout=120)
    finally:
        if resumed_proc.poll() is None:
            os.killpg(resumed_proc.pid, signal.SIGKILL)
    assert resumed_proc.returncode == 0, err
    assert "overlaps" not in err
    assert "crashed run's action left running" not in err  # the branch is no leftover
    assert _started(runs) == ["a", "b"]  # `a`'s action ran once: the branch went on
    assert _verdicts(root, "fan") == {"a": "success", "b": "success"}
    assert state(root, "fan")["status"] == "completed"
    finishes = [e for e in events(root, "fan") if e["event"] == "branch_finish"]
    assert [e["item"] for e in finishes] == ["a", "b"]
    assert not pid_alive(lock["pid"])


def _holder(root: Path, key: str) -> int | None:
    """The pid in run *key*'s scope lock (None: no lock, or one being written)."""
    try:
        return int(json.loads((root / ".loops" / ".running" / f"{key}.lock").read_text())["pid"])
    except (OSError, ValueError, KeyError):
        return None


def test_a_fan_out_inside_a_branch_runs_under_the_first_runs_scope(tmp_path: Path) -> None:
    inner = fanout.map_loop(["a", "b"], name="mid").replace(
        "initial: fan\n", 'context:\n  item: ""\ninitial: fan\n'
    )
    outer = fanout.map_loop(["x"]).replace("loop: fix", "loop: mid")
    root = fanout.project(tmp_path, git=False, fan=outer, mid=inner)
    done = ll_loop(root, "run", "fan", timeout=180)
    assert done.returncode == 0, done.stderr
    assert _verdicts(root, "fan") == {"x": "success"}
    assert _verdicts(root, "mid") == {"a": "success", "b": "success"}
    assert (root / "item-a.txt").read_text() == "a\n"
    assert (root / "item-b.txt").read_text() == "b\n"
