"""open_run_file: regular files only, never through a link, never blocked by a FIFO."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from little_loops.fsm.facts.layout import temp_file
from little_loops.fsm.facts.runfile import NotOurFile, open_run_file, read_run_file
from little_loops.fsm.runs.atomic import write_atomic


def test_a_regular_file_is_read_and_a_missing_one_is_file_not_found(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"data")
    assert read_run_file(tmp_path / "f") == b"data"
    with pytest.raises(FileNotFoundError):
        read_run_file(tmp_path / "missing")


@pytest.mark.parametrize(
    ("make", "what"),
    [
        (lambda p: p.symlink_to(p.parent / "victim"), "a symbolic link"),
        (lambda p: os.mkfifo(p), "a FIFO"),
        (lambda p: p.mkdir(), "a directory"),
    ],
)
def test_anything_else_is_refused_by_name(tmp_path: Path, make: object, what: str) -> None:
    (tmp_path / "victim").write_text("keep")
    path = tmp_path / "run.events.jsonl"
    make(path)  # type: ignore[operator]
    for flags in (os.O_RDONLY, os.O_WRONLY | os.O_APPEND | os.O_CREAT):
        with pytest.raises(NotOurFile, match=f"run.events.jsonl: is {what}, not a file"):
            open_run_file(path, flags)
    assert (tmp_path / "victim").read_text() == "keep"


def test_a_device_is_refused_unless_the_caller_names_it(tmp_path: Path) -> None:
    with pytest.raises(NotOurFile, match="is a character device"):
        open_run_file("/dev/null", os.O_WRONLY)
    os.close(open_run_file("/dev/null", os.O_WRONLY, regular_only=False))


def test_an_atomic_write_never_writes_through_a_planted_temp_link(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep")
    target = tmp_path / "fix.state.json"
    temp_file(target).symlink_to(victim)  # the name this process's write would use
    write_atomic(target, b"{}")
    assert victim.read_text() == "keep"
    assert target.read_bytes() == b"{}"
    assert not os.path.lexists(temp_file(target))


def test_an_atomic_write_replaces_a_link_at_the_target_not_what_it_points_to(
    tmp_path: Path,
) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep")
    target = tmp_path / "fix.options.json"
    target.symlink_to(victim)
    write_atomic(target, b"{}")
    assert victim.read_text() == "keep"
    assert not target.is_symlink()
