"""`ll-loop stop` while `ll-loop run` is still starting: the stop is honoured, never lost.

Each window is held open by what a user can do already, not by a hook of ll-loop's: a
`--context-file` pipe nobody has written yet (before the run has written anything), a git
`post-checkout` hook (a `--worktree` run, its marker written, its worktree being made), a
scope another run holds (`--queue`).
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import llproc
from support.gitrepo import loops_project
from support.slowdown import scaled

from little_loops.fsm.facts.outcomes import ExitCode

SLOW = """\
name: slow
initial: work
states:
  work:
    action: touch began; sleep {marker}
    next: done
  done:
    terminal: true
"""
HOLDER = """\
name: holder
initial: hold
scope: ["."]
states:
  hold:
    action: sleep {marker}
    next: done
  done:
    terminal: true
"""
NO_RUN = "ll-loop: loop 'slow' is not running (it has no saved run)\n"


def _running(root: Path) -> Path:
    return root / ".loops" / ".running"


@contextlib.contextmanager
def _held_pipe(path: Path) -> Iterator[threading.Event]:
    """A FIFO at *path*, written (`{}`) once the event is set: a run reading it as its
    context file waits until then. Written at the end in any case, so no run hangs."""
    os.mkfifo(path)
    release = threading.Event()

    def feed() -> None:
        release.wait()
        with open(path, "w") as pipe:  # blocks until the run opens it
            pipe.write("{}\n")

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    try:
        yield release
    finally:
        release.set()
        feeder.join(scaled(20))


def test_a_stop_before_the_run_wrote_anything_is_honoured_when_it_starts(
    tmp_path: Path, marker: str
) -> None:
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "slow.yaml").write_text(SLOW.format(marker=marker))
    fifo = tmp_path / "context.fifo"
    with _held_pipe(fifo) as release:
        run = llproc.start(tmp_path, "run", "slow", "--context-file", str(fifo))
        # It reads its arguments before anything else: here it has written nothing yet.
        llproc.wait_for(lambda: _reads(run.pid, fifo), 20, "the run to open the pipe")
        stop = llproc.ll_loop(tmp_path, "stop", "slow")
        assert (stop.returncode, stop.stderr) == (ExitCode.FAILED, NO_RUN)
        assert (_running(tmp_path) / "slow.stop.json").is_file()  # left for the run
        release.set()
        _, err = llproc.finish(run, 30)
    assert run.returncode == ExitCode.STOPPED, err
    state = llproc.state(tmp_path, "slow")
    assert (state["status"], state["terminated_by"]) == ("stopped", "stopped")
    assert state["current_state"] == "work"
    assert not (tmp_path / "began").exists()  # stopped before its first step
    assert not (_running(tmp_path) / "slow.stop.json").exists()
    assert not (_running(tmp_path) / "slow.starting.json").exists()


def _reads(pid: int, path: Path) -> bool:
    """Whether process *pid* has *path* open."""
    with contextlib.suppress(OSError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/{pid}/fd/{fd}") == str(path):
                    return True
    return False


def test_a_stop_finding_nothing_leaves_nothing_that_stops_a_later_run(
    tmp_path: Path, marker: str
) -> None:
    (tmp_path / ".loops").mkdir()
    quick = "name: slow\ninitial: done\nscope: [apart]\nstates:\n  done:\n    terminal: true\n"
    (tmp_path / ".loops" / "slow.yaml").write_text(quick)
    stop = llproc.ll_loop(tmp_path, "stop", "slow")
    assert (stop.returncode, stop.stderr) == (ExitCode.FAILED, NO_RUN)
    assert not (_running(tmp_path) / "slow.stop.json").exists()
    # With another run going (an `ll-loop run` the request must name: it may be this one's
    # start), the request it leaves names that process only: a run started later is not it.
    holding = HOLDER.format(marker=marker).replace('scope: ["."]', "scope: [held]")
    (tmp_path / ".loops" / "holder.yaml").write_text(holding)
    other = llproc.start(tmp_path, "run", "holder")
    try:
        llproc.wait_for(lambda: llproc.state(tmp_path, "holder").get("pid") == other.pid, 20)
        stop = llproc.ll_loop(tmp_path, "stop", "slow")
        assert (stop.returncode, stop.stderr) == (ExitCode.FAILED, NO_RUN)
        assert (_running(tmp_path) / "slow.stop.json").is_file()  # naming `run holder`
        later = llproc.ll_loop(tmp_path, "run", "slow", timeout=30)
        assert later.returncode == ExitCode.OK, later.stderr
        assert llproc.state(tmp_path, "slow")["status"] == "completed"
        assert not (_running(tmp_path) / "slow.stop.json").exists()  # taken by that start
    finally:
        llproc.ll_loop(tmp_path, "stop", "holder")
        llproc.finish(other, 20)


@contextlib.contextmanager
def _held_checkout(root: Path) -> Iterator[Path]:
    """A `post-checkout` hook that waits for `hook-go`: a `--worktree` run making its
    worktree waits in it (its marker written, no state yet). Yields the file the hook
    touches when it begins; `hook-go` is made at the end in any case."""
    began, go = root / "hook-began", root / "hook-go"
    hook = root / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\ntouch '{began}'\nwhile [ ! -e '{go}' ]; do sleep 0.02; done\n")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    try:
        yield began
    finally:
        go.touch()


@pytest.mark.parametrize("by_key", [False, True], ids=["bare-name", "name-at-id"])
def test_a_worktree_run_making_its_worktree_is_stopped_by_name_or_by_name_at_id(
    tmp_path: Path, marker: str, by_key: bool
) -> None:
    root = loops_project(tmp_path, {".loops/slow.yaml": SLOW.format(marker=marker)})
    with _held_checkout(root) as began:
        run = llproc.start(root, "run", "slow", "--worktree")
        llproc.wait_for(began.exists, 30, "the run to make its worktree")
        [key] = [p.name.split(".")[0] for p in _running(root).glob("slow@*.starting.json")]
        assert not list(_running(root).glob("*.state.json"))
        stop = llproc.start(root, "stop", key if by_key else "slow")
        llproc.read_stderr_until(stop, f"stopping loop '{key}' (pid {run.pid})...", 20)
        (root / "hook-go").touch()  # the run goes on: it keeps the SIGTERM for its run
        _, stop_err = llproc.finish(stop, 30)
        _, err = llproc.finish(run, 30)
    assert stop.returncode == ExitCode.OK, stop_err
    assert f"continue with: ll-loop resume {key}" in stop_err
    assert run.returncode == ExitCode.STOPPED, err
    state = llproc.state(root, key)
    assert (state["status"], state["terminated_by"]) == ("stopped", "stopped")
    assert not list(root.rglob("began"))  # its first step never ran


def test_two_runs_starting_are_named_not_guessed(tmp_path: Path, marker: str) -> None:
    root = loops_project(tmp_path, {".loops/slow.yaml": SLOW.format(marker=marker)})
    with _held_checkout(root):
        runs = [llproc.start(root, "run", "slow", "--worktree") for _ in range(2)]
        starting = _running(root)
        llproc.wait_for(lambda: len(list(starting.glob("slow@*.starting.json"))) == 2, 30)
        keys = sorted(p.name.split(".")[0] for p in starting.glob("slow@*.starting.json"))
        stop = llproc.ll_loop(root, "stop", "slow")
        assert stop.returncode == ExitCode.FAILED
        assert stop.stderr == (
            f"ll-loop: error: loop 'slow' has 2 runs going ({', '.join(keys)}); name one,"
            f" e.g. 'll-loop stop {keys[-1]}' (or --all)\n"
        )
        stop = llproc.start(root, "stop", "slow", "--all")
        llproc.read_stderr_until(stop, f"stopping loop '{keys[0]}' (pid ", 20)
        (root / "hook-go").touch()  # one after the other: each keeps its SIGTERM till then
        _, stop_err = llproc.finish(stop, 60)
        for run in runs:
            llproc.finish(run, 30)
    assert stop.returncode == ExitCode.OK, stop_err
    assert [run.returncode for run in runs] == [ExitCode.STOPPED] * 2
    assert [llproc.state(root, key)["status"] for key in keys] == ["stopped"] * 2


def test_a_queued_run_is_stopped_while_it_waits(tmp_path: Path, marker: str) -> None:
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "slow.yaml").write_text(SLOW.format(marker=marker))
    (tmp_path / ".loops" / "holder.yaml").write_text(HOLDER.format(marker=marker))
    holder = llproc.start(tmp_path, "run", "holder")
    try:
        llproc.wait_for(lambda: llproc.state(tmp_path, "holder").get("pid") == holder.pid, 20)
        queued = llproc.start(tmp_path, "run", "slow", "--queue")
        llproc.read_stderr_until(queued, "queued:", 20)
        # It keeps the SIGTERM for its run, which has not begun, and ends its wait at it.
        stop = llproc.ll_loop(tmp_path, "stop", "slow", timeout=30)
        llproc.finish(queued, 20)
        # So does a SIGTERM of anyone's (`timeout`, a CI cancel): it did wait on, ignoring it.
        again = llproc.start(tmp_path, "run", "slow", "--queue")
        llproc.read_stderr_until(again, "queued:", 20)
        again.terminate()
        _, said = llproc.finish(again, 3)
        assert said.endswith(f"held by loop 'holder' (pid {holder.pid}); stopped while queued\n"), (
            said
        )
    finally:
        llproc.ll_loop(tmp_path, "stop", "holder")
        llproc.finish(holder, 20)
    assert stop.returncode == ExitCode.OK, stop.stderr
    assert stop.stderr.startswith(
        f"stopping loop 'slow' (pid {queued.pid})...\nloop 'slow' stopped in "
    )
    assert stop.stderr.endswith(
        "s while starting, before its first step (nothing to resume; start it again with"
        " 'll-loop run slow')\n"
    )
    assert not (tmp_path / "began").exists()
    assert not list(_running(tmp_path).glob("slow.*.json"))


def test_a_background_run_making_its_worktree_is_stopped(tmp_path: Path, marker: str) -> None:
    root = loops_project(tmp_path, {".loops/slow.yaml": SLOW.format(marker=marker)})
    with _held_checkout(root) as began:
        started = llproc.ll_loop(root, "run", "slow", "--worktree", "--background", timeout=30)
        assert started.returncode == ExitCode.OK, started.stderr
        child = int(started.stdout)
        llproc.wait_for(began.exists, 30, "the run to make its worktree")
        [key] = [p.name.split(".")[0] for p in _running(root).glob("slow@*.starting.json")]
        stop = llproc.start(root, "stop", "slow")
        llproc.read_stderr_until(stop, f"stopping loop '{key}' (pid {child})...", 20)
        (root / "hook-go").touch()
        _, stop_err = llproc.finish(stop, 30)
    assert stop.returncode == ExitCode.OK, stop_err
    assert f"loop '{key}' stopped in " in stop_err
    state = llproc.state(root, key)
    assert (state["status"], state["terminated_by"], state["pid"]) == ("stopped", "stopped", child)
    assert not list(root.rglob("began"))
