"""Files written whole or not at all, with real files: atomic replaces, user files, JSON bytes."""

from __future__ import annotations

import errno
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.timelimit import time_limit

from little_loops.fsm.facts.errors import LoopRuntimeError
from little_loops.fsm.facts.layout import temp_file
from little_loops.fsm.runs import atomic
from little_loops.fsm.runs.atomic import (
    json_bytes,
    remove_leftover_temp_files,
    write_atomic,
    write_user_file,
)


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def names(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir())


def test_a_replace_leaves_the_new_content_and_no_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "fix.state.json"
    path.write_text("old")
    write_atomic(path, "new é")
    assert path.read_bytes() == "new é".encode()
    write_atomic(path, b"\x00bytes", durable=False)
    assert path.read_bytes() == b"\x00bytes"
    assert names(tmp_path) == ["fix.state.json"]


def test_run_files_are_private_and_user_files_follow_the_umask(
    tmp_path: Path, umask_022: None
) -> None:
    write_atomic(tmp_path / "run.json", "{}")
    write_atomic(tmp_path / "report.html", "<p>", private=False)
    write_user_file(tmp_path / "out.svg", "<svg/>")
    assert stat.S_IMODE((tmp_path / "run.json").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "report.html").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "out.svg").stat().st_mode) == 0o644
    assert (tmp_path / "out.svg").read_text() == "<svg/>"


def test_a_failed_write_keeps_the_old_content_and_removes_its_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "fix.state.json"
    path.write_text("old")

    def disk_full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic.os, "fsync", disk_full)
    with pytest.raises(OSError, match="No space left on device") as raised:
        write_atomic(path, "new")
    assert raised.value.errno == errno.ENOSPC
    assert raised.value.filename == str(path)  # the error names the file being replaced
    assert path.read_text() == "old"
    assert names(tmp_path) == ["fix.state.json"]


def test_an_interrupt_in_the_middle_keeps_the_old_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "fix.state.json"
    path.write_text("old")

    def interrupted(src: str, dst: Path) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(path, "new", durable=False)
    assert path.read_text() == "old"
    assert names(tmp_path) == ["fix.state.json"]


def test_a_replace_that_cannot_happen_names_the_file_and_leaves_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "taken"
    (folder / "inside").mkdir(parents=True)  # a folder (not empty) cannot be replaced by a file
    with pytest.raises(IsADirectoryError) as raised:
        write_atomic(folder, "data")
    assert raised.value.filename == str(folder)
    assert folder.is_dir()
    assert names(tmp_path) == ["taken"]
    with pytest.raises(FileNotFoundError) as missing:
        write_atomic(tmp_path / "no-such-dir" / "x.json", "data")
    assert missing.value.filename == str(tmp_path / "no-such-dir" / "x.json")


def test_a_link_planted_at_the_temp_name_is_not_written_through(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep me")
    path = tmp_path / "fix.state.json"
    temp_file(path).symlink_to(victim)
    write_atomic(path, "new")
    assert victim.read_text() == "keep me"
    assert path.read_text() == "new"
    assert names(tmp_path) == ["fix.state.json", "victim"]


def test_a_device_named_by_the_user_is_written_to_not_replaced(tmp_path: Path) -> None:
    link = tmp_path / "out"
    link.symlink_to(os.devnull)
    write_user_file(link, "discarded")
    write_user_file(Path(os.devnull), b"discarded")
    assert link.is_symlink()
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    assert names(tmp_path) == ["out"]


def test_a_fifo_nobody_reads_or_a_folder_is_refused_before_anything_is_written(
    tmp_path: Path,
) -> None:
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)  # nobody reads it: opening it to write waited for ever
    with time_limit(10, "writing a FIFO nobody reads"), pytest.raises(LoopRuntimeError) as refused:
        write_user_file(fifo, "lost")
    assert str(refused.value) == (
        f"cannot write {fifo}: a FIFO nobody reads (start its reader first)"
    )
    with pytest.raises(LoopRuntimeError) as refused:
        write_user_file(tmp_path, "lost")
    assert str(refused.value) == f"cannot write {tmp_path}: is a directory, not a file"
    assert names(tmp_path) == ["out.fifo"]


def test_leftover_temp_files_of_this_file_only_are_removed(tmp_path: Path) -> None:
    path = tmp_path / "fix.state.json"
    path.write_text("kept")
    crashed = [temp_file(path, pid) for pid in (17, 4242)]
    other = temp_file(tmp_path / "fix.state.json2", 17)  # another file's temp file
    for leftover in (*crashed, other):
        leftover.write_text("partial")
    remove_leftover_temp_files(path)
    assert not any(leftover.exists() for leftover in crashed)
    assert other.exists()
    assert path.read_text() == "kept"
    remove_leftover_temp_files(tmp_path / "no-such-dir" / "x")  # nothing there: no error


def test_json_bytes_is_compact_utf8_or_indented() -> None:
    value = {"state": "fix", "note": "é", "n": [1, 2]}
    assert json_bytes(value) == '{"state":"fix","note":"é","n":[1,2]}'.encode()
    indented = json_bytes(value, indent=2)
    assert indented.startswith(b'{\n  "state": "fix"')
    assert json.loads(indented) == value


def test_json_bytes_escapes_undecodable_bytes_instead_of_failing() -> None:
    value = {"output": "bad \udcff byte", "ok": "é"}
    for indent in (None, 2):
        raw = json_bytes(value, indent)
        raw.decode("ascii")  # escaped, so plain ASCII
        assert json.loads(raw) == value


def test_only_the_temp_files_of_dead_writers_are_removed(tmp_path: Path) -> None:
    import subprocess
    import sys

    from little_loops.fsm.facts.layout import temp_file
    from little_loops.fsm.runs.atomic import remove_dead_temp_files

    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    path = tmp_path / "x.json"
    dead, alive = temp_file(path, int(done.stdout)), temp_file(path, os.getpid())
    for leftover in (dead, alive):
        leftover.write_text("{")
    remove_dead_temp_files(path)
    assert not dead.exists()
    assert alive.exists()
