"""A forked `ll-loop` answers as a fresh process does: same output, exit code, directory and
environment, and a timeout kills it."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

import pytest

from support import forkserver, llproc

SEEN = """\
name: seen
initial: look
states:
  look:
    action: 'printf "%s|%s|%s" "$LLT_VALUE" "$PWD" "${HOME-unset}" > seen.txt'
    next: done
  done:
    terminal: true
"""


def project(root: Path) -> Path:
    (root / ".loops").mkdir(parents=True)
    (root / ".loops" / "seen.yaml").write_text(SEEN)
    return root


def test_output_and_exit_codes_are_a_fresh_process_s(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / ".loops" / "bad.yaml").write_text("name: bad\ninitial: nowhere\nstates: {}\n")
    for args in (
        ("validate", "--json", "seen", "bad"),
        ("validate", "nope"),
        ("--no-such-flag",),
        ("status", "seen"),
    ):
        fresh = llproc.ll_loop(root, *args)
        forked = forkserver.ll_loop(root, *args)
        assert (forked.returncode, forked.stdout, forked.stderr) == (
            fresh.returncode,
            fresh.stdout,
            fresh.stderr,
        ), args


def test_each_run_has_its_own_directory_and_environment(tmp_path: Path) -> None:
    first, second = project(tmp_path / "a"), project(tmp_path / "b")
    env = {**os.environ, "LLT_VALUE": "one ' $x", "HOME": str(tmp_path)}
    done = forkserver.ll_loop(first, "run", "seen", env=env)
    assert done.returncode == 0, done.stderr
    assert (first / "seen.txt").read_text() == f"one ' $x|{first}|{tmp_path}"
    # Not in its environment, though in the server's: not in the run's either.
    env = {k: v for k, v in env.items() if k != "HOME"} | {"LLT_VALUE": "two"}
    done = forkserver.ll_loop(second, "run", "seen", env=env)
    assert done.returncode == 0, done.stderr
    assert (second / "seen.txt").read_text() == f"two|{second}|unset"


def test_a_timeout_kills_the_child_and_the_next_run_still_works(
    tmp_path: Path, marker: str
) -> None:
    root = project(tmp_path)
    (root / ".loops" / "slow.yaml").write_text(
        f"name: slow\ninitial: wait\nmax_iterations: 1000\nstates:\n  wait:\n"
        f"    action: 'exec sleep {marker}'\n    next: wait\n  done:\n    terminal: true\n"
    )
    with pytest.raises(subprocess.TimeoutExpired):
        forkserver.ll_loop(root, "run", "slow", timeout=1)
    done = forkserver.ll_loop(root, "run", "seen")
    assert done.returncode == 0, done.stderr
    assert (root / "seen.txt").read_text().startswith("|")


def test_callers_at_once_each_get_a_server(tmp_path: Path) -> None:
    roots = [project(tmp_path / f"p{i}") for i in range(3)]
    codes: dict[int, int] = {}

    def one(i: int) -> None:
        env = {**os.environ, "LLT_VALUE": f"v{i}"}
        codes[i] = forkserver.ll_loop(roots[i], "run", "seen", env=env).returncode

    threads = [threading.Thread(target=one, args=(i,)) for i in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert codes == {0: 0, 1: 0, 2: 0}
    assert [(r / "seen.txt").read_text() for r in roots] == [
        f"v{i}|{r}|{os.environ.get('HOME', 'unset')}" for i, r in enumerate(roots)
    ]


def test_what_subprocess_refuses_is_refused_before_any_process(tmp_path: Path) -> None:
    root = project(tmp_path)
    for call in (
        lambda: llproc.ll_loop(root, "run", "seen\0x"),
        lambda: forkserver.ll_loop(root, "run", "seen\0x"),
    ):
        with pytest.raises(ValueError, match="null byte"):
            call()
    for call in (
        lambda: llproc.ll_loop(root / "gone", "run", "seen"),
        lambda: forkserver.ll_loop(root / "gone", "run", "seen"),
    ):
        with pytest.raises(FileNotFoundError):
            call()
    assert not (root / "seen.txt").exists()
