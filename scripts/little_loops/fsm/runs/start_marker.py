"""A run on its way up: the marker `stop` finds, rolled back when its process dies too soon.

A `run` writes `.running/KEY.starting.json` (its pid, and for `--worktree` the worktree it is
about to make) before it makes its place, and removes it once the run has ended; a resume
writes one before anything else. So start-up is all or nothing: a process killed before the
run's first event leaves a marker whose process is gone, and the next `run` of the loop (or a
`resume` of it) removes the worktree and branch it made, which hold nothing yet. `stop` finds
a run or a resume by its marker before it has saved its state, and a process that has not
written its marker yet by the stop request (`request_stop`) it reads right after writing it.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import FrameType
from typing import Any

from little_loops.fsm.facts.errors import LoopError, LoopRuntimeError
from little_loops.fsm.facts.layout import (
    LAUNCHER_ENV,
    RUN_KEY_SEPARATOR,
    make_running_dir,
    run_files,
    running_dir,
    starting_files,
)
from little_loops.fsm.facts.runfile import read_run_file
from little_loops.fsm.processes.pids import pid_alive, process_start_ticks
from little_loops.fsm.runs.atomic import remove_dead_temp_files, write_atomic
from little_loops.fsm.runs.locks import read_lock

RUN = "run"
RESUME = "resume"


@dataclass(frozen=True)
class StartMarker:
    """What a starting process records: who it is, what it does, and the worktree it makes."""

    pid: int
    pid_start: int | None
    command: str  # RUN or RESUME
    worktree: dict[str, str] = field(default_factory=dict)  # path, branch, base; {}: none
    # The resume it started to go on with the run (`on_handoff: spawn`): pid, start time.
    handed_to: tuple[int, int | None] | None = None

    @property
    def alive(self) -> bool:
        return pid_alive(self.pid, self.pid_start)

    def holder(self) -> tuple[int, int | None] | None:
        """The live `ll-loop` process (pid, start time) this marker stands for: its own, else
        the resume it handed the run to; None when neither lives."""
        if ll_loop_alive(self.pid, self.pid_start):
            return (self.pid, self.pid_start)
        if self.handed_to is not None and ll_loop_alive(*self.handed_to):
            return self.handed_to
        return None

    def to_json(self) -> str:
        data: dict[str, Any] = {"pid": self.pid, "pid_start": self.pid_start}
        data.update(command=self.command, worktree=self.worktree)
        if self.handed_to is not None:
            data["handed_to"] = list(self.handed_to)
        return json.dumps(data) + "\n"


def read_marker(key: str, loops_dir: Path) -> StartMarker | None:
    """The start-up marker of run *key*; None when there is none or it cannot be read (a
    marker is written atomically: an unreadable one is not ours)."""
    try:
        data = json.loads(read_run_file(run_files(key, loops_dir).starting))
        worktree = data.get("worktree") or {}
        handed = data.get("handed_to")
        return StartMarker(
            int(data["pid"]),
            _ticks(data.get("pid_start")),
            str(data["command"]),
            {str(k): str(v) for k, v in worktree.items()},
            None if handed is None else (int(handed[0]), _ticks(handed[1])),
        )
    except (
        OSError,
        LoopError,
        ValueError,
        KeyError,
        TypeError,
        AttributeError,
        IndexError,
        OverflowError,
    ):
        return None


def _ticks(value: Any) -> int | None:
    """A process's start time as saved (None: not known)."""
    return None if value is None else int(value)


def first_event_written(key: str, loops_dir: Path) -> bool:
    """Whether run *key* got as far as its first event (or a state file)."""
    files = run_files(key, loops_dir)
    with contextlib.suppress(OSError):
        if files.state.exists() or files.events.stat().st_size > 0:
            return True
    return False


