"""`watch` against hostile runs, driven by Textual's Pilot: text of a run, a loop file or a
command is data in every widget (notes too), an answer acts on the run its question named
or on none, and `o` opens only the run's own output files."""

from __future__ import annotations

import asyncio
import json
import shutil
import textwrap
from pathlib import Path

import pytest
from support import llproc

from little_loops.fsm.facts.outcomes import ExitCode
from little_loops.fsm.processes.pids import pid_alive

pytest.importorskip("textual")

from cli.watch.test_app import board_row, screen_text, start, until  # noqa: E402

from little_loops.cli.watch.app import BoardScreen, WatchApp  # noqa: E402
from little_loops.cli.watch.steered import OutputScreen  # noqa: E402

SLOW = """\
    name: {name}
    initial: first
    states:
      first:
        action: sleep {marker}
        next: {target}
      done:
        terminal: true
"""

HOSTILE_STATES = ["[/x]", "[link=file:///etc/passwd]x[/link]", "[@click=app.quit]q[/]", "[b]"]


def notes(app: WatchApp) -> list[str]:
    return [note.message for note in app._notifications]


def toasts(app: WatchApp) -> list[str]:
    """The text the notes on the screen show (as drawn: markup read, if it were)."""
    from textual.widgets._toast import Toast

    return [str(toast.render()) for toast in app.screen.query(Toast)]


@pytest.mark.parametrize("target", HOSTILE_STATES)
def test_a_resume_error_naming_markup_is_a_note_shown_literally(
    tmp_path: Path, marker: str, target: str
) -> None:
    loops = tmp_path / ".loops"
    loops.mkdir()
    (loops / "m.yaml").write_text(
        textwrap.dedent(SLOW.format(name="m", marker=marker, target="done"))
    )
    start(tmp_path, "m")
    llproc.wait_for(lambda: len(llproc.sleepers(marker)) == 1, timeout=30, what="the sleep")
    assert llproc.console(tmp_path, "stop", "m").returncode == ExitCode.OK
    quoted = json.dumps(target)  # the loop file now routes to a state named like markup
    (loops / "m.yaml").write_text(
        textwrap.dedent(SLOW.format(name="m", marker=marker, target=quoted))
    )

    async def drive() -> None:
        app = WatchApp(loops)
        async with app.run_test(size=(120, 30), notifications=True) as pilot:
            await until(pilot, lambda: (board_row(app, "m") or ())[2:3] == ("stopped",), "stop")
            await pilot.press("c")
            await until(pilot, lambda: any("is not a state" in n for n in notes(app)), "note")
            said = next(n for n in notes(app) if "is not a state" in n)
            assert f"next: '{target}' is not a state" in said
            await until(pilot, lambda: any("is not a state" in t for t in toasts(app)), "drawn")
            assert any(f"next: '{target}' is not a state" in t for t in toasts(app))
            assert app.is_running  # the view stays up
            await pilot.press("q")

    asyncio.run(drive())
    assert llproc.sleepers(marker) == []  # nothing was resumed


def test_markup_and_escapes_in_a_note_are_shown_as_they_are(tmp_path: Path) -> None:
    (tmp_path / ".loops").mkdir()
    text = "[/x] [link=https://example.invalid]l[/link] [@click=app.quit]q[/] \x1b[31mred\x07"

    async def drive() -> None:
        app = WatchApp(tmp_path / ".loops")
        async with app.run_test(size=(120, 30), notifications=True) as pilot:
            app.notify(text, markup=True)  # asked for markup: a note of the view never is
            shown = (
                "[/x] [link=https://example.invalid]l[/link] [@click=app.quit]q[/] "
                "\\x1b[31mred\\x07"
            )
            await until(pilot, lambda: bool(toasts(app)), "the note drawn")
            assert notes(app) == [shown]
            assert toasts(app) == [shown]
            assert app.is_running

    asyncio.run(drive())


TWO = """\
    name: {name}
    scope: [{name}]
    initial: first
    states:
      first:
        action: sleep {marker}
        next: done
      done:
        terminal: true
"""


