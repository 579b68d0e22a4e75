"""Scope locks: a run claims the paths it edits; overlapping claims by live loops are refused.

Every claim is one record file `.loops/.running/<name>.lock`. Checking the records and
writing a new one happens under an exclusive `flock` on `.loops/.running/.scopes.lock`, so of
many simultaneous starts exactly one wins a contested scope. A record whose process is gone
(crash, kill -9, reboot) is stale: the next start deletes it. A fan-out's branches run under
their parent's claim: each child `ll-loop run` it starts is let in beside every claim of its
fan-out's tree, and a resume of the fan-out beside its branches still running.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any

from little_loops.fsm.facts.errors import (
    CorruptStateError,
    LoopDefinitionError,
    LoopRuntimeError,
    ScopeConflictError,
)
from little_loops.fsm.facts.layout import (
    PARENT_ENV,
    default_loops_dir,
    lock_files,
    make_running_dir,
    mutex_file,
    run_files,
    running_dir,
    split_run_key,
    validate_loop_name,
)
from little_loops.fsm.facts.runfile import display_path, open_run_file, read_run_file
from little_loops.fsm.facts.timefmt import format_duration, iso_now
from little_loops.fsm.processes.pids import pid_alive, process_start_ticks
from little_loops.fsm.runs.atomic import remove_leftover_temp_files, write_atomic
from little_loops.fsm.runs.eventlog import describe

DEFAULT_SCOPE: tuple[str, ...] = (".",)
QUEUE_POLL = 0.2  # seconds between the tries of a queued claim


def _hostname() -> str:
    """This machine's name, as socket.gethostname() gives it (without importing socket)."""
    return os.uname().nodename


def project_root(loops_dir: Path) -> Path:
    """The directory scope paths are relative to: the parent of `.loops`."""
    return Path(loops_dir).resolve().parent


def normalize_scope(scope: Sequence[str], root: Path) -> list[str]:
    """Scope paths as POSIX paths relative to `root` (`.` for the root itself), in order, unique.

    `./src/`, `src//` and `src` all become `src`; symlinks and `..` are resolved; a path
    outside the project stays absolute. An empty scope claims the whole project.
    """
    root = root.resolve()
    result: list[str] = []
    for entry in list(scope) or list(DEFAULT_SCOPE):
        if not isinstance(entry, str) or not entry.strip() or "\0" in entry:
            raise LoopDefinitionError(f"scope entry {entry!r} is not a path")
        path = Path(entry)
        absolute = (path if path.is_absolute() else root / path).resolve()
        try:
            text = absolute.relative_to(root).as_posix()
        except ValueError:
            text = absolute.as_posix()
        if text not in result:
            result.append(text)
    return result


def scopes_overlap(a: str, b: str, root: Path, root_b: Path | None = None) -> bool:
    """True if normalized scope paths `a` (relative to *root*) and `b` (relative to *root_b*,
    else *root*) are equal or one lies inside the other."""
    pa = PurePosixPath(root.resolve().as_posix()) / a
    pb = PurePosixPath((root_b or root).resolve().as_posix()) / b
    return pa == pb or pa in pb.parents or pb in pa.parents


@dataclass(frozen=True)
class LockRecord:
    """One claim: which loop, which process, which paths."""

    loop: str
    pid: int
    scope: list[str]
    started_at: str
    hostname: str
    pid_start: int | None = None
    root: str | None = None  # the folder the scope is relative to (a worktree's); None: project
    parent: str | None = None  # a fan-out branch's: the key of the run whose claim it is under

    def to_dict(self) -> dict[str, Any]:
        """The record file's JSON content."""
        data = {
            "loop": self.loop,
            "pid": self.pid,
            "pid_start": self.pid_start,
            "scope": self.scope,
            "started_at": self.started_at,
            "hostname": self.hostname,
        }
        if self.root is not None:
            data["root"] = self.root
        if self.parent is not None:
            data["parent"] = self.parent
        return data

    def scope_root(self, project: Path) -> Path:
        """The folder the scope paths are relative to (the *project* root unless a worktree)."""
        return project if self.root is None else Path(self.root)

    @property
    def alive(self) -> bool:
        """The holder still runs (a record from another host is assumed alive: no way to tell)."""
        if self.hostname != _hostname():
            return True
        return pid_alive(self.pid, self.pid_start)

    def holder(self) -> str:
        """`loop 'a' (pid 123)` as messages name the holder."""
        host = "" if self.hostname == _hostname() else f" on {self.hostname}"
        return f"loop {self.loop!r} (pid {self.pid}{host})"


