"""Where every child process starts and ends: the containment interface and process groups.

Everything ll-loop starts goes through `CONTAINMENT`: actions and the Claude Code judge
(through actions/supervisor.py), `notify:` commands, background runs and git. It starts a
child, lists what is left of what the child started, and ends all of it (SIGTERM, a grace
period, SIGKILL, reap). The processes of a run this process did not start (what a crashed
run left behind, the run `ll-loop stop` ends) are signalled through it too.

The one implementation today is `ProcessGroups`: each child leads a session (process group)
of its own, so one signal to the group reaches what it started; on Linux what leaves the
group (`setsid`, a double fork) is adopted through a child subreaper (descendants.py) and
ended with it. A per-run cgroup (everything a run starts, however it detaches, in one
cgroup that is killed as a whole) is one more implementation of `Containment` in this
module, chosen where `CONTAINMENT` is set: no caller changes.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from signal import Signals
from typing import Protocol

from little_loops.fsm.processes import launch
from little_loops.fsm.processes.descendants import Children
from little_loops.fsm.processes.pids import pid_alive, process_start_ticks
from little_loops.fsm.processes.proctree import live_processes, signal_children, tree_of

_POLL_SECONDS = 0.02  # while ending a child: how often to look whether anything is left
_NO_STDIN: launch.Streams = (subprocess.DEVNULL, None, None)


class Contained(Protocol):
    """One started child and everything it started."""

    @property
    def pid(self) -> int: ...

    @property
    def process(self) -> subprocess.Popen[bytes]:
        """The child's Popen (its pipes, `wait`, `poll`)."""
        ...

    def exited(self) -> bool:
        """Whether the child has exited, without reaping it: until `reap` (or `end`) its
        pid stays a zombie, so its process group can still be signalled as its own (what
        it started in the background is ended with it)."""
        ...

    def signal(self, sig: Signals) -> None:
        """Send *sig* to the child and what runs under it; for a child in a session of its
        own, safe from another thread or a signal handler (no /proc is read)."""

    def signal_detached(self, sig: Signals, *, exited: bool) -> None:
        """Send *sig* to what the child detached from it (where that is adopted); *exited*:
        the child has exited, so finding nothing means there is nothing to sweep."""

    def housekeep(self) -> float:
        """Reap what the child detached and has ended; returns the monotonic time this is
        due again (infinity: never)."""
        ...

    def left(self) -> list[int]:
        """The live pids of it: the child (until it exits) and everything it started."""
        ...

    def reap(self) -> int:
        """SIGKILL what is left, wait for the child, sweep what it detached; the child's
        exit status as Popen gives it (negative: the signal that ended it)."""
        ...

    def end(self, grace: float) -> int:
        """End everything: SIGTERM, up to *grace* seconds for it all to exit, SIGKILL, reap."""
        ...

    def end_leader_first(self, grace: float) -> int:
        """End a child that ends its own work (a run of ours): SIGTERM its group alone, up to
        *grace* seconds for it to exit, then SIGKILL everything seen below it, reap."""
        ...


class Containment(Protocol):
    """Starts children, and ends them with everything they started."""

    def start(
        self,
        argv: Sequence[str],
        *,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        streams: launch.Streams = _NO_STDIN,
        session: bool = True,
        programs: launch.ProgramPaths | None = None,
        sweep: bool = True,
    ) -> Contained:
        """Start *argv* (`streams`: stdin, stdout, stderr) in a session of its own unless
        not *session* (git: a Ctrl-C at the terminal reaches it as it reaches us). With
        *sweep*, the children this process gains while it runs are taken for orphans it left
        (ended after it): only right when it is the one child started at a time, so not for
        a fan-out's children, which start beside each other. Raises what Popen raises:
        OSError when it cannot start, ValueError for a NUL byte."""
        ...

    def signal_recorded(self, pid: int, sig: Signals, *, children: bool = False) -> None:
        """Send *sig* to a process this one did not start (a run's recorded pid), and first
        to its children when *children*; one that is gone already is no error."""

    def end_recorded(self, pids: Sequence[int], grace: float) -> None:
        """End processes this one did not start (what a crashed run left): SIGTERM them and
        their process groups, SIGKILL what is left after *grace* seconds."""


