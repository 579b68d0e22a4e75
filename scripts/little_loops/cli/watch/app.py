"""The `watch` application: the list of every run, and a run's screen, live from its files."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.cells import cell_len
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.coordinate import Coordinate
from textual.notifications import SeverityLevel
from textual.widgets import DataTable, Footer, Static

from little_loops.cli.watch import board, steering
from little_loops.cli.watch.dialogs import DIALOG_CSS
from little_loops.cli.watch.run_screen import RunScreen
from little_loops.cli.watch.steered import SteeredScreen
from little_loops.fsm.facts.layout import running_dir
from little_loops.fsm.facts.runfile import display_path

REFRESH_SECONDS = 0.5  # how often the files are looked at (a stat each)
CLOCK_SECONDS = 2.0  # a live run's elapsed time moves on: the list is read again this often
ROWS_AT_ONCE = 100  # rows added to the table in one go (it lays them out when idle)
ADD_PAUSE_SECONDS = 0.01  # between two goes: the table lays out, keys are handled
NOTE_CHARS = 1000  # the most of one note shown (a command's error may be long)


class BoardScreen(SteeredScreen):
    """Every run of the project, a line each, its sub-loops under it."""

    BINDINGS = [Binding("enter", "open", "open", show=False), Binding("q", "app.quit", "quit")]

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[board.BoardRow] = []
        self.reader: board.BoardReader | None = None  # made on mount (the app knows where)
        self._seen: tuple[tuple[str, int, int], ...] | None = None
        self._read_at = 0.0
        self._reading = False  # a read is under way in its thread
        self._again = False  # read again (forced) when it is done
        self._adding: list[tuple[str, ...]] = []  # rows still to add to the table
        self._keep: int | None = None  # the row to select once it is added
        self._next: list[board.BoardRow] | None = None  # rows read while adding: shown next

    def compose(self) -> ComposeResult:
        yield DataTable(id="runs", cursor_type="row", zebra_stripes=False)
        yield Static(id="message")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns(*board.COLUMNS)
        self.reader = board.BoardReader(self.viewer.loops_dir)
        where = display_path(running_dir(self.viewer.loops_dir))
        self.query_one("#message", Static).update(Text(f"reading the runs in {where}/…"))
        self.reload(force=True)
        self.set_interval(REFRESH_SECONDS, self.reload)

    def on_unmount(self) -> None:
        if self.reader is not None:  # `q` during a first read of 2,000 runs: quit at once
            self.reader.stopped.set()

    def selected(self) -> str | None:
        table = self.query_one(DataTable)
        if not self.rows or not 0 <= table.cursor_row < len(self.rows):
            return None
        return self.rows[table.cursor_row].key

    def reload(self, force: bool = False) -> None:
        """Read the runs again when a file under `.running/` changed, or a live run's
        clock moved on; else only the folder is looked at. The files are looked at and
        read in a thread of their own: keys and drawing never wait on a folder of 2,000
        runs (or on a file that will not open); one read at a time."""
        if not self.query(DataTable) or self.reader is None:  # not composed (or gone)
            return
        if self._reading:
            self._again = self._again or force
            return
        self._reading = True
        live = any(row.status in ("running", "waiting") for row in self.rows)
        self.run_worker(lambda: self._read(force, live), thread=True, group="board")

    def _read(self, force: bool, live: bool) -> None:
        """In the read's thread: the rows when the runs are to be read again, else None."""
        rows = None
        try:
            seen = board.signature(self.viewer.loops_dir)
            stale = live and time.monotonic() - self._read_at >= CLOCK_SECONDS
            if self.reader is not None and (force or seen != self._seen or stale):
                self._seen, self._read_at = seen, time.monotonic()
                rows = self.reader.rows()
        finally:
            with contextlib.suppress(RuntimeError):  # the app has ended meanwhile
                self.app.call_from_thread(self._read_done, rows)

    def _read_done(self, rows: list[board.BoardRow] | None) -> None:
        self._reading = False
        if rows is not None and self.query(DataTable):
            self.show(rows)
        if self._again:
            self._again = False
            self.reload(force=True)

    def show(self, rows: list[board.BoardRow]) -> None:
        """Show *rows*: the same runs in the same order have their changed cells replaced
        (a live run's clock: 2 cells, not 2,000 rows laid out again); else the table is
        filled anew, ROWS_AT_ONCE rows at a time (rows that come meanwhile wait for it)."""
        if self._adding:
            self._next = rows
            return
        table = self.query_one(DataTable)
        cells = [row.cells() for row in rows]
        shown = [row.cells() for row in self.rows]
        if rows and [(r.key, r.depth) for r in rows] == [(r.key, r.depth) for r in self.rows]:
            self.rows = rows
            columns = table.ordered_columns
            for y, (line, was) in enumerate(zip(cells, shown, strict=True)):
                for x, (cell, before) in enumerate(zip(line, was, strict=True)):
                    if cell != before:  # the column first made wide enough (see below)
                        columns[x].content_width = max(columns[x].content_width, cell_len(cell))
                        table.update_cell_at(Coordinate(y, x), Text(cell))
            return
        keep = self.selected()
        self.rows = rows
        table.clear()
        # Each column as wide as its widest cell, set before the rows are drawn: the table
        # would measure them only once idle, after drawing (and keeping) them cut short.
        for number, column in enumerate(table.ordered_columns):
            column.content_width = max(cell_len(line[number]) for line in [board.COLUMNS, *cells])
        keys = [row.key for row in rows]
        self._keep = keys.index(keep) if keep in keys else None
        self._adding = cells
        self._add_rows()
        where = display_path(running_dir(self.viewer.loops_dir))
        empty = f"no runs in {where}/ yet" if not rows else ""
        self.query_one("#message", Static).update(Text(empty))

    def _add_rows(self) -> None:
        """Add the next ROWS_AT_ONCE rows to the table; the rest once it has laid them out
        (keys and drawing in between: 2,000 rows at once would hold the screen)."""
        if not self.query(DataTable):
            return
        table = self.query_one(DataTable)
        lines, self._adding = self._adding[:ROWS_AT_ONCE], self._adding[ROWS_AT_ONCE:]
        for line in lines:
            table.add_row(*(Text(cell) for cell in line))
        if self._keep is not None and self._keep < table.row_count:  # selected as it was
            table.move_cursor(row=self._keep)
            self._keep = None
        if self._adding:
            self.set_timer(ADD_PAUSE_SECONDS, self._add_rows)
        elif self._next is not None:
            rows, self._next = self._next, None
            self.show(rows)

    def on_data_table_row_selected(self, message: DataTable.RowSelected) -> None:
        self.action_open()

    def action_open(self) -> None:
        key = self.selected()
        if key is not None:
            self.app.push_screen(RunScreen(key))


