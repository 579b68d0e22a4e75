"""The runs `watch` lists: every run of the project, its sub-loops under it, as rows of text."""

from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import dataclass, replace
from pathlib import Path

from little_loops.fsm.facts.errors import LoopError
from little_loops.fsm.facts.layout import (
    EVENTS_SUFFIX,
    OPTIONS_SUFFIX,
    STATE_SUFFIX,
    rotated_parts,
    run_files,
    running_dir,
    state_files,
)
from little_loops.fsm.facts.outcomes import Status
from little_loops.fsm.facts.safetext import one_line
from little_loops.fsm.facts.spend import format_cost
from little_loops.fsm.facts.timefmt import format_duration
from little_loops.fsm.runs.approvals import pending_question
from little_loops.fsm.runs.describe import RunDescription, describe
from little_loops.fsm.runs.fanned import from_captured
from little_loops.fsm.runs.liveness import LiveStatus, live_status
from little_loops.fsm.runs.locks import project_root
from little_loops.fsm.runs.state import LoopState
from little_loops.fsm.runs.store import running_loop

CELL_CHARS = 200  # the most of one saved value a cell shows (a cell is cut again to fit)
_CHILD_DEPTH = 20  # a saved file is data: never follow an endless chain of sub-loops


@dataclass(frozen=True)
class BoardRow:
    """One line of the list: a run (depth 0) or one of its running sub-loops (depth 1...)."""

    key: str  # the run's files are named by it (the sub-loop's parent's, for a child)
    depth: int
    loop: str  # NAME, or NAME@ID for a worktree run
    run_id: str
    status: str  # running, crashed, waiting, stopped, completed, failed, ...
    state: str
    passes: str  # N/LIMIT
    elapsed: str
    cost: str
    waiting: str  # why a live run waits (approval, usage limit, retry backoff), else ""

    def cells(self) -> tuple[str, ...]:
        """The row's cells in column order, every one safe to print."""
        name = "  " * self.depth + ("└ " if self.depth else "") + self.loop
        values = (name, self.run_id, self.status, self.state, self.passes, self.elapsed)
        return tuple(clean(v) for v in (*values, self.cost, self.waiting))


COLUMNS = ("LOOP", "RUN", "STATUS", "STATE", "PASS", "ELAPSED", "COST", "WAITING")


def clean(text: object, limit: int = CELL_CHARS) -> str:
    """*text* cut to *limit* characters before its controls are escaped (a 10 MB line is
    never escaped whole), so nothing printed is an escape sequence."""
    s = str(text)
    return one_line(s if len(s) <= limit else s[:limit] + "…")


def status_word(described: RunDescription) -> str:
    """One word for the STATUS column."""
    state = described.state
    if described.live.crashed:
        return "crashed"
    if state.status == Status.RUNNING and pending_question(state) is not None:
        return "waiting"
    return str(state.status)


def waiting_reason(described: RunDescription) -> str:
    """What the run waits for: its approval question, a usage limit, a retry's backoff."""
    question = pending_question(described.state)
    if question is not None and not described.live.crashed:
        return f"approval: {question.get('question', '')}"
    return described.waiting or ""


def row_of(key: str, described: RunDescription) -> BoardRow:
    """The list's line of the saved run *key*."""
    state, limit = described.state, described.limit
    return BoardRow(
        key=key,
        depth=0,
        loop=state.ref if state.worktree is not None else state.loop_name,
        run_id=state.run_id or "-",
        status=status_word(described),
        state=state.current_state,
        passes=f"{state.iteration}/{limit}" if limit else str(state.iteration),
        elapsed=format_duration(state.elapsed_ms + described.live.in_state_ms),
        cost=format_cost(state.cost_usd) if state.cost_usd > 0 else "-",
        waiting=waiting_reason(described),
    )


