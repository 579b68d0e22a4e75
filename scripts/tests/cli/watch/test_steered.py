"""The keys on a run: `o` shows the latest step's whole output (its end), escaped."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from support import llproc

from little_loops.fsm.facts.outcomes import ExitCode

pytest.importorskip("textual")

from little_loops.cli.watch.app import WatchApp  # noqa: E402
from little_loops.cli.watch.steered import OutputScreen  # noqa: E402


def test_o_opens_the_output_of_the_latest_step(tmp_path: Path) -> None:
    from cli.watch.test_app import screen_text, until

    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "talk.yaml").write_text(
        "name: talk\ninitial: done\nstates:\n  done:\n"
        "    action: seq 1 3000; printf 'bell\\a\\n'\n    terminal: true\n"
    )
    assert llproc.console(tmp_path, "run", "talk").returncode == ExitCode.OK

    async def drive() -> None:
        app = WatchApp(tmp_path / ".loops", "talk")
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: "talk" in screen_text(app), "the run")
            await pilot.press("o")
            await until(pilot, lambda: isinstance(app.screen, OutputScreen), "the output")
            await until(pilot, lambda: "(last 3001 lines)" in screen_text(app), "its lines")
            await pilot.press("end")
            await until(pilot, lambda: "bell\\x07" in screen_text(app), "its end, escaped")

    asyncio.run(drive())


def test_o_without_output_says_so(tmp_path: Path) -> None:
    from cli.watch.test_app import until

    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "ask.yaml").write_text(
        "name: ask\ninitial: q\nstates:\n  q:\n    action_type: approval\n    action: Go?\n"
        "    on_success: done\n    on_failure: done\n  done:\n    terminal: true\n"
    )
    assert llproc.console(tmp_path, "run", "ask").returncode == ExitCode.AWAITING_APPROVAL

    async def drive() -> None:
        app = WatchApp(tmp_path / ".loops", "ask")
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause(0.5)
            await pilot.press("o")
            await until(pilot, lambda: bool(app._notifications), "the note")
            assert [n.message for n in app._notifications] == ["no step output yet"]

    asyncio.run(drive())