class WatchApp(App[int]):
    """`ll-loop watch`: the runs of the project in *loops_dir*; *key*: open that run."""

    TITLE = "ll-loop watch"
    CSS = (
        DIALOG_CSS
        + """
    #message { height: auto; }
    DataTable { height: 1fr; }
    """
    )

    def __init__(self, loops_dir: Path, key: str | None = None, **kwargs: Any) -> None:
        # Under NO_COLOR, Textual drops colours only from a terminal-colour (ANSI) app; its
        # own palette would be turned into shades of grey, which are colours too.
        kwargs.setdefault("ansi_color", "NO_COLOR" in os.environ)
        super().__init__(**kwargs)
        self.loops_dir = loops_dir
        self.key = key

    def on_mount(self) -> None:
        self.push_screen(BoardScreen())
        if self.key is not None:
            self.push_screen(RunScreen(self.key))

    def steer(self, work: str, run: tuple[str, str | None] | None, *args: object) -> None:
        """Do *work* (a function of `steering`) to *run* (its key, and its id when the key
        was pressed: it acts on that run or on none) in a thread, then say how it went and
        read the runs again."""
        if run is None:
            return
        key, run_id = run
        why = steering.refused(key, self.loops_dir)
        if why is not None:
            self.notify(why, severity="warning")
            return
        self.notify(f"{work.replace('_', ' ')} {board.clean(key)}…")
        act = getattr(steering, work)
        self.run_worker(
            lambda: self._steered(lambda: act(key, self.loops_dir, *args, run_id=run_id)),
            thread=True,
            group="steer",
        )

    def _steered(self, work: Callable[[], tuple[int, str]]) -> None:
        code, said = work()
        self.call_from_thread(self._said, code, said)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Every note of the view, shown as data: what it says comes from runs, loop files
        and commands, so it is never read as markup (`[/x]`, `[link=...]`, `[@click=...]`)
        and its control characters are shown escaped."""
        del markup  # never: whoever asks
        super().notify(
            board.clean(message, NOTE_CHARS),
            title=board.clean(title),
            severity=severity,
            timeout=timeout,
            markup=False,
        )

    def _said(self, code: int, said: str) -> None:
        self.notify(said, severity="information" if code == 0 else "error", timeout=8)
        for screen in self.screen_stack:
            if isinstance(screen, BoardScreen | RunScreen):
                screen.reload(force=True)
