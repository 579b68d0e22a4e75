"""gitcmd: one git command through containment, its failure in one line, a stuck git ended."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from support.slowdown import scaled

from little_loops.fsm.facts.errors import LoopRuntimeError
from little_loops.fsm.processes import gitcmd
from little_loops.fsm.processes.pids import pid_alive


def test_git_runs_in_the_folder_given_and_its_failure_is_one_line(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert gitcmd.git(tmp_path, "rev-parse", "--is-inside-work-tree").out == "true\n"
    assert gitcmd.status_lines(tmp_path) == []
    (tmp_path / "new").write_text("x")
    assert gitcmd.status_lines(tmp_path) == ["?? new"]
    with pytest.raises(LoopRuntimeError, match=r"^`git log` failed in .*: .*does not have any"):
        gitcmd.git(tmp_path, "log")
    assert not gitcmd.git(tmp_path, "log", check=False).ok


def test_no_git_on_path_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(LoopRuntimeError, match=r"^git is not installed \(no `git` on PATH\)$"):
        gitcmd.git(tmp_path, "status")


def test_a_stuck_git_is_ended_with_what_it_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "git"
    fake.write_text(f"#!/bin/bash\nsleep 300 & echo $! > {tmp_path}/hook; wait\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(gitcmd, "GIT_TIMEOUT", 0.5)
    began = time.monotonic()
    with pytest.raises(LoopRuntimeError, match=r"^`git status` in .* did not finish in 0s$"):
        gitcmd.git(tmp_path, "status")
    assert time.monotonic() - began < scaled(3.0)
    hook = int((tmp_path / "hook").read_text())
    deadline = time.monotonic() + scaled(2.0)
    while pid_alive(hook):
        assert time.monotonic() < deadline, "the stuck git's child still runs"
        time.sleep(0.02)


def test_git_output_reads_as_text(tmp_path: Path) -> None:
    assert gitcmd._text(b"a\r\nb\rc\xff") == "a\nb\nc\ufffd"
