"""The questions `watch` asks: y/n before a kill (Escape is no), a note (Escape gives up)."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("textual")

from textual.app import App  # noqa: E402

from little_loops.cli.watch.dialogs import ConfirmDialog, NoteDialog  # noqa: E402


def answers(dialog: ConfirmDialog | NoteDialog, *keys: str) -> list[object]:
    got: list[object] = []

    class Host(App[None]):
        def on_mount(self) -> None:
            self.push_screen(dialog, got.append)

    async def drive() -> None:
        async with Host().run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            await pilot.press(*keys)
            await pilot.pause()

    asyncio.run(drive())
    return got


@pytest.mark.parametrize(("key", "yes"), [("y", True), ("n", False), ("escape", False)])
def test_confirm_answers(key: str, yes: bool) -> None:
    assert answers(ConfirmDialog("Stop?"), key) == [yes]


def test_confirm_ignores_other_keys() -> None:
    assert answers(ConfirmDialog("Stop?"), "x", "enter", "s") == []


def test_a_note_is_sent_with_enter_and_escape_gives_up() -> None:
    assert answers(NoteDialog("Note?"), "o", "k", "enter") == ["ok"]
    assert answers(NoteDialog("Note?"), "o", "escape") == [None]
