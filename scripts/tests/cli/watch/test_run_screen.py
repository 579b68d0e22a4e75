"""The run screen's text: sections in order, the current state marked, a question shown."""

from __future__ import annotations

import pytest

pytest.importorskip("textual")

from little_loops.cli.watch.detail import CURRENT, OTHER, VISITED, GraphLine, RunView  # noqa: E402
from little_loops.cli.watch.run_screen import render_view  # noqa: E402


def test_a_run_without_state_says_so() -> None:
    assert render_view(None, "gone").plain == "run gone has no saved state"


def test_the_sections_and_the_marks() -> None:
    view = RunView(
        key="x",
        header="x  run ab12",
        status="running (pid 1)",
        waiting="",
        question="Ship it?",
        graph=[GraphLine(CURRENT, "a → b"), GraphLine(VISITED, "b → a*"), GraphLine(OTHER, "c")],
        steps=["#1 a success 1.0s → b"],
    )
    text = render_view(view, "x")
    assert text.plain.splitlines() == [
        "x  run ab12",
        "running (pid 1)",
        "waits for approval: Ship it?  (a: approve, r: reject)",
        "── graph (▶ current, • on the path, * edge taken) ──",
        "▶ a → b",
        "• b → a*",
        "  c",
        "── recent steps ──",
        "#1 a success 1.0s → b",
    ]
    current = text.plain.index("▶ a → b")
    assert any(span.start == current and "reverse" in str(span.style) for span in text.spans)
