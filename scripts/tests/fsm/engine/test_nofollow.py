"""Writing below a folder without following a link (engine/nofollow.py), on real files."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from little_loops.fsm.engine.nofollow import write_below


@pytest.fixture
def top(tmp_path: Path) -> Path:
    path = tmp_path / "run"
    path.mkdir()
    return path


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside *top* holding a file a hostile step would have written through."""
    path = tmp_path / "outside"
    path.mkdir()
    (path / "target.txt").write_text("original\n")
    return path


def test_the_bytes_land_with_the_mode_in_folders_made_on_the_way(top: Path) -> None:
    write_below(top, "a/b/evidence.json", b'{"ok": true}\n', 0o644)
    written = top / "a" / "b" / "evidence.json"
    assert written.read_bytes() == b'{"ok": true}\n'
    assert written.stat().st_mode & 0o777 == 0o644
    write_below(top, "a/b/evidence.json", b"again", 0o600)  # a file there is replaced
    assert written.read_bytes() == b"again"
    assert written.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in (top / "a" / "b").iterdir()) == ["evidence.json"]


def test_a_link_at_the_name_is_replaced_never_written_through(top: Path, outside: Path) -> None:
    link = top / "evidence.json"
    link.symlink_to(outside / "target.txt")
    write_below(top, "evidence.json", b"written\n", 0o644)
    assert not link.is_symlink()
    assert link.read_bytes() == b"written\n"
    assert (outside / "target.txt").read_text() == "original\n"
    assert sorted(p.name for p in outside.iterdir()) == ["target.txt"]


def test_a_dangling_link_at_the_name_makes_no_file_where_it_points(
    top: Path, outside: Path
) -> None:
    link = top / "evidence.json"
    link.symlink_to(outside / "planted.txt")
    write_below(top, "evidence.json", b"written\n", 0o644)
    assert not link.is_symlink()
    assert link.read_bytes() == b"written\n"
    assert not (outside / "planted.txt").exists()


def test_a_linked_folder_on_the_way_is_refused_and_nothing_written(
    top: Path, outside: Path
) -> None:
    (top / "reports").symlink_to(outside, target_is_directory=True)
    with pytest.raises(OSError, match="Too many levels of symbolic links|Not a directory"):
        write_below(top, "reports/target.txt", b"written\n", 0o644)
    assert (outside / "target.txt").read_text() == "original\n"
    assert sorted(p.name for p in outside.iterdir()) == ["target.txt"]
    assert (top / "reports").is_symlink()


def test_a_linked_folder_deeper_on_the_way_is_refused(top: Path, outside: Path) -> None:
    (top / "a").mkdir()
    (top / "a" / "b").symlink_to(outside, target_is_directory=True)
    with pytest.raises(OSError, match="Too many levels of symbolic links|Not a directory"):
        write_below(top, "a/b/c/new.txt", b"written\n", 0o644)
    assert sorted(p.name for p in outside.iterdir()) == ["target.txt"]


def test_a_file_on_the_way_is_refused(top: Path) -> None:
    (top / "a").write_text("a file\n")
    with pytest.raises(NotADirectoryError):
        write_below(top, "a/new.txt", b"written\n", 0o644)
    assert (top / "a").read_text() == "a file\n"


@pytest.mark.parametrize("relative", ["../outside/target.txt", "/etc/passwd", "", ".", "a/../b"])
def test_a_path_that_is_not_below_the_folder_is_refused(
    top: Path, outside: Path, relative: str
) -> None:
    with pytest.raises(OSError, match="not a path below the folder") as raised:
        write_below(top, relative, b"written\n", 0o644)
    assert raised.value.errno == errno.EINVAL
    assert list(top.iterdir()) == []
    assert (outside / "target.txt").read_text() == "original\n"


def test_a_failed_rename_leaves_no_spare_file_behind(top: Path) -> None:
    (top / "evidence.json").mkdir()  # a folder at the name: the rename over it fails
    (top / "evidence.json" / "kept").write_text("kept\n")
    with pytest.raises(IsADirectoryError):
        write_below(top, "evidence.json", b"written\n", 0o644)
    assert sorted(p.name for p in top.iterdir()) == ["evidence.json"]
    assert (top / "evidence.json" / "kept").read_text() == "kept\n"


def test_the_file_is_never_seen_half_written(top: Path) -> None:
    """The bytes go to a spare file renamed over the name: the old file stays whole
    (its inode unchanged) until the new one is complete."""
    (top / "state.json").write_bytes(b"old")
    before = os.stat(top / "state.json").st_ino
    write_below(top, "state.json", b"x" * 1_000_000, 0o644)
    assert os.stat(top / "state.json").st_ino != before
    assert (top / "state.json").read_bytes() == b"x" * 1_000_000
