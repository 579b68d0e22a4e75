"""Orphaned actions of a crashed run: found by their LL_LOOP_RUN marker, and ended."""

from __future__ import annotations

import os
import subprocess

from support.llproc import wait_for
from support.slowdown import scaled

from little_loops.fsm.runs.orphans import (
    RUN_MARKER_ENV,
    kill_orphaned_actions,
    marked_processes,
    run_marker,
)


def _start(marker: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, RUN_MARKER_ENV: marker}
    return subprocess.Popen(["sleep", "1000"], env=env, start_new_session=True)


def test_the_marker_names_the_loop_and_the_pid() -> None:
    assert run_marker("fix-types", 4242) == "fix-types:4242"


def test_marked_processes_finds_exactly_the_processes_of_that_run() -> None:
    mine = _start(run_marker("loop", 999001))
    other = _start(run_marker("loop", 999002))
    try:
        wait_for(lambda: mine.pid in marked_processes("loop:999001"), 5, "the marked process")
        found = marked_processes("loop:999001")
        assert mine.pid in found
        assert other.pid not in found
        assert marked_processes("loop:99900") == []  # a prefix is not the marker
    finally:
        for proc in (mine, other):
            proc.kill()
            proc.wait()


def test_kill_orphaned_actions_ends_them_and_says_which() -> None:
    orphan = _start(run_marker("crashed", 999003))
    wait_for(lambda: orphan.pid in marked_processes("crashed:999003"), 5, "the marked process")
    assert kill_orphaned_actions("crashed", 999003, grace=0.5) == [orphan.pid]
    assert orphan.wait(timeout=scaled(5)) is not None
    assert kill_orphaned_actions("crashed", 999003) == []