def _read_record(path: Path, loop_name: str) -> LockRecord:
    try:
        data = json.loads(read_run_file(path).decode("utf-8"))
        return LockRecord(
            loop=str(data["loop"]),
            pid=int(data["pid"]),
            scope=[str(item) for item in data["scope"]],
            started_at=str(data.get("started_at", "")),
            hostname=str(data.get("hostname", "")),
            pid_start=None if data.get("pid_start") is None else int(data["pid_start"]),
            root=None if data.get("root") is None else str(data["root"]),
            parent=None if data.get("parent") is None else str(data["parent"]),
        )
    except (ValueError, KeyError, TypeError, RecursionError) as exc:
        raise CorruptStateError(
            f"{display_path(path)}: unreadable scope lock ({_why(exc)}); delete"
            f" it if no loop named {loop_name!r} is running"
        ) from None


def _why(exc: Exception) -> str:
    """What is wrong with a lock record, in words (no Python names)."""
    if isinstance(exc, KeyError):
        return f"missing {exc.args[0]!r}"
    if isinstance(exc, TypeError) or type(exc) is ValueError:
        return "a field has the wrong type"
    return describe(exc)


def read_scope_locks(loops_dir: Path | None = None) -> list[LockRecord]:
    """Every lock record under `.running/` (live or stale), by loop name; for status displays."""
    records = []
    for name, path in lock_files(running_dir(loops_dir)):
        with contextlib.suppress(FileNotFoundError):
            records.append(_read_record(path, name))
    return records


