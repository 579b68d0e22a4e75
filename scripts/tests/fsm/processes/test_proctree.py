"""proctree: what /proc says about live processes, and finding a tree below a process."""

from __future__ import annotations

import os
import signal
import subprocess

from support.slowdown import scaled

from little_loops.fsm.processes.proctree import (
    child_pids,
    live_processes,
    signal_children,
    tree_of,
)


def test_this_process_is_listed_with_its_parent_and_group() -> None:
    table = live_processes()
    assert table[os.getpid()] == (os.getppid(), os.getpgid(0))


def test_the_tree_below_a_process_and_a_group() -> None:
    with subprocess.Popen(
        ["bash", "-c", "sleep 300 & echo $!; wait"],
        stdout=subprocess.PIPE,
        start_new_session=True,
    ) as proc:
        assert proc.stdout is not None
        grandchild = int(proc.stdout.readline())
        table = live_processes()
        assert tree_of({proc.pid}, table) == sorted([proc.pid, grandchild])
        assert tree_of(set(), table, group=proc.pid) == sorted([proc.pid, grandchild])
        assert tree_of({grandchild}, table) == [grandchild]
        assert child_pids(proc.pid) == [grandchild]
        assert signal_children(proc.pid, signal.SIGKILL) == [grandchild]
        assert proc.wait(timeout=scaled(5.0)) == 0  # its `wait` ended with the sleep
        proc.stdout.close()