class Starting:
    """The marker of this process starting run *key*, held until `close()`.

    It also catches SIGTERM until the run's own handlers are installed, so that a `stop`
    meanwhile is kept for it (`stop_pending`) rather than killing it. A plain `run` (in the
    main checkout, no worktree) holds its marker until it ends; one finding the live marker
    of another process for its key, or a resume finding a plain run's, leaves it to that
    process: the scope claim refuses (or queues) this one as before, and `stop NAME` means
    the other."""

    def __init__(
        self, key: str, loops_dir: Path, command: str, worktree: dict[str, str] | None = None
    ) -> None:
        self.key = key
        self.loops_dir = Path(loops_dir)
        me = os.getpid()
        self.marker = StartMarker(me, process_start_ticks(me), command, dict(worktree or {}))
        self.made = False  # set once the worktree is made: only then is it ours to roll back
        self._signalled = False
        self._under_way = False
        self._previous: Any = None
        path = run_files(key, loops_dir).starting
        other = read_marker(key, loops_dir)
        busy = other if other is not None and other.pid != me and other.alive else None
        # A plain run's marker stays its own: the scope claim (or a resume's check of the
        # state) refuses what would clash with it, with the message it always gave.
        plain_busy = busy is not None and busy.command == RUN and not busy.worktree
        held = busy is None or not (self.plain or plain_busy)
        if busy is not None and held and not _handing_to_me(busy):
            raise LoopRuntimeError(
                f"run {key} is being started by another ll-loop (pid {busy.pid}): wait for"
                " it, or stop it with 'll-loop stop'"
            )
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGTERM, self._on_term)
        make_running_dir(running_dir(loops_dir))
        if held:
            write_atomic(path, self.marker.to_json())
        # After the marker: a stop that looked before it was there left its request.
        self._requested = take_stop_request(key, loops_dir)
        os.environ.pop(LAUNCHER_ENV, None)  # taken: not for what this run starts

    @property
    def plain(self) -> bool:
        """A `run` in the main checkout: no worktree to make, nothing to roll back."""
        return self.marker.command == RUN and not self.marker.worktree

    def _on_term(self, signum: int, frame: FrameType | None) -> None:
        if not self._under_way:
            self._signalled = True
            return
        # The run is over (its own handlers came and went): SIGTERM does what it did before.
        signal.signal(signal.SIGTERM, self._previous)
        self._previous = None
        signal.raise_signal(signal.SIGTERM)

    def under_way(self) -> None:
        """Say that the run's own signal handlers are in place: a SIGTERM that comes once
        they are gone again (after the run) is not kept, it acts as it did before this."""
        if self.marker.command == RUN:  # a resume's is kept: its chain reads it (cli/session)
            self._under_way = True

    def hand_over(self, pid: int) -> None:
        """Say that the resume *pid*, started by this process, goes on with the run: it
        takes the marker over (this one is left for it), and a `stop` before it has written
        its own finds it there."""
        self.marker = replace(self.marker, handed_to=(pid, process_start_ticks(pid)))
        write_atomic(run_files(self.key, self.loops_dir).starting, self.marker.to_json())

    def stop_pending(self) -> bool:
        """Whether a `stop` came while this run or resume was on its way up: it is to stop."""
        return self._signalled or self._requested or take_stop_request(self.key, self.loops_dir)

    def close(self) -> list[str]:
        """Remove the marker; a run that never wrote its first event has its worktree rolled
        back (the notes say so). SIGTERM is handled as before again."""
        if self._previous is not None:
            with contextlib.suppress(ValueError, TypeError):
                signal.signal(signal.SIGTERM, self._previous)
            self._previous = None
        notes = []
        # A plain run's files before its first event (flags, definition) are the next run's
        # to replace: another run of the key may be using them right now.
        if not self.plain and not first_event_written(self.key, self.loops_dir):
            made = self.marker if self.made else replace(self.marker, worktree={})
            notes = roll_back(self.key, self.loops_dir, made)
        marker = read_marker(self.key, self.loops_dir)
        path = run_files(self.key, self.loops_dir).starting
        # Never another's; nor ours while the resume it was handed to lives (it takes it over).
        ours = marker is not None and marker.pid == self.marker.pid
        if ours and (
            marker is None or marker.handed_to is None or not pid_alive(*marker.handed_to)
        ):
            path.unlink(missing_ok=True)
        remove_dead_temp_files(path)
        return notes


@contextlib.contextmanager
def starting(
    key: str, loops_dir: Path, command: str, worktree: dict[str, str] | None = None
) -> Iterator[Starting]:
    """`Starting` for the block; closed however it ends (its notes are dropped)."""
    claim = Starting(key, loops_dir, command, worktree)
    try:
        yield claim
    finally:
        claim.close()


def _handing_to_me(marker: StartMarker) -> bool:
    """Whether *marker* is that of the resume that started this one to go on with its run
    (`on_handoff: spawn`): named in it, or its process this one's parent (which is about to
    name it)."""
    me = os.getpid()
    return marker.command == RESUME and (
        marker.handed_to == (me, process_start_ticks(me)) or marker.pid == os.getppid()
    )


def roll_back(key: str, loops_dir: Path, marker: StartMarker) -> list[str]:
    """Undo what a start-up that never wrote its first event made: the worktree and branch
    (when they hold nothing beyond the base: else they are kept and said so) and the run
    files written before the first event."""
    from little_loops.fsm.runs.worktrees import remove_untouched

    notes = []
    if marker.worktree:
        notes.append(remove_untouched(loops_dir, key, marker.worktree.get("base", "")))
    files = run_files(key, loops_dir)
    for path in (files.options, files.definition):
        path.unlink(missing_ok=True)
    with contextlib.suppress(FileNotFoundError, LoopError):
        if not read_lock(files.lock).alive:  # its scope claim, left by the kill
            files.lock.unlink(missing_ok=True)
    return notes


