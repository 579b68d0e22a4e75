"""`singleton: true`: one run of the loop at a time, even in two worktrees (which may
otherwise run the same loop side by side). Real git, real bash, real `ll-loop` processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from support.gitrepo import make_repo, run_env
from support.llproc import start, wait_for

from little_loops.fsm.facts.outcomes import ExitCode

WAITER = """\
    name: waiter
    {singleton}
    initial: wait
    states:
      wait:
        action: >-
          echo started >> "{root}/started.txt";
          while [ ! -e "{root}/go" ]; do sleep 0.1; done
        next: done
      done:
        terminal: true
"""


def _project(tmp_path: Path, singleton: str) -> Path:
    root = tmp_path / "project"
    text = textwrap.dedent(WAITER.format(singleton=singleton, root=tmp_path))
    make_repo(root, {".loops/waiter.yaml": text})
    return root


def _two_starts(root: Path, tmp_path: Path) -> tuple[int, str]:
    """Start a worktree run, and once it works a second one; the second's code and stderr."""
    started = tmp_path / "started.txt"
    runs = [start(root, "run", "waiter", "--worktree", "--run-id", "aa01", env=run_env())]
    try:
        wait_for(lambda: started.exists(), timeout=20, what="the first run")
        runs.append(start(root, "run", "waiter", "--worktree", "--run-id", "bb02", env=run_env()))
        wait_for(
            lambda: runs[1].poll() is not None or len(started.read_text().splitlines()) == 2,
            timeout=20,
            what="the second run to end or start",
        )
        (tmp_path / "go").write_text("")
        assert runs[0].wait(timeout=30) == ExitCode.OK
        code = runs[1].wait(timeout=30)
        assert runs[1].stderr is not None
        return code, runs[1].stderr.read()
    finally:
        (tmp_path / "go").write_text("")
        for run in runs:
            if run.poll() is None:
                os.killpg(run.pid, signal.SIGKILL)
                run.wait()


def test_a_singleton_loops_second_run_is_refused_in_one_line(tmp_path: Path) -> None:
    root = _project(tmp_path, "singleton: true")
    code, err = _two_starts(root, tmp_path)
    assert code != ExitCode.OK, err
    (line,) = [x for x in err.splitlines() if x.startswith("ll-loop: error")]
    assert "loop 'waiter' is a singleton and already running as 'waiter@aa01'" in line
    assert (tmp_path / "started.txt").read_text().splitlines() == ["started"]


@pytest.mark.parametrize("singleton", ["", "singleton: false"])
def test_without_singleton_two_worktree_runs_go_side_by_side(
    tmp_path: Path, singleton: str
) -> None:
    root = _project(tmp_path, singleton)
    code, err = _two_starts(root, tmp_path)
    assert code == ExitCode.OK, err
    assert (tmp_path / "started.txt").read_text().splitlines() == ["started", "started"]


def test_a_queued_run_starts_once_the_singletons_holder_is_killed_9(tmp_path: Path) -> None:
    # `--queue` waits for the singleton; a holder killed with SIGKILL (no handler ran, its
    # claim left behind) must not keep it waiting for ever: its claim is found dead.
    root = _project(tmp_path, "singleton: true")
    started = tmp_path / "started.txt"
    runs = [start(root, "run", "waiter", "--worktree", "--run-id", "aa01", env=run_env())]
    try:
        wait_for(lambda: started.exists(), timeout=20, what="the first run")
        runs.append(
            start(root, "run", "waiter", "--worktree", "--run-id", "bb02", "--queue", env=run_env())
        )
        said: list[str] = []
        assert runs[1].stderr is not None
        threading.Thread(target=lambda: said.extend(runs[1].stderr), daemon=True).start()
        wait_for(lambda: any("queued: " in line for line in said), timeout=20, what="the queue")
        assert started.read_text().splitlines() == ["started"]  # it waits
        os.kill(runs[0].pid, signal.SIGKILL)  # the runner only: its action lives on
        runs[0].wait(timeout=30)
        wait_for(
            lambda: len(started.read_text().splitlines()) == 2,
            timeout=30,
            what="the queued run to start its step",
        )
        (tmp_path / "go").write_text("")
        assert runs[1].wait(timeout=30) == ExitCode.OK
    finally:
        (tmp_path / "go").write_text("")
        for run in runs:
            if run.poll() is None:
                os.killpg(run.pid, signal.SIGKILL)
                run.wait()
    status = subprocess.run(
        [str(Path(sys.executable).parent / "ll-loop"), "status", "waiter@aa01"],
        cwd=root, capture_output=True, text=True, env=run_env(),
    )  # fmt: skip
    assert "crashed" in status.stdout + status.stderr  # and resumable, as any crashed run