def _two_runs(tmp_path: Path, marker: str) -> tuple[int, int]:
    loops = tmp_path / ".loops"
    loops.mkdir()
    for name in ("aa", "bb"):
        (loops / f"{name}.yaml").write_text(textwrap.dedent(TWO.format(name=name, marker=marker)))
    pids = start(tmp_path, "aa"), start(tmp_path, "bb")
    llproc.wait_for(lambda: len(llproc.sleepers(marker)) == 2, timeout=30, what="two sleeps")
    return pids


def _forget(tmp_path: Path, name: str) -> None:
    """The run *name* ends and its files go away (as `ll-loop` leaves none of a run behind
    once it is removed)."""
    assert llproc.console(tmp_path, "stop", name).returncode == ExitCode.OK
    for path in (tmp_path / ".loops" / ".running").glob(f"{name}.*"):
        path.unlink()


def _select(app: WatchApp, key: str) -> None:
    board = next(s for s in app.screen_stack if isinstance(s, BoardScreen))
    board.query_one("DataTable").move_cursor(row=[r.key for r in board.rows].index(key))  # type: ignore[attr-defined]


def test_stop_acts_on_the_run_its_question_named_or_on_none(tmp_path: Path, marker: str) -> None:
    aa, bb = _two_runs(tmp_path, marker)

    async def drive() -> None:
        app = WatchApp(tmp_path / ".loops")
        async with app.run_test(size=(120, 30), notifications=True) as pilot:
            await until(pilot, lambda: board_row(app, "bb") is not None, "both runs")
            await until(pilot, lambda: board_row(app, "aa") is not None, "both runs")
            _select(app, "bb")
            await pilot.press("s")
            await until(pilot, lambda: "Stop run bb" in screen_text(app), "the question")
            _forget(tmp_path, "bb")  # bb goes away while the question is open
            await until(pilot, lambda: board_row(app, "bb") is None, "bb gone from the list")
            await pilot.press("y")
            await until(
                pilot, lambda: any("is gone; nothing done" in n for n in notes(app)), "note"
            )

    asyncio.run(drive())
    assert not pid_alive(bb)
    assert pid_alive(aa)  # the run the question did not name goes on
    assert len(llproc.sleepers(marker)) == 1
    assert llproc.state(tmp_path, "aa")["status"] == "running"


GATE = """\
    name: {name}
    scope: [{name}]
    initial: ask
    states:
      ask:
        action_type: approval
        action: Ship {name}?
        on_success: shipped
        on_failure: done
      shipped:
        action: 'printf %s "${{result.note}}" > {name}.txt'
        next: done
      done:
        terminal: true
"""


@pytest.mark.parametrize("key", ["a", "r"], ids=["approve", "reject"])
def test_a_note_goes_to_the_run_its_question_named_or_to_none(tmp_path: Path, key: str) -> None:
    loops = tmp_path / ".loops"
    loops.mkdir()
    for name in ("aa", "bb"):
        (loops / f"{name}.yaml").write_text(textwrap.dedent(GATE.format(name=name)))
        start(tmp_path, name, "--wait-approval")

    async def drive() -> None:
        app = WatchApp(loops)
        async with app.run_test(size=(120, 30), notifications=True) as pilot:
            for name in ("aa", "bb"):
                await until(
                    pilot, lambda n=name: (board_row(app, n) or ())[2:3] == ("waiting",), "wait"
                )
            _select(app, "bb")
            await pilot.press(key)
            await until(pilot, lambda: "question run bb" in screen_text(app), "the note")
            _forget(tmp_path, "bb")
            await until(pilot, lambda: board_row(app, "bb") is None, "bb gone from the list")
            await pilot.press(*"ok", "enter")
            await until(
                pilot, lambda: any("is gone; nothing done" in n for n in notes(app)), "note"
            )

    try:
        asyncio.run(drive())
        assert llproc.state(tmp_path, "aa")["status"] == "running"  # still waits on its question
        assert not (loops / ".running" / "aa.approval.json").exists()
        assert not (tmp_path / "aa.txt").exists()
    finally:  # `aa` waits on its question for ever: a failed test must not leave it running
        assert llproc.console(tmp_path, "stop", "aa").returncode == ExitCode.OK


