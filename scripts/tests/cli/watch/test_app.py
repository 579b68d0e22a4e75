"""`watch` driven by Textual's Pilot against real background runs: the list follows them,
keys stop, approve and resume them, a killed runner shows as crashed."""

from __future__ import annotations

import asyncio
import os
import signal
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from support import llproc
from support.slowdown import scaled

from little_loops.fsm.facts.outcomes import ExitCode
from little_loops.fsm.processes.pids import pid_alive

pytest.importorskip("textual")

from textual.pilot import Pilot  # noqa: E402

from little_loops.cli.watch.app import BoardScreen, WatchApp  # noqa: E402
from little_loops.cli.watch.run_screen import RunScreen  # noqa: E402

STEPS = """\
    name: steps
    initial: first
    states:
      first:
        action: until [ -f go ]; do sleep 0.05; done; echo first done
        next: second
      second:
        action: sleep {marker}
        next: done
      done:
        terminal: true
"""

GATE = """\
    name: gate
    initial: ask
    states:
      ask:
        action_type: approval
        action: Ship it?
        on_success: shipped
        on_failure: done
      shipped:
        action: 'printf %s "${result.note}" > shipped.txt'
        next: done
      done:
        terminal: true
"""


def screen_text(app: WatchApp) -> str:
    """What the terminal shows, as text."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def until(
    pilot: Pilot[int], check: Callable[[], bool], what: str, timeout: float = 20
) -> None:
    """Let the app run until *check* holds; fail after *timeout* idle-machine seconds."""
    deadline = time.monotonic() + scaled(timeout)
    while not check():
        if time.monotonic() > deadline:
            text = screen_text(pilot.app)  # type: ignore[arg-type]
            raise AssertionError(f"timed out waiting for {what}; the screen:\n{text}")
        await pilot.pause(0.1)


def board_row(app: WatchApp, loop: str) -> tuple[str, ...] | None:
    screen = next(s for s in app.screen_stack if isinstance(s, BoardScreen))
    for row in screen.rows:
        if row.loop == loop and row.depth == 0:
            return row.cells()
    return None


def start(root: Path, name: str, *flags: str) -> int:
    started = llproc.console(root, "run", name, "--background", *flags)
    assert started.returncode == ExitCode.OK, started.stderr
    return int(started.stdout)


@pytest.fixture
def project(tmp_path: Path, marker: str) -> Path:
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "steps.yaml").write_text(textwrap.dedent(STEPS.format(marker=marker)))
    (tmp_path / ".loops" / "gate.yaml").write_text(textwrap.dedent(GATE))
    return tmp_path


def test_the_list_follows_a_background_run_as_it_moves_on(project: Path) -> None:
    start(project, "steps")

    async def drive() -> None:
        app = WatchApp(project / ".loops")
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: (board_row(app, "steps") or ())[3:4] == ("first",), "first")
            assert board_row(app, "steps")[2] == "running"  # type: ignore[index]
            (project / "go").touch()
            await until(
                pilot, lambda: (board_row(app, "steps") or ())[3:4] == ("second",), "second"
            )
            # Drawn once the table has been laid out again (the rows come from a thread).
            await until(pilot, lambda: "second" in screen_text(app), "second drawn")
            assert "steps" in screen_text(app)

    asyncio.run(drive())
    assert llproc.console(project, "stop", "steps").returncode == ExitCode.OK


def test_the_stop_key_asks_then_ends_the_run_and_its_processes(project: Path, marker: str) -> None:
    pid = start(project, "steps")
    (project / "go").touch()
    llproc.wait_for(lambda: len(llproc.sleepers(marker)) == 1, timeout=20, what="the sleep")

    async def drive() -> None:
        app = WatchApp(project / ".loops", "steps")
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: "second" in screen_text(app), "the run screen")
            await pilot.press("s")
            await until(pilot, lambda: "Stop run steps (" in screen_text(app), "the question")
            assert pid_alive(pid)  # nothing is killed before the answer
            await pilot.press("y")
            await until(pilot, lambda: not pid_alive(pid), "the runner to end")
            await until(pilot, lambda: "stopped" in screen_text(app), "the run shown stopped")

    asyncio.run(drive())
    assert llproc.sleepers(marker) == []
    status = llproc.console(project, "status", "steps")
    assert "status:    stopped" in status.stdout.splitlines()


def test_approve_answers_the_waiting_gate_with_a_note_and_the_run_goes_on(project: Path) -> None:
    start(project, "gate", "--wait-approval")

    async def drive() -> None:
        app = WatchApp(project / ".loops")
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: (board_row(app, "gate") or ())[2:3] == ("waiting",), "wait")
            assert "approval: Ship it?" in board_row(app, "gate")[7]  # type: ignore[index]
            await pilot.press("a")
            await until(pilot, lambda: "Approve the question" in screen_text(app), "the note")
            await pilot.press(*"lgtm", "enter")
            await until(pilot, lambda: (project / "shipped.txt").exists(), "the run to go on")
            await until(
                pilot, lambda: (board_row(app, "gate") or ())[2:3] == ("completed",), "its end"
            )

    asyncio.run(drive())
    assert (project / "shipped.txt").read_text() == "lgtm"


def test_a_killed_runner_shows_as_crashed_and_the_resume_key_goes_on(
    project: Path, marker: str
) -> None:
    pid = start(project, "steps")
    llproc.wait_for(
        lambda: llproc.state(project, "steps").get("current_state") == "first",
        timeout=20,
        what="the first state",
    )
    os.kill(pid, signal.SIGKILL)  # the runner dies; its action is left behind
    llproc.wait_for(lambda: not pid_alive(pid), timeout=20, what="the runner to die")

    async def drive() -> None:
        app = WatchApp(project / ".loops")
        async with app.run_test(size=(80, 24)) as pilot:
            await until(
                pilot, lambda: (board_row(app, "steps") or ())[2:3] == ("crashed",), "crash"
            )
            assert "crashed" in screen_text(app)
            (project / "go").touch()
            await pilot.press("c")
            await until(
                pilot, lambda: (board_row(app, "steps") or ())[2:3] == ("running",), "resumed"
            )
            await until(pilot, lambda: len(llproc.sleepers(marker)) == 1, "the second state")

    asyncio.run(drive())
    assert llproc.console(project, "stop", "steps").returncode == ExitCode.OK
    assert llproc.sleepers(marker) == []


def test_the_run_screen_shows_the_graph_with_the_current_state_marked(project: Path) -> None:
    start(project, "steps")

    async def drive() -> None:
        app = WatchApp(project / ".loops")
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: board_row(app, "steps") is not None, "the run")
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, RunScreen), "the run screen")
            await until(pilot, lambda: "▶ first → second (next)" in screen_text(app), "graph")
            assert "  second → done (next)" in screen_text(app)
            assert "first: until [ -f go ]" in screen_text(app)  # the live step
            await pilot.press("escape")
            assert isinstance(app.screen, BoardScreen)

    asyncio.run(drive())
    assert llproc.console(project, "stop", "steps").returncode == ExitCode.OK