@contextlib.contextmanager
def _mutex(running: Path) -> Iterator[None]:
    """Hold the exclusive flock that serialises every check-and-claim in this `.running/`."""
    # never deleted: removing a flock file would let two holders in
    fd = open_run_file(mutex_file(running), os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the flock


@dataclass(frozen=True)
class _Conflict:
    holder: LockRecord
    mine: str
    theirs: str
    same_loop: bool

    def overlap(self, loop_name: str) -> str:
        if self.same_loop and self.holder.loop != loop_name:  # a singleton's other run
            return (
                f"loop {split_run_key(loop_name)[0]!r} is a singleton and already running as"
                f" {self.holder.loop!r} (pid {self.holder.pid}): one run at a time"
            )
        if self.same_loop:
            return f"loop {loop_name!r} is already running (pid {self.holder.pid})"
        return (
            f"scope {self.mine!r} of loop {loop_name!r} overlaps {self.theirs!r}"
            f" held by {self.holder.holder()}"
        )


class LockHandle:
    """A claimed scope; `release()` (or leaving the `with` block) gives it back."""

    def __init__(self, record: LockRecord, path: Path, reclaimed: Sequence[str]) -> None:
        self.record = record
        self.path = path
        self.reclaimed: tuple[str, ...] = tuple(reclaimed)  # notes about stale locks removed
        self.released = False

    @property
    def loop_name(self) -> str:
        return self.record.loop

    @property
    def scope(self) -> list[str]:
        return self.record.scope

    def release(self) -> None:
        """Delete our record (only if it is still ours); safe to call twice or from a child."""
        if self.released or os.getpid() != self.record.pid:
            return
        with _mutex(self.path.parent):
            try:
                current = _read_record(self.path, self.record.loop)
            except (FileNotFoundError, CorruptStateError):
                current = None
            if current is not None and (current.pid, current.loop) == (
                self.record.pid,
                self.record.loop,
            ):
                self.path.unlink(missing_ok=True)
        self.released = True

    def restore(self) -> str | None:
        """Write our record again if it was removed while the claim is held (someone deleted
        `.running/` during the run); a note when another run has claimed an overlapping
        scope meanwhile, so it cannot be restored."""
        if self.released or os.getpid() != self.record.pid:
            return None
        running = self.path.parent
        make_running_dir(running)
        with _mutex(running):
            if self.path.exists():
                return None
            project = project_root(running.parent)
            conflict = _check(running, self.record, project, [], own_branches=True)
            if conflict is not None:
                return (
                    f"its scope lock was removed, and meanwhile {conflict.overlap(self.loop_name)}"
                )
            write_atomic(self.path, json.dumps(self.record.to_dict(), indent=2) + "\n")
        return None

    def __enter__(self) -> LockHandle:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()


def _fanout_parent(running: Path) -> str | None:
    """The key of the run whose fan-out started this process, when it holds a live claim: the
    pid in PARENT_ENV must be our parent process's and that claim's (so a loop started by
    hand, or by a branch's own actions, is not let in by copying the variable); else None."""
    told = os.environ.get(PARENT_ENV, "")
    if not (told.isascii() and told.isdigit()) or int(told) != os.getppid():
        return None
    for name, path in lock_files(running):
        with contextlib.suppress(FileNotFoundError, CorruptStateError):
            record = _read_record(path, name)
            if record.pid == int(told) and record.hostname == _hostname() and record.alive:
                return record.loop
    return None


def _check(
    running: Path,
    me: LockRecord,
    root: Path,
    reclaimed: list[str],
    singleton: bool = False,
    own_branches: bool = False,
) -> _Conflict | None:
    """The first live claim that conflicts with `me` (with *singleton*, also any other run of
    its loop, in any tree); stale records are deleted on the way. A fan-out branch's claim
    (`parent` set) does not conflict with the claims of its fan-out's tree (its parent, its
    siblings, their branches, up to the first run); with *own_branches* (a resume) `me`'s
    claim does not conflict with those of its own tree's branches."""
    live = []
    for name, path in lock_files(running):
        try:
            other = _read_record(path, name)
        except FileNotFoundError:
            continue
        if other.alive:
            live.append(other)
            continue
        path.unlink(missing_ok=True)
        reclaimed.append(
            f"reclaimed the scope lock of loop {other.loop!r}: its process"
            f" (pid {other.pid}) is gone"
        )
    parents = {record.loop: record.parent for record in live}
    family = _first_run(me, parents) if me.parent is not None or own_branches else None
    for other in live:
        mine_root, their_root = me.scope_root(root).resolve(), other.scope_root(root).resolve()
        same_tree = mine_root == their_root
        if other.loop == me.loop and same_tree:
            return _Conflict(other, "", "", same_loop=True)
        if singleton and split_run_key(other.loop)[0] == split_run_key(me.loop)[0]:
            return _Conflict(other, "", "", same_loop=True)
        if family is not None and _first_run(other, parents) == family:
            continue  # one fan-out's tree: its branches run under its claim
        for mine in me.scope:
            for theirs in other.scope:
                # Two trees (the project, a worktree in it) share only paths outside both:
                # those are absolute. A worktree is not part of the project's `.`.
                if not same_tree and not (mine.startswith("/") or theirs.startswith("/")):
                    continue
                if scopes_overlap(mine, theirs, mine_root, their_root):
                    return _Conflict(other, mine, theirs, same_loop=False)
    return None


def _first_run(record: LockRecord, parents: dict[str, str | None]) -> str:
    """The key of the run at the top of *record*'s fan-out tree (by the `parent` links of
    the live claims; a parent with no live claim is the top): *record*'s own if none."""
    key, seen = record.loop, {record.loop}
    parent = record.parent
    while parent is not None and parent not in seen:
        key = parent
        seen.add(parent)
        parent = parents.get(parent)
    return key


def acquire_scope(
    loop_name: str,
    scope: Sequence[str],
    loops_dir: Path | None = None,
    *,
    queue: bool | Callable[[], bool] = False,
    on_wait: Callable[[str], None] | None = None,
    timeout: float | None = None,
    root: Path | None = None,
    singleton: bool = False,
    own_branches: bool = False,
) -> LockHandle:
    """Claim `scope` for `loop_name` (a run's key), or raise ScopeConflictError naming the
    holder. The scope paths are relative to *root* (a run's worktree), else to the project.

    A *singleton* loop's run also conflicts with every other run of the loop (another id,
    another worktree). A fan-out's child run claims under its parent's claim (see
    `_fanout_parent`); *own_branches* (a resume) lets the claim in beside the run's own
    branches still running. With `queue=True`, wait instead: `on_wait(message)` is called once for
    each loop waited for, then the claim is retried every QUEUE_POLL seconds until free (or
    `timeout` seconds pass). *queue* a function: wait as with True, until it says the run is
    to stop (a SIGTERM its start-up kept, a `stop`): then ScopeConflictError too.
    """
    validate_loop_name(loop_name)
    loops_dir = Path(loops_dir) if loops_dir is not None else default_loops_dir()
    running = running_dir(loops_dir)
    make_running_dir(running)
    project = project_root(loops_dir)
    me = LockRecord(
        loop=loop_name,
        pid=os.getpid(),
        scope=normalize_scope(scope, project if root is None else root),
        started_at=iso_now(),
        hostname=_hostname(),
        pid_start=process_start_ticks(os.getpid()),
        root=None if root is None else str(Path(root).resolve()),
    )
    path = run_files(loop_name, loops_dir).lock
    started = time.monotonic()
    reclaimed: list[str] = []
    waited_for: set[tuple[str, int]] = set()
    while True:
        with _mutex(running):
            me = replace(me, parent=_fanout_parent(running))
            conflict = _check(running, me, project, reclaimed, singleton, own_branches)
            if conflict is None:
                # Under the mutex nobody else writes lock files: a temp file is a leftover.
                remove_leftover_temp_files(path)
                write_atomic(path, json.dumps(me.to_dict(), indent=2) + "\n")
                return LockHandle(me, path, reclaimed)
        what = conflict.overlap(loop_name)
        holder = conflict.holder.loop
        if not queue:
            raise ScopeConflictError(
                f"{what}; wait with --queue or stop it with 'll-loop stop {holder}'"
            )
        if callable(queue) and queue():
            raise ScopeConflictError(f"{what}; stopped while queued")
        waited = time.monotonic() - started
        if timeout is not None and waited >= timeout:
            raise ScopeConflictError(
                f"{what}; still held after waiting {format_duration(waited * 1000)}"
            )
        key = (holder, conflict.holder.pid)
        if key not in waited_for:
            waited_for.add(key)
            if on_wait is not None:
                on_wait(f"queued: {what}; waiting for it to finish")
        pause = QUEUE_POLL
        time.sleep(pause if timeout is None else max(0.0, min(pause, timeout - waited)))


def read_lock(path: Path) -> LockRecord:
    """The lock record in *path* (a `.lock` file under `.running/`), live or stale.

    FileNotFoundError when there is none; CorruptStateError when it cannot be read.
    """
    return _read_record(path, path.stem)  # `NAME@ID.lock` names run NAME@ID


def live_claim(key: str, loops_dir: Path) -> LockRecord | None:
    """The scope lock record of run *key* (`NAME` or `NAME@ID`) when that run is live, else
    None; CorruptStateError when its lock cannot be read."""
    try:
        record = read_lock(run_files(key, loops_dir).lock)
    except FileNotFoundError:
        return None
    return record if record.alive else None


@contextlib.contextmanager
def waiting_flock(path: Path, timeout: float, busy: str) -> Iterator[None]:
    """Hold the exclusive flock of the file *path* (made when missing, never deleted: removing
    a flock file would let two holders in). Another holder is waited for up to *timeout*
    seconds; then LoopRuntimeError(*busy*)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise LoopRuntimeError(busy) from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the flock