def test_o_opens_only_an_output_file_of_the_run(tmp_path: Path) -> None:
    loops = tmp_path / ".loops"
    loops.mkdir()
    (loops / "talk.yaml").write_text(
        "name: talk\ninitial: done\nstates:\n  done:\n    action: echo own\n    terminal: true\n"
    )
    assert llproc.console(tmp_path, "run", "talk").returncode == ExitCode.OK
    secret = tmp_path / "secret.out"
    secret.write_text("not the run's\n")
    log = loops / ".running" / "talk.events.jsonl"
    events = [json.loads(line) for line in log.read_text().splitlines()]
    own = next(e["output_path"] for e in events if e.get("event") == "action_start")
    shutil.copy(own, loops / ".running" / "other.done.out")  # another run's output file
    for planted in (str(secret), str(loops / ".running" / "other.done.out")):
        for event in events:
            if event.get("event") == "action_start":
                event["output_path"] = planted
        log.write_text("".join(json.dumps(e) + "\n" for e in events))

        async def drive() -> None:
            app = WatchApp(loops, "talk")
            async with app.run_test(size=(80, 24), notifications=True) as pilot:
                await until(pilot, lambda: "talk" in screen_text(app), "the run")
                await pilot.press("o")
                await until(
                    pilot,
                    lambda: bool(notes(app)) or isinstance(app.screen, OutputScreen),
                    "a note or the output",
                )
                assert not isinstance(app.screen, OutputScreen)
                assert notes(app) == ["no step output yet"]

        asyncio.run(drive())
        done = llproc.console(tmp_path, "logs", "talk")
        assert done.returncode == ExitCode.FAILED
        assert "not the run's" not in done.stdout


@pytest.mark.skipif(
    shutil.which("tmux") is None, reason="needs tmux (scripts/dev test installs it)"
)
def test_in_a_real_tmux_pane_a_note_of_markup_is_shown_and_watch_stays_up(
    tmp_path: Path, marker: str
) -> None:
    import os
    import shlex
    import subprocess
    import sys
    import uuid

    from cli.watch.test_init import _tmux, _until
    from support.slowdown import scaled

    loops = tmp_path / ".loops"
    loops.mkdir()
    (loops / "m.yaml").write_text(
        textwrap.dedent(SLOW.format(name="m", marker=marker, target="done"))
    )
    start(tmp_path, "m")
    llproc.wait_for(lambda: len(llproc.sleepers(marker)) == 1, timeout=30, what="the sleep")
    assert llproc.console(tmp_path, "stop", "m").returncode == ExitCode.OK
    (loops / "m.yaml").write_text(
        textwrap.dedent(SLOW.format(name="m", marker=marker, target='"[/x]"'))
    )
    socket = f"ll-watch-{uuid.uuid4().hex[:8]}"
    ll_loop = shlex.quote(str(Path(sys.executable).parent / "ll-loop"))
    script = f"{ll_loop} watch 2>&1; echo watch-exited=$?; sleep 300"
    env = {**os.environ, "TERM": "xterm-256color"}
    subprocess.run(
        ["tmux", "-L", socket, "-f", "/dev/null", "new-session", "-d", "-x", "200", "-y", "30",
         "-c", str(tmp_path), "sh", "-c", script],
        check=True, env=env, timeout=scaled(20),
    )  # fmt: skip
    try:
        pane = lambda: _tmux(socket, "capture-pane", "-p", "-J", "-t", "0")  # noqa: E731
        _until(lambda: "stopped" in pane(), "the stopped run in the list", pane)
        _tmux(socket, "send-keys", "-t", "0", "c")
        _until(lambda: "is not a state" in pane(), "the resume error as a note", pane)
        shown = pane()
        assert "'[/x]'" in shown, shown
        assert "watch-exited" not in shown  # the view is still up
        assert "MarkupError" not in shown
        _tmux(socket, "send-keys", "-t", "0", "q")
        _until(lambda: "watch-exited=0" in pane(), "watch to quit", pane)
        assert "Traceback" not in pane()
    finally:
        _tmux(socket, "kill-server")
    assert llproc.sleepers(marker) == []


