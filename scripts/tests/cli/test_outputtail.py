"""Following an action's output files: only what this action writes, stderr labelled."""

from __future__ import annotations

import os
from pathlib import Path

from little_loops.cli.outputtail import OutputTail


def test_the_previous_runs_output_is_not_shown_and_a_rerun_starts_over(tmp_path: Path) -> None:
    out, err = tmp_path / "l.s.out", tmp_path / "l.s.err"
    out.write_text("old line\n")
    os.utime(out, ns=(1_000_000_000, 1_000_000_000))
    tail = OutputTail(str(out))
    assert tail.poll() == []  # still the last run's file: not this action's output
    out.write_text("new 1\npart")  # the runner emptied it and the action writes
    err.write_text("warn\n")
    assert tail.poll() == ["new 1", "stderr │ warn"]
    with out.open("a") as handle:
        handle.write("ial\n")
    assert tail.poll() == ["partial"]
    out.write_text("again\n")  # emptied by a new run of the state while followed
    assert tail.poll(final=True) == ["again"]


def test_from_start_shows_what_the_files_hold(tmp_path: Path) -> None:
    out = tmp_path / "l.s.out"
    out.write_text("one\n\ntwo")
    assert OutputTail(str(out), from_start=True).poll_each(final=True) == (["one", "two"], [])
