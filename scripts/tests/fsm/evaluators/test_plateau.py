"""Plateau counting over a history file, shared by score_stall and open_question_stall."""

from __future__ import annotations

from pathlib import Path

from little_loops.fsm.evaluators.plateau import judge_history, plateau, read_history


def test_the_history_skips_blank_and_non_number_lines(tmp_path: Path) -> None:
    path = tmp_path / "h"
    path.write_text("5\n\nn/a\n 7.5 \n")
    assert read_history(str(path)) == [5.0, 7.5]
    assert read_history(str(tmp_path / "missing")) == []


def test_rounds_since_the_best_beyond_epsilon() -> None:
    assert plateau([5, 7, 7.2, 7.4], 0.5, higher_is_better=True) == (2, 7.4)
    assert plateau([5, 7, 8], 0.5, higher_is_better=True) == (0, 8)
    assert plateau([9, 8, 8, 8], 0.0, higher_is_better=False) == (2, 8)
    assert plateau([9, 8, 7], 0.0, higher_is_better=False) == (0, 7)


def test_the_verdicts(tmp_path: Path) -> None:
    path = tmp_path / "h"
    path.write_text("5\n")
    assert judge_history(str(path), 1, 0.5, higher_is_better=True).verdict == "success"
    path.write_text("5\n5\n")
    assert judge_history(str(path), 1, 0.5, higher_is_better=True).verdict == "failure"
    assert judge_history(str(path), 2, 0.5, higher_is_better=True).verdict == "success"
    assert judge_history(None, 1, 0.5, higher_is_better=True).verdict == "error"
    assert judge_history(str(path), 0, 0.5, higher_is_better=True).verdict == "error"