def test_a_fifo_among_the_run_files_is_said_and_the_view_stays_up(tmp_path: Path) -> None:
    import os

    loops = tmp_path / ".loops"
    loops.mkdir()
    (loops / "x.yaml").write_text("name: x\ninitial: done\nstates:\n  done:\n    terminal: true\n")
    assert llproc.console(tmp_path, "run", "x").returncode == ExitCode.OK
    events = loops / ".running" / "x.events.jsonl"
    events.unlink()
    os.mkfifo(events)  # opening it to read would wait for a writer forever
    os.mkfifo(loops / ".running" / "y.state.json")

    async def drive() -> None:
        app = WatchApp(loops)
        async with app.run_test(size=(120, 30), notifications=True) as pilot:
            await until(pilot, lambda: (board_row(app, "y") or ())[2:3] == ("corrupt",), "y")
            _select(app, "x")
            await pilot.press("enter")
            await until(pilot, lambda: "run x cannot be read" in screen_text(app), "why")
            said = "".join(screen_text(app).split())  # the line wraps where the width says
            assert "x.events.jsonl:isaFIFO,notafilell-loopwrote" in said
            assert app.is_running

    asyncio.run(drive())


@pytest.mark.skipif(
    shutil.which("tmux") is None, reason="needs tmux (scripts/dev test installs it)"
)
def test_in_a_real_tmux_pane_stop_acts_on_the_run_its_question_named_or_on_none(
    tmp_path: Path, marker: str
) -> None:
    import os
    import shlex
    import subprocess
    import sys
    import uuid

    from cli.watch.test_init import _tmux, _until
    from support.slowdown import scaled

    aa, bb = _two_runs(tmp_path, marker)
    socket = f"ll-watch-{uuid.uuid4().hex[:8]}"
    ll_loop = shlex.quote(str(Path(sys.executable).parent / "ll-loop"))
    script = f"{ll_loop} watch 2>&1; echo watch-exited=$?; sleep 300"
    subprocess.run(
        ["tmux", "-L", socket, "-f", "/dev/null", "new-session", "-d", "-x", "120", "-y", "30",
         "-c", str(tmp_path), "sh", "-c", script],
        check=True, env={**os.environ, "TERM": "xterm-256color"}, timeout=scaled(20),
    )  # fmt: skip
    try:
        pane = lambda: _tmux(socket, "capture-pane", "-p", "-J", "-t", "0")  # noqa: E731
        rows = lambda: [line.split()[0] for line in pane().splitlines() if line.split()[:1]]  # noqa: E731
        _until(lambda: {"aa", "bb"} <= set(rows()), "both runs in the list", pane)
        assert rows()[1:3] == ["aa", "bb"]  # under the header, by name: aa is selected
        _tmux(socket, "send-keys", "-t", "0", "Down")
        _tmux(socket, "send-keys", "-t", "0", "s")
        _until(lambda: "Stop run bb" in pane(), "the question", pane)
        _forget(tmp_path, "bb")  # bb goes away while the question is open
        _until(lambda: "bb" not in rows(), "bb gone from the list", pane)
        _tmux(socket, "send-keys", "-t", "0", "y")
        _until(lambda: "is gone; nothing done" in pane(), "the note", pane)
        assert "watch-exited" not in pane()
    finally:
        _tmux(socket, "kill-server")
    assert not pid_alive(bb)
    assert pid_alive(aa)  # the run selected when the question closed goes on
    assert llproc.state(tmp_path, "aa")["status"] == "running"
    assert llproc.console(tmp_path, "stop", "aa").returncode == ExitCode.OK
