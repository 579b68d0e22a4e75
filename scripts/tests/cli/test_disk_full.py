"""A full disk mid-run: one line naming the file and the errno, exit 1, and the run resumes."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import llproc

# The disk is 16 pages of 4 KiB: a run's files take about half, so the run archive (a copy of
# them) is off here; a failure to archive is tested in test_runs.py.
LOOP = """\
name: fill
initial: a
max_iterations: 400
archive: {keep: 0}
states:
  a:
    action: "echo hello"
    capture: c
    on_success: $current
  done:
    terminal: true
"""


def mount(target: Path, size: str, *options: str) -> bool:
    argv = [
        "mount",
        "-t",
        "tmpfs",
        "-o",
        ",".join([*options, f"size={size}"]),
        "tmpfs",
        str(target),
    ]
    return subprocess.run(argv, capture_output=True).returncode == 0


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs (root only: the test skips elsewhere)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if os.geteuid() != 0 or not mount(disk, "64k"):
        pytest.skip("needs root to mount a small tmpfs")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def ll_loop(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return llproc.ll_loop(root, *args, timeout=60)


def test_a_full_disk_stops_the_run_with_one_line_and_it_resumes(small_disk: Path) -> None:
    (small_disk / ".loops").mkdir()
    (small_disk / ".loops" / "fill.yaml").write_text(LOOP)
    full = ll_loop(small_disk, "run", "fill", "--quiet")
    assert full.returncode == 1
    assert "Traceback" not in full.stderr
    assert (
        "Loop failed in a: .loops/.running/fill.events.jsonl: cannot write the run's log (No"
        " space left on device, errno 28); it stops here and can be resumed once that is"
        " fixed: ll-loop resume fill"
    ) in full.stderr
    status = ll_loop(small_disk, "status", "fill")
    assert "crashed: its process" in status.stdout  # the last state written, resumable
    assert "disk:         the disk holding .loops/.running is full (" in status.stdout
    assert "KiB free): free some space before resuming" in status.stdout
    assert mount(small_disk, "4m", "remount")
    resumed = ll_loop(small_disk, "resume", "fill", "--quiet")
    assert resumed.returncode == 3, resumed.stderr  # on to max_iterations, as uninterrupted
    done = ll_loop(small_disk, "status", "fill", "--json")
    assert '"iteration": 400' in done.stdout


def fill_up(disk: Path) -> Path:
    """Take every free byte of *disk*; returns the file to remove to free it again."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while os.write(fd, b"\0" * 4096):
            pass
    except OSError:
        pass
    finally:
        os.close(fd)
    return filler


def test_a_full_disk_before_the_run_names_the_file_it_could_not_write(small_disk: Path) -> None:
    (small_disk / ".loops").mkdir()
    (small_disk / ".loops" / "fill.yaml").write_text(LOOP.replace("400", "3"))
    (small_disk / ".loops" / ".running").mkdir()
    filler = fill_up(small_disk)
    full = ll_loop(small_disk, "run", "fill", "--quiet")
    assert (full.returncode, full.stdout) == (1, "")
    assert full.stderr == (
        "ll-loop: error: .loops/.running/fill.starting.json: No space left on device (errno 28)\n"
    )
    # Its first write, the start-up marker, failed: nothing (half-written) is left.
    assert sorted(p.name for p in (small_disk / ".loops" / ".running").iterdir()) == []
    filler.unlink()
    assert ll_loop(small_disk, "run", "fill", "--quiet").returncode == 3


def test_a_full_disk_leaves_a_saved_run_as_it_was(small_disk: Path) -> None:
    (small_disk / ".loops").mkdir()
    (small_disk / ".loops" / "fill.yaml").write_text(LOOP.replace("400", "3"))
    assert ll_loop(small_disk, "run", "fill", "--quiet").returncode == 3
    running = small_disk / ".loops" / ".running"
    saved = {p.name: p.read_bytes() for p in running.iterdir()}
    filler = fill_up(small_disk)
    full = ll_loop(small_disk, "resume", "fill", "-n", "6", "--quiet")
    assert full.returncode == 1
    assert full.stderr.endswith(": No space left on device (errno 28)\n"), full.stderr
    assert full.stderr.count("\n") == 1
    assert {p.name: p.read_bytes() for p in running.iterdir()} == saved
    filler.unlink()
    resumed = ll_loop(small_disk, "resume", "fill", "-n", "6", "--quiet")
    assert resumed.returncode == 3, resumed.stderr
    assert '"iteration": 6' in ll_loop(small_disk, "status", "fill", "--json").stdout
