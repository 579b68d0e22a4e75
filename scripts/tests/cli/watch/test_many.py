"""`watch` with hundreds of runs: they are read in a thread of their own (keys and drawing
go on while a read is under way), a run whose files did not change is not read again, and
FIFOs or folders among the run files are rows that say so; in Pilot and in real tmux."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import shutil
import subprocess
import sys
import textwrap
import threading
import uuid
from pathlib import Path

import pytest
from support import llproc
from support.slowdown import scaled

from little_loops.fsm.facts.outcomes import ExitCode
from little_loops.fsm.runs.store import StatePersistence

pytest.importorskip("textual")

from cli.watch.test_app import board_row, screen_text, until  # noqa: E402
from textual.widgets import DataTable  # noqa: E402

from little_loops.cli.watch.app import BoardScreen, WatchApp  # noqa: E402

ENDED = "name: x\ninitial: done\nmax_iterations: 9\nstates:\n  done:\n    terminal: true\n"


def many_runs(root: Path, count: int) -> Path:
    """A project with a real ended run `x` and *count* copies of it, `r0`...: its `.loops`."""
    loops = root / ".loops"
    loops.mkdir()
    (loops / "x.yaml").write_text(ENDED)
    assert llproc.console(root, "run", "x").returncode == ExitCode.OK
    running = loops / ".running"
    saved = json.loads((running / "x.state.json").read_text())
    for number in range(count):
        copy(running, saved, f"r{number}")
    return loops


def copy(running: Path, saved: dict[str, object], key: str, **changes: object) -> None:
    """Run *key*: the saved run `x`'s files under another name (and *changes*)."""
    (running / f"{key}.state.json").write_text(json.dumps({**saved, "loop_name": key, **changes}))
    shutil.copyfile(running / "x.events.jsonl", running / f"{key}.events.jsonl")


def board(app: WatchApp) -> BoardScreen:
    return next(s for s in app.screen_stack if isinstance(s, BoardScreen))


def test_many_runs_are_read_off_the_screen_keys_go_on_and_only_a_changed_run_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    count = 300
    loops = many_runs(tmp_path, count)
    running = loops / ".running"
    saved = json.loads((running / "x.state.json").read_text())
    reads: list[tuple[str, int]] = []  # (run, the thread that read it)
    hold, inside, release = threading.Event(), threading.Event(), threading.Event()
    load_state = StatePersistence.load_state

    def counted(self: StatePersistence) -> object:
        reads.append((self.loop_name, threading.get_ident()))
        if hold.is_set() and not inside.is_set():  # the first read once held waits here
            inside.set()
            release.wait(scaled(10))  # bounded: a read on the screen's thread would hang it
            inside.clear()
        return load_state(self)

    monkeypatch.setattr(StatePersistence, "load_state", counted)

    async def drive() -> None:
        app = WatchApp(loops)
        async with app.run_test(size=(100, 30)) as pilot:
            screen_thread = threading.get_ident()
            await until(pilot, lambda: len(board(app).rows) == count + 1, "every run listed")
            table = app.screen.query_one(DataTable)
            # Added a hundred at a time, laid out in between: all there in the end.
            await until(pilot, lambda: table.row_count == count + 1, "every row in the table")
            assert len(reads) == count + 1
            assert screen_thread not in {thread for _, thread in reads}
            before = len(reads)
            hold.set()
            copy(running, saved, "r5", current_state="moved")
            copy(running, saved, "fresh")
            await until(pilot, inside.is_set, "a read of the changed runs under way")
            assert table.cursor_row == 0
            await pilot.press("down")  # handled while the read still waits
            assert table.cursor_row == 1
            assert inside.is_set()
            chosen = board(app).selected()
            release.set()
            await until(
                pilot,
                lambda: (
                    (board_row(app, "r5") or ())[3:4] == ("moved",)
                    and board_row(app, "fresh") is not None
                ),
                "the changed run and the new one",
            )
            assert sorted(run for run, _ in reads[before:]) == ["fresh", "r5"]
            await until(pilot, lambda: table.row_count == count + 2, "the new row in the table")
            assert board(app).selected() == chosen  # the run selected stays selected
            # Drawn whole (not cut to the width the column had): the column grew to fit it.
            await until(pilot, lambda: " fresh " in screen_text(app), "fresh drawn whole")

    asyncio.run(drive())


