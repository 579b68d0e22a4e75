"""What same_result masks before it compares: the table of docs/loop-files.md, and real pytest."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.paths import REPO
from support.slowdown import scaled

from little_loops.fsm.engine.volatile import masked

DOC = REPO / "docs" / "loop-files.md"


def _doc_rows() -> list[tuple[str, str, str]]:
    """(what, example, becomes) of each row of the masking table under Stall breakers."""
    text = DOC.read_text()
    start = text.index("| what | example | becomes |")
    rows = []
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        what, example, becomes = (cell.strip() for cell in line.strip("|").split(" | "))
        rows.append((what, example, becomes))
    return rows


def _quoted(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def test_the_doc_table_has_a_row_for_each_rule() -> None:
    assert [row[0].split(" (")[0].split(",")[0] for row in _doc_rows()] == [
        "a path in a temporary folder",
        "an ISO 8601 date and time",
        "a number with a unit of time",
        "`pid` and a number",
        "a memory address of 6 or more hex digits",
        "a run of 3 or more of one separator",
    ]


@pytest.mark.parametrize("row", _doc_rows(), ids=lambda row: row[0][:30])
def test_each_example_of_the_doc_becomes_what_it_says(row: tuple[str, str, str]) -> None:
    _, example, becomes = row
    examples, marks = _quoted(example), _quoted(becomes)
    assert examples
    assert len(examples) == len(marks)
    for sample, mark in zip(examples, marks, strict=True):
        assert masked(sample) == mark


def test_a_time_cut_short_by_pytest_is_masked_too() -> None:
    # pytest cuts a summary line at the terminal's width: where depends on the pid's length.
    cut = "FAILED t.py::test_add - AssertionError: pid {} at 2026-12-06T23:1{}..."
    assert masked(cut.format(4242, "")) == masked(cut.format(42421, "0:0"))
    assert (
        masked(cut.format(4242, "").replace("T23:1", ""))
        == "FAILED t.py::test_add - AssertionError: pid <pid> at <time>..."
    )


def test_a_date_alone_is_kept_so_a_loop_making_progress_by_dates_never_looks_stalled() -> None:
    assert masked("on 2026-12-06 only") == "on 2026-12-06 only"
    assert masked("imported 2026-11-01") != masked("imported 2026-11-02")


def test_a_suite_that_takes_just_under_and_then_just_over_a_minute_prints_the_same_line() -> None:
    # pytest adds `(h:mm:ss)` to its duration from 60 s on: seen when a loaded machine
    # pushed one of two runs of the same failure past a minute.
    under = "======= 1 failed in 59.10s ======="
    over = "===== 1 failed in 65.00s (0:01:05) ====="
    assert masked(under) == masked(over) == "=== 1 failed in <duration> ==="


def test_separator_runs_stand_for_any_length() -> None:
    assert masked("==== 1 failed in 0.33s ====") == masked("=== 1 failed in 10.5s ===")
    assert masked("==== 1 failed in 0.33s ====") == "=== 1 failed in <duration> ==="


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("assert 3 == 4", "assert 3 == 5"),  # the failure itself
        ("test_a.py:3: AssertionError", "test_a.py:7: AssertionError"),  # where it failed
        ("FAILED test_a.py::test_x[1]", "FAILED test_a.py::test_x[2]"),  # which case
        ("..F", ".FF"),  # how many failed
        ("/home/me/project/a.py", "/home/me/project/b.py"),  # a path outside temp folders
        ("/tmpdata/a.txt", "/tmpdata/b.txt"),  # not a temp folder: only starts like one
        ("3 tests", "4 tests"),  # a number with no unit of time
    ],
)
def test_a_real_change_stays_a_change(before: str, after: str) -> None:
    assert masked(before) != masked(after)


FAILING = """\
import os
import time


def add(a, b):
    return a - b


def test_add(tmp_path):
    started = time.strftime("%Y-%m-%dT%H:%M:%S")
    assert add(2, 2) == 4, f"pid {os.getpid()} at {started} in {tmp_path}"
"""


def _pytest(root: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_calc.py"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=scaled(60),
        env={**os.environ, "PYTEST_ADDOPTS": ""},
    )
    assert done.returncode == 1, done.stdout + done.stderr
    return done.stdout


def test_two_runs_of_one_real_pytest_failure_mask_to_the_same_text(tmp_path: Path) -> None:
    (tmp_path / "test_calc.py").write_text(FAILING)
    first, second = _pytest(tmp_path), _pytest(tmp_path)
    assert first != second  # pid and temp folder differ at least
    assert "1 failed in " in first
    assert masked(first) == masked(second)
    assert "assert 0 == 4" in masked(first)  # the failure itself is kept
