"""Action records: the file names of saved output stay inside their folder, one per state."""

from __future__ import annotations

import pytest

from little_loops.fsm.engine.records import output_file_name

# --- moved from test_qa_regressions.py ---


@pytest.mark.parametrize(
    ("state", "name"),
    [
        ("check", "loop.check.out"),
        ("x/../../etc/passwd", "loop.x_.._.._etc_passwd-"),
        ("..", "loop._-"),
    ],
)
def test_output_files_stay_in_their_folder(state: str, name: str) -> None:
    made = output_file_name("loop", state)
    assert made.startswith(name)
    assert "/" not in made
    assert made.endswith(".out")


def test_two_unsafe_state_names_never_share_a_file() -> None:
    assert output_file_name("l", "a/b") != output_file_name("l", "a b")