def test_fifos_and_folders_among_many_run_files_are_rows_and_the_view_stays_up(
    tmp_path: Path,
) -> None:
    loops = many_runs(tmp_path, 50)
    running = loops / ".running"
    saved = json.loads((running / "x.state.json").read_text())
    os.mkfifo(running / "s.state.json")  # reading any of these would wait for a writer
    for key, planted in (
        ("o", "o.options.json"),
        ("e", "e.events.jsonl"),
        ("g", "g.events.1.jsonl"),
    ):
        copy(running, saved, key)
        (running / planted).unlink(missing_ok=True)
        os.mkfifo(running / planted)
    (running / "d.state.json").mkdir()

    async def drive() -> None:
        app = WatchApp(loops)
        async with app.run_test(size=(120, 30)) as pilot:
            await until(pilot, lambda: len(board(app).rows) == 56, "every run listed")
            for key in ("s", "o", "e", "g", "d"):
                assert (board_row(app, key) or ())[2:3] == ("corrupt",), key
            assert (board_row(app, "r7") or ())[2:3] == ("completed",)
            screen = board(app)
            table = screen.query_one(DataTable)
            table.move_cursor(row=[row.key for row in screen.rows].index("o"))
            await pilot.press("enter")
            await until(pilot, lambda: "run o cannot be read" in screen_text(app), "why")
            said = "".join(screen_text(app).split())  # the line wraps where the width says
            assert "o.options.json:isaFIFO" in said
            await pilot.press("escape")
            copy(running, saved, "late")
            await until(pilot, lambda: board_row(app, "late") is not None, "a new run listed")
            assert app.is_running

    asyncio.run(drive())


SLOW = """\
    name: live
    initial: waiting
    states:
      waiting:
        action: sleep {marker}
        next: done
      done:
        terminal: true
"""


@pytest.mark.skipif(
    shutil.which("tmux") is None, reason="needs tmux (scripts/dev test installs it)"
)
def test_in_a_real_tmux_pane_600_runs_and_a_live_one_keys_open_and_the_list_follows(
    tmp_path: Path, marker: str
) -> None:
    from cli.watch.test_init import _tmux, _until

    loops = many_runs(tmp_path, 600)
    running = loops / ".running"
    saved = json.loads((running / "x.state.json").read_text())
    (loops / "live.yaml").write_text(textwrap.dedent(SLOW.format(marker=marker)))
    assert llproc.console(tmp_path, "run", "live", "--background").returncode == ExitCode.OK
    socket = f"ll-watch-{uuid.uuid4().hex[:8]}"
    ll_loop = shlex.quote(str(Path(sys.executable).parent / "ll-loop"))
    script = f"{ll_loop} watch 2>&1; echo watch-exited=$?; sleep 300"
    subprocess.run(
        ["tmux", "-L", socket, "-f", "/dev/null", "new-session", "-d", "-x", "100", "-y", "30",
         "-c", str(tmp_path), "sh", "-c", script],
        check=True, env={**os.environ, "TERM": "xterm-256color"}, timeout=scaled(20),
    )  # fmt: skip
    try:
        pane = lambda: _tmux(socket, "capture-pane", "-p", "-t", "0")  # noqa: E731
        _until(lambda: "live" in pane() and "r105" in pane(), "the runs in the list", pane)
        _tmux(socket, "send-keys", "-t", "0", "Enter")  # the live run: first, selected
        _until(lambda: "recent steps" in pane(), "the live run's screen", pane)
        assert "live  run" in pane()
        _tmux(socket, "send-keys", "-t", "0", "Escape")
        _until(lambda: "LOOP" in pane(), "the list again", pane)
        copy(running, saved, "a-new-run")  # sorts first among the ended runs
        _until(lambda: "a-new-run" in pane(), "the new run in the list", pane)
        _tmux(socket, "send-keys", "-t", "0", "q")
        _until(lambda: "watch-exited=0" in pane(), "watch to quit", pane)
        assert "Traceback" not in pane()
    finally:
        _tmux(socket, "kill-server")
        llproc.console(tmp_path, "stop", "live")


def test_quitting_during_a_read_of_many_runs_ends_the_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A first read of 2,000 runs takes seconds; `q` meanwhile must not wait for the rest
    # of it (the read's thread would keep the process after the terminal was given back).
    loops = many_runs(tmp_path, 100)
    reads: list[str] = []
    inside, release = threading.Event(), threading.Event()
    load_state = StatePersistence.load_state

    def counted(self: StatePersistence) -> object:
        reads.append(self.loop_name)
        if len(reads) == 1:
            inside.set()
            release.wait(scaled(10))
        return load_state(self)

    monkeypatch.setattr(StatePersistence, "load_state", counted)

    async def drive() -> None:
        app = WatchApp(loops)
        async with app.run_test(size=(100, 30)) as pilot:
            await until(pilot, inside.is_set, "the first read under way")
            assert "reading the runs in " in screen_text(app)
            await pilot.press("q")
        release.set()  # the view is gone: the read goes on from its first run

    asyncio.run(drive())  # returns once the read's thread has ended
    assert reads == ["r0"]  # the rest never read