class _Group:
    """A child started by `ProcessGroups`: its session, and what it detached (adopted)."""

    __slots__ = ("_process", "_session", "_strays")

    def __init__(
        self, process: subprocess.Popen[bytes], strays: Children | None, session: bool
    ) -> None:
        self._process = process
        self._strays = strays
        self._session = session

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def process(self) -> subprocess.Popen[bytes]:
        return self._process

    def exited(self) -> bool:
        if self._process.returncode is not None:
            return True
        try:
            found = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return True  # reaped elsewhere
        return found is not None

    def signal(self, sig: Signals) -> None:
        if self._process.returncode is not None:
            return  # reaped: its pid may be another process's by now
        if not self._session:
            self._signal_each(sig, self.left())
            return
        # The unreaped leader keeps the group id ours, so this cannot hit a stranger.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, sig)

    def signal_detached(self, sig: Signals, *, exited: bool) -> None:
        if self._strays is not None and not self._strays.settled:
            self._strays.signal_strays(sig, action_exited=exited)

    def housekeep(self) -> float:
        strays = self._strays
        if strays is None:
            return math.inf
        if time.monotonic() >= strays.reap_at:  # adopted orphans that ended: no zombies
            strays.reap_ended()
        return strays.reap_at

    def left(self) -> list[int]:
        table = live_processes()
        running = self._process.returncode is None
        roots = {self.pid} if running else set()
        if self._strays is not None:
            roots.update(self._strays.strays())
        group = self.pid if running and self._session else 0
        return [pid for pid in tree_of(roots, table, group) if pid != os.getpid()]

    def reap(self) -> int:
        self.signal(signal.SIGKILL)
        returncode = self._process.wait()
        if self._strays is not None:
            self._strays.end_strays()
        return returncode

    def end(self, grace: float) -> int:
        # Every process seen, with its start time: one that leaves the group and whose
        # parent then dies is no longer found below the child, but is still ended.
        seen: dict[int, int | None] = {}
        for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 0.0)):
            self._note(seen)
            self.signal(sig)
            self.signal_detached(sig, exited=not pid_alive(self.pid))
            self._signal_each(sig, [pid for pid, at in seen.items() if pid_alive(pid, at)])
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline and self._note(seen):
                time.sleep(_POLL_SECONDS)
        return self.reap()

    def end_leader_first(self, grace: float) -> int:
        # What is below it is noted before and while it ends: what it leaves behind
        # (reparented once it is gone) is still ended.
        seen: dict[int, int | None] = {}
        self._note(seen)
        self.signal(signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and not self.exited():
            self._note(seen)
            time.sleep(_POLL_SECONDS)
        self._note(seen)
        self.signal_detached(signal.SIGKILL, exited=not pid_alive(self.pid))
        self._signal_each(signal.SIGKILL, [pid for pid, at in seen.items() if pid_alive(pid, at)])
        return self.reap()

    def _note(self, seen: dict[int, int | None]) -> bool:
        """Add what is left to *seen*; whether anything seen still runs."""
        for pid in self.left():
            seen.setdefault(pid, process_start_ticks(pid))
        return any(pid_alive(pid, at) for pid, at in seen.items())

    @staticmethod
    def _signal_each(sig: Signals, pids: list[int]) -> None:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)


class ProcessGroups:
    """Containment by process groups (sessions), plus the subreaper's adopted orphans."""

    def __init__(self) -> None:
        self._programs = launch.ProgramPaths()

    def start(
        self,
        argv: Sequence[str],
        *,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        streams: launch.Streams = _NO_STDIN,
        session: bool = True,
        programs: launch.ProgramPaths | None = None,
        sweep: bool = True,
    ) -> Contained:
        # Noted before: the child is not one.
        strays = Children.now() if session and sweep else None
        paths = self._programs if programs is None else programs
        process = launch.start(argv, cwd, env, streams, paths, session=session)
        if strays is not None:
            strays.leader = process.pid
        return _Group(process, strays, session)

    def signal_recorded(self, pid: int, sig: Signals, *, children: bool = False) -> None:
        if children:  # first: once the parent is gone they are reparented, harder to find
            signal_children(pid, sig)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)

    def end_recorded(self, pids: Sequence[int], grace: float) -> None:
        groups = set()
        for pid in pids:
            with contextlib.suppress(OSError):
                groups.add(os.getpgid(pid))
        groups.discard(os.getpgid(0))
        for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 0.0)):
            for group in groups:
                with contextlib.suppress(OSError):
                    os.killpg(group, sig)
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, sig)
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline and any(pid_alive(pid) for pid in pids):
                time.sleep(0.05)


# The containment every caller uses: a per-run cgroup would be chosen here.
CONTAINMENT: Containment = ProcessGroups()
