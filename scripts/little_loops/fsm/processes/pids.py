"""Is a process id still the process we recorded? (liveness and pid-reuse checks)."""

from __future__ import annotations

import os
from pathlib import Path


def stat_fields(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name (state first), or None.

    The command name (field 2) is in parentheses and may itself contain spaces or ')'.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    return stat[stat.rfind(")") + 2 :].split()


def process_start_ticks(pid: int) -> int | None:
    """The start time of `pid` in clock ticks since boot (Linux /proc), or None if unknown.

    A recorded (pid, start) pair identifies a process even after the pid is reused.
    """
    fields = stat_fields(pid)
    try:
        return int(fields[19]) if fields else None  # field 22 overall: starttime
    except (IndexError, ValueError):
        return None


def _is_zombie(pid: int) -> bool:
    fields = stat_fields(pid)
    return fields is not None and bool(fields) and fields[0] in ("Z", "X")


def pid_alive(pid: int | None, start_ticks: int | None = None) -> bool:
    """True if `pid` runs (not a zombie) and, when `start_ticks` is given, is the same process."""
    if pid is None or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # gone, or not a pid at all (a corrupt file)
        return False
    except PermissionError:
        pass  # exists, owned by another user
    if _is_zombie(pid):
        return False
    if start_ticks is not None:
        current = process_start_ticks(pid)
        if current is not None and current != start_ticks:
            return False  # the pid was reused by another process
    return True
