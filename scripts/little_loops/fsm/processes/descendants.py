"""An action's detached descendants: adopted through a Linux child subreaper, ended with it.

A process an action detaches from its process group (`setsid`, `setsid -f`, a double
fork, `set -m; cmd & disown`) would be reparented to init and outlive the action, `stop`
and Ctrl-C. Once `adopt_orphans()` has made this process a child subreaper
(`prctl(PR_SET_CHILD_SUBREAPER)`, Linux 3.4+), such a process is reparented here instead:
it shows up as a child this process did not start. Containment (containment.py) notes
this process's children before a child starts (`Children.now()`) and, when the child ends
for any reason, signals and reaps every child that appeared since, until none is left.

Elsewhere (not Linux, or prctl refused) nothing is adopted and nothing is swept: only the
action's own process group is ended, and the `LL_LOOP_RUN` marker finds what a crashed
run left behind.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time

from little_loops.fsm.processes.proctree import child_pids, signal_leader

_PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>
_REAP_POLL_SECONDS = 0.01
SWEEP_SECONDS = 1.0  # after an action: how long to keep killing what it detached
REAP_EVERY_SECONDS = 1.0  # while an action runs: how often adopted orphans that ended are reaped

_adopting = False


def adopt_orphans() -> bool:
    """Make this process the subreaper of its descendants; True if it now is.

    Process-wide and lasting: the CLI turns it on for the process that runs a loop. A
    library caller that wants the same calls it once before running loops.
    """
    global _adopting
    if _adopting:
        return True
    if sys.platform != "linux":
        return False
    import ctypes  # only here: ~2 ms of start-up that every other command skips

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            return False
    except (OSError, AttributeError):
        return False
    _adopting = True
    return True


def adopting() -> bool:
    """Whether `adopt_orphans()` has made this process a subreaper."""
    return _adopting


class Children:
    """The children this process had when an action started; the rest came from it."""

    __slots__ = ("known", "leader", "reap_at", "settled")

    def __init__(self, known: frozenset[int]) -> None:
        self.known = known
        self.leader = 0  # the action's own process, ended with its group, reaped by Popen
        self.settled = False  # the action had exited and left nothing: no sweep is needed
        self.reap_at = time.monotonic() + REAP_EVERY_SECONDS

    def reap_ended(self) -> None:
        """Reap the strays that have ended, while the action goes on (a loop of `( cmd & )`
        would otherwise leave a zombie each until the action ends)."""
        for pid in self.strays():
            _reaped(pid)
        self.reap_at = time.monotonic() + REAP_EVERY_SECONDS

    @classmethod
    def now(cls) -> Children | None:
        """This process's children now, or None when no descendant is adopted (no sweep)."""
        return cls(frozenset(_children())) if _adopting else None

    def strays(self) -> list[int]:
        """The children that appeared since, other than the action: what it detached."""
        return sorted(_children() - self.known - {self.leader})

    def signal_strays(self, sig: signal.Signals, *, action_exited: bool) -> None:
        """Send *sig* to each stray: to its process group where it leads one of its own.

        Once the action has exited, everything it left alive is a child here or below one
        (the kernel reparents before it reports the exit): finding no stray then means
        there is nothing to sweep.
        """
        strays = self.strays()
        if not strays:
            self.settled = action_exited
            return
        own_group = os.getpgid(0)
        for pid in strays:
            signal_leader(pid, own_group, sig)

    def end_strays(self, within: float = SWEEP_SECONDS) -> list[int]:
        """SIGKILL and reap every stray, and the children they leave, for up to *within* s.

        Call it after the action is reaped. Returns the pids ended. A killed stray's own
        children are reparented here as it is reaped, so the sweep repeats until a look
        finds none (or time is up: a process stuck in the kernel cannot be reaped).
        """
        ended: list[int] = []
        if self.settled:
            return ended
        self.leader = 0  # reaped: a process that reuses its pid now is a stray
        deadline = time.monotonic() + within
        own_group = os.getpgid(0)
        while pids := self.strays():
            for pid in pids:
                signal_leader(pid, own_group, signal.SIGKILL)
            waiting = set(pids)
            while waiting:
                for pid in list(waiting):
                    if _reaped(pid):
                        waiting.discard(pid)
                        ended.append(pid)
                if waiting:
                    if time.monotonic() >= deadline:
                        return ended
                    time.sleep(_REAP_POLL_SECONDS)
        return ended


def _reaped(pid: int) -> bool:
    """Reap *pid* if it has ended; True once it is gone (reaped here or by someone else)."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return done == pid


def _children() -> set[int]:
    """The pids whose parent is this process: children of the main thread and of this one.

    Actions are started from one thread, and an orphan is reparented to the subreaper's
    first live thread (the main one), so the other threads need not be read.
    """
    found: set[int] = set()
    main = os.getpid()
    for task in {main, threading.get_native_id()}:
        try:
            found.update(map(int, os.pread(_children_fd(main, task), 65536, 0).split()))
        except FileNotFoundError:
            if task == main:  # a kernel without CONFIG_PROC_CHILDREN
                return set(child_pids(main))
        except (OSError, ValueError):
            stale = _CHILDREN_FDS.pop((main, task), None)  # e.g. the thread has ended
            if stale is not None:
                with contextlib.suppress(OSError):
                    os.close(stale)
    return found


_CHILDREN_FDS: dict[tuple[int, int], int] = {}


def _children_fd(main: int, task: int) -> int:
    """A descriptor on /proc/MAIN/task/TASK/children, kept open: pread at 0 reads it anew
    (a fifth of the cost of opening it each time)."""
    fd = _CHILDREN_FDS.get((main, task))
    if fd is None:
        fd = os.open(f"/proc/{main}/task/{task}/children", os.O_RDONLY | os.O_CLOEXEC)
        _CHILDREN_FDS[(main, task)] = fd
    return fd
