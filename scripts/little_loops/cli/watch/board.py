"""The runs `watch` lists: every run of the project, its sub-loops under it, as rows of text."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from little_loops.fsm.facts.outcomes import Status
from little_loops.fsm.facts.safetext import one_line
from little_loops.fsm.facts.spend import format_cost
from little_loops.fsm.facts.timefmt import format_duration
from little_loops.fsm.runs.approvals import pending_question
from little_loops.fsm.runs.describe import RunDescription, describe
from little_loops.fsm.runs.store import list_running_loops

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
    rows: list[tuple[bool, str, list[BoardRow]]] = []
    for info in list_running_loops(loops_dir):
        if info.state is None:
            broken = BoardRow(
                info.loop_name, 0, info.loop_name, "-", "corrupt", "-", "-", "", "", ""
            )
            rows.append((False, info.loop_name, [broken]))
            continue
        described = describe(
            info.state, info.loop_name, loops_dir, named=info.loop_name, count_others=False
        )
        row = row_of(info.loop_name, described)
        live = described.live.alive and info.state.status == Status.RUNNING
        rows.append((not live, info.loop_name, [row, *child_rows(row, info.state.child)]))
    rows.sort(key=lambda item: (item[0], item[1]))
    return [row for _, _, group in rows for row in group]


def read_only(key: str, loops_dir: Path) -> bool:
    """Whether the run's files belong to another user: then `watch` only looks."""
    from little_loops.fsm.facts.layout import run_files

    try:
        owner = os.stat(run_files(key, loops_dir).state).st_uid
    except OSError:
        return False
    return owner != os.getuid()


def signature(loops_dir: Path) -> tuple[tuple[str, int, int], ...]:
    """Size and time of every file under `.running/`: the list is read again when it
    changes (a stat per file, never a read), or when a live run's clock moves on."""
    from little_loops.fsm.facts.layout import running_dir

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
