"""A link or a FIFO planted where a run file goes: refused by name, never followed, no hang."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.slowdown import scaled

LOOP = """\
name: fix
initial: a
max_iterations: 2
states:
  a:
    action: "echo hi"
    on_success: b
  b:
    action: "test -e once || { touch once; exit 1; }"
    on_success: done
    on_failure: a
  done:
    terminal: true
"""

# Each run file, and the commands that must refuse it (exit 1, one line naming it).
REFUSED_BY = {
    "fix.state.json": ["status fix", "resume fix -n 5", "run fix"],
    "fix.events.jsonl": [
        "status fix",
        "history fix",
        "history fix --tail 2",
        "resume fix -n 5",
        "run fix",
    ],
    "fix.events.1.jsonl": ["history fix"],
    "fix.options.json": ["status fix", "resume fix -n 5"],
    "fix.lock": ["resume fix -n 5", "run fix"],
    "fix.a.out": ["logs fix a", "run fix"],
    "fix.a.err": ["logs fix a"],
    "fix.log": ["run fix --background"],
}
EVERY_COMMAND = [
    "status fix",
    "history fix",
    "history fix --tail 2",
    "resume fix -n 5",
    "run fix",
    "stop fix",
    "list",
    "list --running",
    "logs fix",
]


def ll_loop(root: Path, command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "little_loops.cli", *command.split()],
        cwd=root,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=scaled(20),  # a FIFO must never make a command wait
    )


def project(root: Path, planted: str, kind: str) -> Path:
    """A project whose loop ran once (and once more, resumable), then *planted* replaced."""
    (root / ".loops").mkdir(parents=True)
    (root / ".loops" / "fix.yaml").write_text(LOOP)
    assert ll_loop(root, "run fix").returncode == 0
    (root / "once").unlink()
    assert ll_loop(root, "run fix -n 1").returncode == 3  # stopped by its limit: resumable
    path = root / ".loops" / ".running" / planted
    path.unlink(missing_ok=True)
    if kind == "link":
        path.symlink_to(root / "victim")
    else:
        os.mkfifo(path)
    return path


@pytest.mark.parametrize("kind", ["link", "fifo"])
@pytest.mark.parametrize("planted", sorted(REFUSED_BY))
def test_a_planted_run_file_is_refused_and_never_followed(
    tmp_path: Path, planted: str, kind: str
) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    path = project(tmp_path, planted, kind)
    shown = f".loops/.running/{planted}"
    what = "a symbolic link" if kind == "link" else "a FIFO"
    message = (
        f"{shown}: is {what}, not a file ll-loop wrote; ll-loop does not follow or use"
        " such paths among its run files (remove it)"
    )
    for command in REFUSED_BY[planted]:  # first: each leaves the planted file in place
        result = ll_loop(tmp_path, command)
        assert result.returncode == 1, (command, result.stdout, result.stderr)
        assert message in result.stdout + result.stderr, (command, result.stderr)
        if command != "run fix" or planted != "fix.a.out":  # the step fails instead
            assert result.stderr.strip().splitlines()[-1] == f"ll-loop: error: {message}"
        assert os.path.lexists(path)
        assert path.is_symlink() == (kind == "link")
    for command in EVERY_COMMAND:  # then the rest: nothing is written through it, no hang
        result = ll_loop(tmp_path, command)
        assert "Traceback" not in result.stderr, (command, result.stderr)
    assert victim.read_text() == "keep me\n"


def test_a_running_folder_that_is_a_link_is_refused_and_nothing_is_written_through_it(
    tmp_path: Path,
) -> None:
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "fix.yaml").write_text(LOOP)
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / ".loops" / ".running").symlink_to(outside)
    for command in ["run fix", "run fix --background"]:
        result = ll_loop(tmp_path, command)
        assert result.returncode == 1, (command, result.stderr)
        assert result.stderr.endswith(
            "ll-loop: error: .loops/.running: is a symbolic link, not a file ll-loop wrote;"
            " ll-loop does not follow or use such paths among its run files (remove it)\n"
        ), (command, result.stderr)
    assert list(outside.iterdir()) == []
