"""What under `.loops/` is ll-loop's own: folders made only where no link leads elsewhere, and
only a run's own output files taken for its output."""

from __future__ import annotations

from pathlib import Path

import pytest

from little_loops.fsm.facts.owned import (
    OWN_FOLDERS,
    make_history_dir,
    make_own_folder,
    own_parts,
    run_output,
)
from little_loops.fsm.facts.runfile import NotOurFile


@pytest.mark.parametrize("top", OWN_FOLDERS)
@pytest.mark.parametrize("planted", [0, 1, 2])
def test_a_link_anywhere_on_the_way_is_refused(tmp_path: Path, top: str, planted: int) -> None:
    loops, outside = tmp_path / ".loops", tmp_path / "outside"
    outside.mkdir()
    chain = [loops / top, loops / top / "a", loops / top / "a" / "b"]
    loops.mkdir()
    for folder in chain[:planted]:
        folder.mkdir()
    chain[planted].symlink_to(outside, target_is_directory=True)
    with pytest.raises(NotOurFile, match="is a symbolic link"):
        make_own_folder(chain[2], loops)
    assert list(outside.iterdir()) == []


def test_folders_are_made_and_the_first_is_ignored_by_git(tmp_path: Path) -> None:
    loops = tmp_path / ".loops"
    made = make_own_folder(loops / ".running" / "runs" / "x@ab12", loops)
    assert made.is_dir()
    assert (loops / ".running" / ".gitignore").read_text().endswith("*\n")
    assert make_history_dir(loops, "x") == loops / ".history" / "x"


def test_a_folder_outside_ours_is_no_folder_of_ours(tmp_path: Path) -> None:
    loops = tmp_path / ".loops"
    assert own_parts(tmp_path / "elsewhere", loops) is None
    assert own_parts(loops / "lib", loops) is None
    assert own_parts(loops / ".running" / "runs", loops) == (".running", "runs")
    with pytest.raises(ValueError, match="in no folder of ll-loop's"):
        make_own_folder(tmp_path / "elsewhere", loops)


def test_only_an_output_file_of_the_run_is_its_output(tmp_path: Path) -> None:
    loops = tmp_path / ".loops"
    running = loops / ".running"
    running.mkdir(parents=True)
    assert run_output(str(running / "talk.done.out"), "talk", loops) == str(
        running / "talk.done.out"
    )
    for other in (
        tmp_path / "secret.out",  # not in `.running/`
        running / "other.done.out",  # another run's
        running / "talk.a.b.out",  # loop `talk.a`'s
        running / "talk.done.err",
        running / "talk.state.json",
        running / "runs" / "talk.done.out",
        running / ".." / "talk.done.out",
    ):
        assert run_output(str(other), "talk", loops) is None, other
    assert run_output(None, "talk", loops) is None
    assert run_output(7, "talk", loops) is None