def child_rows(parent: BoardRow, child: object) -> list[BoardRow]:
    """The running sub-loops of a run (its saved `child`, nested), each under its parent."""
    rows = []
    for depth in range(1, _CHILD_DEPTH):
        if not isinstance(child, dict):
            break
        rows.append(
            BoardRow(
                key=parent.key,
                depth=depth,
                loop=str(child.get("loop", "?")),
                run_id="",
                status=parent.status,
                state=str(child.get("current_state", "?")),
                passes=str(child.get("iteration", "")),
                elapsed="",
                cost="",
                waiting="",
            )
        )
        child = child.get("child")
    return rows


def board_rows(loops_dir: Path) -> list[BoardRow]:
    """Every run with a state file in *loops_dir* (foreground, background, worktree runs),
    live ones first, then by loop name; each followed by its running sub-loops. Reading
    them changes nothing."""
    return BoardReader(loops_dir).rows()


@dataclass(frozen=True)
class _Read:
    """A run as last read: the stat of its files then, and the rows they made."""

    files: tuple[object, ...]
    state: LoopState | None
    live: LiveStatus | None
    group: list[BoardRow]
    first: bool  # listed with the live runs, first
    # its fan-out branches: (run key, label, verdict: "" until it ended)
    branches: tuple[tuple[str, str, str], ...] = ()


class BoardReader:
    """The list's rows, each run read again only when its files changed: its state file,
    event log, options or loop file (a stat each, else nothing is read), or, for a run
    marked running, when its process lives (its clock moves on) or has just gone. A
    folder of 2,000 ended runs costs a stat per file, not a read per run."""

    def __init__(self, loops_dir: Path) -> None:
        self.loops_dir = loops_dir
        self.reads = 0  # runs read from their files (the tests count them)
        self._known: dict[str, _Read] = {}
        self._root = project_root(loops_dir)
        self._listed: dict[str, object] = {}  # a stat of each run file, looked at once a read
        self._loops: dict[str, object] = {}  # a stat of each loop file, the same
        self._parts: frozenset[str] = frozenset()
        self.stopped = threading.Event()  # set: the view is gone, a read under way ends now

    def rows(self) -> list[BoardRow]:
        """The rows now (see `board_rows`)."""
        running = running_dir(self.loops_dir)
        self._listed, self._loops = _listing(running), {}
        self._parts = rotated_parts(self._listed)  # once: each run's are found among them
        known: dict[str, _Read] = {}
        for key, path in state_files(running):
            if self.stopped.is_set():
                break
            read = self._row(key, path)
            if read is not None:
                known[key] = read
        self._known = known
        claimed = {key for read in known.values() for key, _, _ in read.branches}
        ordered = sorted(known.items(), key=lambda item: (not item[1].first, item[0]))
        rows: list[BoardRow] = []
        shown: set[str] = set()
        for key, read in ordered:
            if key not in claimed:
                rows += _with_branches(read, known, 0, shown)
        for key, read in ordered:  # branches of one another (planted files): listed still
            if key not in shown:
                rows += _with_branches(read, known, 0, shown)
        return rows

    def _row(self, key: str, path: Path) -> _Read | None:
        files = tuple(self._listed.get(key + suffix) for suffix in _RUN_FILES)
        last = self._known.get(key)
        if last is None or last.files != files + self._loop_stat(last.state):
            return self._read(key, path, files)
        state = last.state
        if state is None or state.status != Status.RUNNING:
            return last
        live = live_status(state, self.loops_dir)  # a pid and its start time: no file read
        if not live.alive and live == last.live:
            return last  # crashed, as it was
        return self._described(key, state, last.files)

    def _read(self, key: str, path: Path, files: tuple[object, ...]) -> _Read | None:
        self.reads += 1
        info = running_loop(key, path, self._parts)
        if info is None:
            return None
        if info.state is None:
            return _broken(key, files)
        return self._described(key, info.state, files + self._loop_stat(info.state))

    def _described(self, key: str, state: LoopState, files: tuple[object, ...]) -> _Read:
        try:
            described = describe(state, key, self.loops_dir, named=key, count_others=False)
        except LoopError:  # its options planted as a FIFO, say: its screen says why
            return _broken(key, files)
        row = row_of(key, described)
        live = described.live.alive and state.status == Status.RUNNING
        group = [row, *child_rows(row, state.child)]
        fanned = tuple((v.key, v.label, v.verdict) for v in from_captured(state.captured, key))
        return _Read(files, state, described.live, group, live, fanned)

    def _loop_stat(self, state: LoopState | None) -> tuple[object, ...]:
        """The loop file's stat (its iteration limit is shown), where a run's is looked for
        (control.saved_loop_file): from here, and from the project's folder."""
        if state is None or not state.loop_path:
            return ()
        found = []
        for path in (state.loop_path, os.path.join(self._root, state.loop_path)):
            if path not in self._loops:
                self._loops[path] = _stat(path)
            found.append(self._loops[path])
        return tuple(found)


