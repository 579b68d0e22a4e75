"""A fuzz of the texts `watch` shows (state names, an approval question, notes) made of
Textual markup and terminal escape sequences: the view stays up and shows each as it is."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import pytest
from support import llproc

from little_loops.fsm.facts.outcomes import ExitCode
from little_loops.fsm.facts.safetext import one_line

pytest.importorskip("textual")

from cli.watch.test_app import board_row, until  # noqa: E402
from cli.watch.test_hostile import notes, toasts  # noqa: E402
from textual.widgets import Static  # noqa: E402

from little_loops.cli.watch.app import WatchApp  # noqa: E402
from little_loops.cli.watch.board import clean  # noqa: E402
from little_loops.cli.watch.run_screen import RunScreen  # noqa: E402

PIECES = [
    "[/x]", "[b]", "[/]", "[link=https://e.invalid]", "[/link]", "[@click=app.quit]",
    "[@click=screen.dismiss(1)]", "[on red]", "[$accent]", "[", "]", "\\", "\\[b]",
    "\x1b[31m", "\x1b]0;title\x07", "\x1b]8;;https://e.invalid\x1b\\", "\x9b2J", "\x07",
    "\r", "$", "{", "}", "'", '"', "é", "‮", "x", " ",
]  # fmt: skip
SEEDS = range(3)
TEXTS_PER_RUN = 6


def texts(seed: int) -> list[str]:
    """TEXTS_PER_RUN hostile texts, made the same way every time for *seed*."""
    rng = random.Random(seed)
    made = ["".join(rng.choice(PIECES) for _ in range(rng.randint(1, 8))) for _ in range(20)]
    unique = [t for t in dict.fromkeys(made) if t.strip() and t != "$current"]
    return unique[:TEXTS_PER_RUN]


def loop_file(names: list[str], question: str) -> str:
    """A loop whose states are named *names* (after its approval state) that waits on
    *question*: JSON is YAML, so every character is written as an escape."""
    states: dict[str, object] = {
        "ask": {"action_type": "approval", "action": question, "on_success": names[0],
                "on_failure": names[0]},
    }  # fmt: skip
    for name, after in zip(names, [*names[1:], "end"], strict=True):
        states[name] = {"action": "true", "next": after}
    states["end"] = {"terminal": True}
    return json.dumps({"name": "fz", "initial": "ask", "states": states})


@pytest.mark.parametrize("seed", SEEDS)
def test_hostile_texts_stay_data_in_every_widget(tmp_path: Path, seed: int) -> None:
    names = texts(seed)
    question = "".join(names)
    loops = tmp_path / ".loops"
    loops.mkdir()
    (loops / "fz.yaml").write_text(loop_file(names, question))
    ran = llproc.console(tmp_path, "run", "fz")
    assert ran.returncode == ExitCode.AWAITING_APPROVAL, ran.stderr

    async def drive() -> None:
        app = WatchApp(loops, "fz")
        async with app.run_test(size=(200, 60), notifications=True) as pilot:
            await until(pilot, lambda: isinstance(app.screen, RunScreen), "the run screen")
            shown = lambda: str(app.screen.query_one("#run", Static).render())  # noqa: E731
            await until(pilot, lambda: "waits for approval" in shown(), "the question")
            for name in names:  # the graph: each state by its name, as it is
                assert clean(name, 60) in shown(), (name, shown())
            assert f"waits for approval: {clean(question)}" in shown()
            # the list's WAITING cell, a DataTable's: the question as it is (cut to a cell)
            assert (board_row(app, "fz") or ())[7:] == (clean(f"approval: {question}"),)
            for name in names:  # a note of each, asked as markup
                app.notify(f"note {name}", markup=True)
            await until(pilot, lambda: len(toasts(app)) >= len(names), "the notes drawn")
            assert notes(app) == [f"note {one_line(name)}" for name in names]
            assert sorted(toasts(app)) == sorted(notes(app))
            await pilot.press("escape")
            await pilot.pause(0.2)
            assert app.is_running  # no text ended or steered the view

    asyncio.run(drive())
