"""The keys that steer a run, shared by the list and the run screen; the full-output screen."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Protocol, runtime_checkable

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from little_loops.cli.watch.board import clean
from little_loops.cli.watch.detail import output_tail
from little_loops.cli.watch.dialogs import ConfirmDialog, NoteDialog


@runtime_checkable
class Viewer(Protocol):
    """What a steered screen needs of its app (the `watch` app): the project, and a way to
    act on a run."""

    loops_dir: Path

    def steer(self, work: str, key: str | None, *args: object) -> None: ...


FULL_OUTPUT_WINDOW = 1024 * 1024  # the end of a step's output file the output screen shows
FULL_OUTPUT_LINES = 5000

STEER_KEYS: list[BindingType] = [
    Binding("s", "stop", "stop"),
    Binding("a", "answer(True)", "approve"),
    Binding("r", "answer(False)", "reject"),
    Binding("c", "resume", "resume"),
    Binding("o", "output", "output"),
    Binding("h", "report", "html"),
]


class SteeredScreen(Screen[None]):
    """A screen with a run selected (`selected`), and the keys that act on it."""

    BINDINGS: ClassVar[list[BindingType]] = list(STEER_KEYS)

    @property
    def viewer(self) -> Viewer:
        app = self.app
        assert isinstance(app, Viewer)
        return app

    def selected(self) -> str | None:
        """The key of the run the keys act on (None: no run)."""
        raise NotImplementedError

    def selected_output(self) -> str | None:
        """The output file of the selected run's latest step, if it has one."""
        from little_loops.cli.logs import latest_step

        key = self.selected()
        if key is None:
            return None
        start = latest_step(key, None, self.viewer.loops_dir)
        path = start.get("output_path") if start is not None else None
        return path if isinstance(path, str) else None

    def _act(self, work: str, *args: object) -> None:
        self.viewer.steer(work, self.selected(), *args)

    def action_stop(self) -> None:
        key = self.selected()
        if key is None:
            return
        question = f"Stop run {clean(key)}? Its action and what it started are killed."
        self.app.push_screen(ConfirmDialog(question), self._stop_if)

    def _stop_if(self, yes: bool | None) -> None:
        if yes:
            self._act("stop")

    def action_answer(self, approve: bool) -> None:
        key = self.selected()
        if key is None:
            return
        verb = "Approve" if approve else "Reject"
        self.app.push_screen(
            NoteDialog(f"{verb} the question run {clean(key)} waits on, with a note:"),
            lambda note: None if note is None else self._act("answer", approve, note),
        )

    def action_resume(self) -> None:
        if self.selected() is not None:
            self._act("resume")

    def action_report(self) -> None:
        if self.selected() is not None:
            self._act("html_report")

    def action_output(self) -> None:
        path = self.selected_output()
        if path is None:
            self.notify("no step output yet")
            return
        self.app.push_screen(OutputScreen(path))


class OutputScreen(Screen[None]):
    """A step's full output (its last FULL_OUTPUT_LINES lines), escaped; Escape goes back."""

    BINDINGS = [Binding("escape", "app.pop_screen", "back"), Binding("q", "app.pop_screen", "back")]

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path

    def compose(self) -> ComposeResult:
        lines = output_tail(self.path, None, FULL_OUTPUT_LINES, window=FULL_OUTPUT_WINDOW)
        head = f"{clean(Path(self.path).name)} (last {len(lines)} lines)"
        with VerticalScroll():
            yield Static(Text(head, style="bold"))
            yield Static(Text("\n".join(lines) or "(empty)"))
        yield Footer()
