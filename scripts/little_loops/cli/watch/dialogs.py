"""The questions `watch` asks before it acts: a yes/no before anything is killed, a note."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

DIALOG_CSS = """
ConfirmDialog, NoteDialog { align: center middle; }
#dialog { width: 70; height: auto; border: round $accent; padding: 0 1; background: $surface; }
"""


class ConfirmDialog(ModalScreen[bool]):
    """Ask *question*; y answers yes, n or Escape no."""

    BINDINGS = [
        Binding("y", "answer(True)", "yes"),
        Binding("n", "answer(False)", "no"),
        Binding("escape", "answer(False)", "no", show=False),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text(self.question))
            yield Static(Text("y: yes   n: no"))

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class NoteDialog(ModalScreen[str | None]):
    """Ask for a note (may be empty); Enter gives it, Escape gives up (None)."""

    BINDINGS = [Binding("escape", "give_up", "cancel")]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text(self.question))
            yield Input(placeholder="a note for the loop (Enter: send, Escape: cancel)")

    def on_input_submitted(self, message: Input.Submitted) -> None:
        self.dismiss(message.value)

    def action_give_up(self) -> None:
        self.dismiss(None)