def _with_branches(
    read: _Read,
    known: dict[str, _Read],
    depth: int,
    shown: set[str],
    above: frozenset[str] = frozenset(),
) -> list[BoardRow]:
    """*read*'s rows *depth* levels in, then each of its fan-out branches' runs (their own
    rows, their own branches) one level further in: `└ fix@ab12 #0 parser`; a branch whose
    run has no files (yet, or any more) is a row of its verdict, or `starting`."""
    rows = [replace(row, depth=row.depth + depth) for row in read.group]
    shown.add(read.group[0].key)
    above = above | {read.group[0].key}
    if depth >= _CHILD_DEPTH:
        return rows
    for key, label, verdict in read.branches:
        if key in above:
            continue  # saved files are data: a run is no branch of itself, nor of its own
        found = known.get(key)
        if found is None or key in shown:  # no files, or listed already (a cycle; outside
            # a repository the branches of one loop share its run, one after another)
            rows.append(
                BoardRow(
                    key,
                    depth + 1,
                    f"{key} {label}",
                    "-",
                    verdict or "starting",
                    "-",
                    "-",
                    "",
                    "",
                    "",
                )
            )
            continue
        own = _with_branches(found, known, depth + 1, shown, above)
        own[0] = replace(own[0], loop=f"{own[0].loop} {label}")
        rows += own
    return rows


_RUN_FILES = (STATE_SUFFIX, EVENTS_SUFFIX, OPTIONS_SUFFIX)  # what a row is read from


def _listing(running: Path) -> dict[str, object]:
    """A stat of every file in *running* by name (links not followed), in one pass."""
    found: dict[str, object] = {}
    try:
        entries = list(os.scandir(running))
    except OSError:
        return found
    for entry in entries:
        with contextlib.suppress(OSError):
            st = entry.stat(follow_symlinks=False)
            found[entry.name] = (st.st_ino, st.st_size, st.st_mtime_ns)
    return found


def _broken(key: str, files: tuple[object, ...]) -> _Read:
    """The row of a run whose files cannot be read: `corrupt` (its screen says why)."""
    return _Read(
        files, None, None, [BoardRow(key, 0, key, "-", "corrupt", "-", "-", "", "", "")], False
    )


def _stat(path: str) -> tuple[int, int, int] | None:
    """What tells a file changed: its inode, size and time; None when it cannot be looked at."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def read_only(key: str, loops_dir: Path) -> bool:
    """Whether the run's files belong to another user: then `watch` only looks."""
    try:
        owner = os.stat(run_files(key, loops_dir).state).st_uid
    except OSError:
        return False
    return owner != os.getuid()


def signature(loops_dir: Path) -> tuple[tuple[str, int, int], ...]:
    """Size and time of every file under `.running/`: the list is read again when it
    changes (a stat per file, never a read), or when a live run's clock moves on."""
    running = running_dir(loops_dir)
    found = []
    try:
        entries = list(os.scandir(running))
    except OSError:
        return ()
    for entry in entries:
        try:
            st = entry.stat()
        except OSError:
            continue
        found.append((entry.name, st.st_size, st.st_mtime_ns))
    return tuple(sorted(found))
