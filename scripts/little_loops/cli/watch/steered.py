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

from little_loops.cli.watch import steering
from little_loops.cli.watch.board import clean
from little_loops.cli.watch.detail import output_tail
from little_loops.cli.watch.dialogs import ConfirmDialog, NoteDialog


@runtime_checkable
class Viewer(Protocol):
    """What a steered screen needs of its app (the `watch` app): the project, and a way to
    act on a run."""

    loops_dir: Path

    def steer(self, work: str, run: tuple[str, str | None] | None, *args: object) -> None: ...


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
        """The output file of the selected run's latest step, if it has one of the run's
        own (an event naming any other file is data, never opened)."""
        from little_loops.cli.logs import latest_step
        from little_loops.fsm.facts.owned import run_output

        key = self.selected()
        if key is None:
            return None
        start = latest_step(key, None, self.viewer.loops_dir)
        path = start.get("output_path") if start is not None else None
        return run_output(path, key, self.viewer.loops_dir)

    def chosen(self) -> tuple[str, str | None] | None:
        """The run a key press names, read when the key is pressed: its key and its id. A
        question asked about it is answered for that run, or for none."""
        key = self.selected()
        if key is None:
            return None
        return key, steering.run_id_of(key, self.viewer.loops_dir)

    def action_stop(self) -> None:
        run = self.chosen()
        if run is None:
            return
        question = f"Stop run {_named(run)}? Its action and what it started are killed."
        self.app.push_screen(
            ConfirmDialog(question), lambda yes: self.viewer.steer("stop", run) if yes else None
        )

    def action_answer(self, approve: bool) -> None:
        run = self.chosen()
        if run is None:
            return
        verb = "Approve" if approve else "Reject"
        self.app.push_screen(
            NoteDialog(f"{verb} the question run {_named(run)} waits on, with a note:"),
            lambda note: None if note is None else self.viewer.steer("answer", run, approve, note),
        )

    def action_resume(self) -> None:
        self.viewer.steer("resume", self.chosen())

    def action_report(self) -> None:
        self.viewer.steer("html_report", self.chosen())

    def action_output(self) -> None:
        path = self.selected_output()
        if path is None:
            self.notify("no step output yet")
            return
        self.app.push_screen(OutputScreen(path))


def _named(run: tuple[str, str | None]) -> str:
    key, run_id = run
    return clean(key if run_id is None else f"{key} ({run_id})")


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
