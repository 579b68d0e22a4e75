"""The process tree from Linux /proc: a process's children, all below it or in its group."""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

from little_loops.fsm.processes.pids import stat_fields


def child_pids(pid: int) -> list[int]:
    """The pids whose parent is `pid` (empty where /proc is not available)."""
    children = []
    for entry in Path("/proc").glob("[0-9]*"):
        fields = stat_fields(int(entry.name))
        if fields is not None and len(fields) > 1 and fields[1] == str(pid):
            children.append(int(entry.name))
    return sorted(children)


def signal_children(pid: int, sig: signal.Signals) -> list[int]:
    """Send `sig` to each child of `pid`: to its whole process group when it leads its own
    (an action runs in its own session), else to the child alone. Returns the children."""
    try:
        own_group = os.getpgid(pid)
    except OSError:
        own_group = -1
    children = child_pids(pid)
    for child in children:
        signal_leader(child, own_group, sig)
    return children


def signal_leader(pid: int, own_group: int, sig: signal.Signals) -> None:
    """Send `sig` to the process group `pid` leads (one other than `own_group`), else to
    `pid` alone; a process that is gone already is no error."""
    with contextlib.suppress(OSError):
        group = os.getpgid(pid)
        if group == pid and group != own_group:
            os.killpg(group, sig)
        else:
            os.kill(pid, sig)


def live_processes() -> dict[int, tuple[int, int]]:
    """Every live process (zombies left out) as pid -> (parent pid, process group), from one
    look at /proc (empty where it is not available)."""
    found: dict[int, tuple[int, int]] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        fields = stat_fields(int(entry.name))
        if fields is None or len(fields) < 3 or fields[0] in ("Z", "X"):
            continue
        with contextlib.suppress(ValueError):
            found[int(entry.name)] = (int(fields[1]), int(fields[2]))
    return found


def tree_of(roots: set[int], table: dict[int, tuple[int, int]], group: int = 0) -> list[int]:
    """The live processes of *table* that are in *roots*, descend from one, or are in the
    process group *group* (0: none)."""
    found = {pid for pid, (_, pgrp) in table.items() if pid in roots or (group and pgrp == group)}
    below: dict[int, list[int]] = {}
    for pid, (parent, _) in table.items():
        below.setdefault(parent, []).append(pid)
    todo = list(found | roots)
    while todo:
        for child in below.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return sorted(found)