def forget_dead_starts(loops_dir: Path, loop_name: str, key: str | None = None) -> list[str]:
    """Roll back the start-ups of *loop_name*'s runs (of run *key* only, when given) whose
    process died before their first event; a note for each."""
    notes = []
    for found, path in starting_files(running_dir(loops_dir)):
        if found != key and not (key is None and found.startswith(loop_name + RUN_KEY_SEPARATOR)):
            continue
        marker = read_marker(found, loops_dir)
        if marker is not None and (marker.alive or marker.holder() is not None):
            continue  # starting, or the resume it handed the run to is
        what = f"run {found} was killed while starting, before its first step"
        if marker is not None and not first_event_written(found, loops_dir):
            try:
                done = roll_back(found, loops_dir, marker)
            except LoopError as exc:  # kept for a later try: git may be back then
                notes.append(f"{what}; what it left could not be removed yet: {exc}")
                continue
            notes.append(f"{what}: {'; '.join(done)}" if done else what)
        path.unlink(missing_ok=True)
        remove_dead_temp_files(path)
    return notes


def request_stop(key: str, loops_dir: Path, also: Sequence[int] = ()) -> bool:
    """Leave a stop request for the `ll-loop run` and `ll-loop resume` processes there are
    now, which may not have said yet which run they start (their marker comes next, then
    they read this): the one of *key* among them (or a background run one of them starts)
    stops its run. *also*: processes that may start one (the process that ended the run at
    a handoff, about to start its continuation: it starts none). False when there is none.

    It names processes by pid and start time, so a run started after the stop never takes
    it for itself (a reused pid neither), and the first start of *key* removes it: it can
    never stop a later, unrelated run."""
    # Where `.loops` is, not where it points when it is a link (cwds are read resolved).
    project = Path(loops_dir).absolute().parent.resolve()
    pids = [[pid, process_start_ticks(pid)] for pid in [*_starting_processes(project), *also]]
    if not pids:
        return False
    with contextlib.suppress(OSError, LoopError):
        make_running_dir(running_dir(loops_dir))  # a first run may not have made it yet
        write_atomic(run_files(key, loops_dir).stop_request, json.dumps({"pids": pids}) + "\n")
    return True


def _starting_processes(project: Path) -> list[int]:
    """The pids of `ll-loop run` and `ll-loop resume` processes (`ll-loop resume ...`,
    `python -m little_loops.cli run ...`) working in the folder *project* or below it (an
    ll-loop finds its `.loops/` from there: one elsewhere starts no run of this project's),
    this one left out; none where /proc cannot be read."""
    found = []
    try:
        entries = [entry for entry in os.listdir("/proc") if entry.isdigit()]
    except OSError:
        return []
    for entry in entries:
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as source:
                args = source.read().split(b"\0")
        except OSError:
            continue
        starts = b"run" in args or b"resume" in args
        if starts and _ll_loop_args(args) and int(entry) != os.getpid():
            try:
                here = Path(os.readlink(f"/proc/{entry}/cwd"))
            except OSError:
                continue
            if here == project or project in here.parents:
                found.append(int(entry))
    return found


def _ll_loop_args(args: list[bytes]) -> bool:
    """Whether a command line (/proc/PID/cmdline split) is an `ll-loop` one (`ll-loop ...`,
    `python -m little_loops.cli ...`)."""
    names = [os.path.basename(arg) for arg in args[:2]]
    return b"ll-loop" in names or b"-m\0little_loops.cli" in b"\0".join(args[1:3])


def ll_loop_alive(pid: int | None, pid_start: int | None) -> bool:
    """Whether *pid* is the `ll-loop` process that started at *pid_start*: a pid saved in
    a run file is signalled only then (a planted one may name any process)."""
    if pid is None or pid_start is None or not pid_alive(pid, pid_start):
        return False
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as source:
            return _ll_loop_args(source.read().split(b"\0"))
    except OSError:
        return False


def withdraw_stop(key: str, loops_dir: Path) -> None:
    """Remove the stop request of *key* (the resume it was for has been stopped)."""
    with contextlib.suppress(OSError):
        run_files(key, loops_dir).stop_request.unlink()


def take_stop_request(key: str, loops_dir: Path) -> bool:
    """Whether a stop request of *key* names this process, or the process that started it
    in the background (LAUNCHER_ENV): a run or resume that had not said which run it starts
    when the stop came. The request is removed either way (it was for a start begun before
    it: for nobody after this one)."""
    path = run_files(key, loops_dir).stop_request
    try:
        data = json.loads(read_run_file(path))
    except (OSError, LoopError, ValueError):
        return False
    path.unlink(missing_ok=True)
    named = [[os.getpid(), process_start_ticks(os.getpid())]]
    launcher = os.environ.get(LAUNCHER_ENV, "").split(":")
    if len(launcher) == 2 and all(part.isdigit() for part in launcher):
        named.append([int(part) for part in launcher])
    try:
        return any(pair in named for pair in [list(pair) for pair in data["pids"]])
    except (TypeError, ValueError, KeyError):
        return False


def launcher_env() -> dict[str, str]:
    """The environment variable that names this process (pid and start time) to a run it
    starts in the background: a stop request naming this one is that run's (LAUNCHER_ENV)."""
    me = os.getpid()
    return {LAUNCHER_ENV: f"{me}:{process_start_ticks(me) or 0}"}
