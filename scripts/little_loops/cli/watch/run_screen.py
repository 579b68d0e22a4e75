"""The run screen of `watch`: a run's graph, live step, steps, branches, captures, cost, stalls."""

from __future__ import annotations

import os
from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Footer, Static

from little_loops.cli.watch.board import clean
from little_loops.cli.watch.detail import CURRENT, VISITED, RunView, load_view
from little_loops.cli.watch.steered import SteeredScreen
from little_loops.fsm.facts.errors import LoopError
from little_loops.fsm.facts.layout import run_files

REFRESH_SECONDS = 0.5
_MARKS = {CURRENT: ("▶ ", "bold reverse"), VISITED: ("• ", "bold"), "other": ("  ", "")}


class RunScreen(SteeredScreen):
    """One run, read again when its state file, its log or its step's output changes."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "back"),
        Binding("q", "app.quit", "quit"),
    ]

    def __init__(self, key: str) -> None:
        super().__init__()
        self.key = key
        self.view: RunView | None = None
        self._seen: tuple[object, ...] = ()

    def selected(self) -> str | None:
        return self.key

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(id="run")
        yield Footer()

    def on_mount(self) -> None:
        self.reload(force=True)
        self.set_interval(REFRESH_SECONDS, self.reload)

    def _signature(self) -> tuple[object, ...]:
        files = run_files(self.key, self.viewer.loops_dir)
        paths: list[Path | str] = [files.state, files.events]
        if self.view is not None and self.view.output_path:
            paths.append(self.view.output_path)
        found: list[object] = []
        for path in paths:
            try:
                st = os.stat(path)
            except OSError:
                found.append(None)
                continue
            found.append((st.st_size, st.st_mtime_ns))
        return tuple(found)

    def reload(self, force: bool = False) -> None:
        """Read the run again when one of its files changed (a stat each, until then)."""
        shown = self.query("#run").results(Static)
        seen = self._signature()
        if not force and seen == self._seen:
            return
        self._seen = seen
        try:
            self.view, problem = load_view(self.key, self.viewer.loops_dir), None
        except LoopError as exc:  # a run file planted as a link or a FIFO, say: said, not read
            self.view, problem = None, str(exc)
        for widget in shown:  # none while the screen is not composed (yet, or any more)
            widget.update(render_view(self.view, self.key, problem))


def render_view(view: RunView | None, key: str, problem: str | None = None) -> Text:
    """The run screen's text: its sections, the graph's current state and path marked
    (*problem*: why the run cannot be read)."""
    text = Text()
    if view is None:
        said = f"cannot be read: {problem}" if problem else "has no saved state"
        text.append(clean(f"run {key} {said}", 1000))
        return text
    text.append(view.header + "\n", style="bold")
    text.append(view.status + "\n")
    if view.question is not None:
        text.append(f"waits for approval: {view.question}  (a: approve, r: reject)\n", "bold")
    elif view.waiting:
        text.append(f"waiting {view.waiting}\n", style="bold")
    _section(text, "graph (▶ current, • on the path, * edge taken)")
    for line in view.graph:
        mark, style = _MARKS.get(line.mark, _MARKS["other"])
        text.append(mark + line.text + "\n", style=style)
    if view.live:
        _section(text, "live step")
        text.append("\n".join(view.live) + "\n")
    for title, lines in (
        ("recent steps", view.steps),
        ("branches", view.branches),
        ("captured", view.captured),
        ("cost", view.costs),
        ("stall counters", view.stalls),
    ):
        if lines:
            _section(text, title)
            text.append("\n".join(lines) + "\n")
    return text


def _section(text: Text, title: str) -> None:
    text.append(f"── {title} ──\n", style="bold underline")
