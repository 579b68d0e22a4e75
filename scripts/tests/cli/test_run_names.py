"""A run goes by the name of the file it was started from: a copy of a loop file runs apart
from the original (real `ll-loop` processes, two runs at once)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from support import llproc

from little_loops.fsm.facts.outcomes import ExitCode

if TYPE_CHECKING:
    from support.project import LoopProject

WAIT = 60  # seconds: generous, for a loaded machine; every wait ends on an event first


def tutorial(marker: str, scope: str) -> str:
    """A loop whose `wait` state lasts until the file `go` exists (the marker in its
    command line lets a failed test's clean-up find it)."""
    return f"""\
name: tutorial
initial: wait
scope: [{scope}]
states:
  wait:
    action: "until [ -f go ]; do sleep 0.05; done # {marker}"
    next: done
  done:
    terminal: true
"""


def waiting(root: Path, key: str) -> bool:
    state = llproc.state(root, key)
    return state.get("status") == "running" and state.get("current_state") == "wait"


def finish(process: subprocess.Popen[str]) -> tuple[int, str]:
    _out, err = process.communicate(timeout=WAIT)
    return process.returncode, err


def test_a_copied_loop_runs_beside_the_original_under_its_file_name(
    loop_project: LoopProject, marker: str
) -> None:
    root = loop_project.root
    (root / ".loops" / "tutorial.yaml").write_text(tutorial(marker, "a"))
    first = llproc.start(root, "run", "tutorial")
    try:
        llproc.wait_for(lambda: waiting(root, "tutorial"), WAIT, "tutorial to wait")
        # `cp tutorial.yaml tut2.yaml`: a run of its own, refused only for the scope it shares.
        (root / ".loops" / "tut2.yaml").write_text(tutorial(marker, "a"))
        copy = llproc.ll_loop(root, "run", "tut2", timeout=WAIT)
        assert (copy.returncode, copy.stderr) == (
            ExitCode.FAILED,
            "ll-loop: error: scope 'a' of loop 'tut2' overlaps 'a' held by loop 'tutorial'"
            f" (pid {first.pid}); wait with --queue or stop it with 'll-loop stop tutorial'\n",
        )
        (root / ".loops" / "tut2.yaml").write_text(tutorial(marker, "b"))
        second = llproc.start(root, "run", "tut2")
        try:
            llproc.wait_for(lambda: waiting(root, "tut2"), WAIT, "tut2 to wait")
            listed = llproc.ll_loop(root, "list", "--running", timeout=WAIT).stdout.splitlines()
            assert [line.split()[:2] for line in listed] == [
                ["LOOP", "STATUS"],
                ["tut2", "running"],
                ["tutorial", "running"],
            ]
            status = llproc.ll_loop(root, "status", "tut2", timeout=WAIT).stdout
            assert status.splitlines()[:2] == [
                "loop:      tut2",
                f"status:    running (pid {second.pid})",
            ]
            # Stop one by its file's name; the other goes on; resume the stopped one.
            stopped = llproc.ll_loop(root, "stop", "tut2", timeout=WAIT)
            assert stopped.returncode == ExitCode.OK, stopped.stderr
            assert finish(second)[0] == ExitCode.STOPPED
            assert waiting(root, "tutorial")
        finally:
            second.kill()
        resumed = llproc.start(root, "resume", "tut2")
        try:
            llproc.wait_for(lambda: waiting(root, "tut2"), WAIT, "tut2 to wait again")
            (root / "go").touch()
            code, err = finish(resumed)
            assert code == ExitCode.OK, err
        finally:
            resumed.kill()
        code, err = finish(first)
        assert code == ExitCode.OK, err
    finally:
        first.kill()
    for key in ("tutorial", "tut2"):
        state = llproc.state(root, key)
        assert (state["loop_name"], state["status"]) == (key, "completed")
        assert state["loop_path"] == f".loops/{key}.yaml"


def test_a_run_saved_under_the_name_the_file_declares_is_still_found_and_resumed(
    loop_project: LoopProject, marker: str
) -> None:
    """Runs used to go by `name:`: a run saved that way is what the file's name means, for
    `status`, `list` and `resume`, until the file has runs of its own."""
    root = loop_project.root
    (root / ".loops" / "tutorial.yaml").write_text(tutorial(marker, "a"))
    older = llproc.start(root, "run", "tutorial")
    try:
        llproc.wait_for(lambda: waiting(root, "tutorial"), WAIT, "tutorial to wait")
        assert llproc.ll_loop(root, "stop", "tutorial", timeout=WAIT).returncode == ExitCode.OK
        assert finish(older)[0] == ExitCode.STOPPED
    finally:
        older.kill()
    # The file is renamed: its saved run is still named by the `name:` inside it.
    (root / ".loops" / "tutorial.yaml").rename(root / ".loops" / "greeting.yaml")
    status = llproc.ll_loop(root, "status", "greeting", timeout=WAIT)
    assert status.stdout.splitlines()[:2] == ["loop:      tutorial", "status:    stopped"]
    listed = llproc.ll_loop(root, "list", timeout=WAIT).stdout.splitlines()
    assert listed[1].split()[:3] == ["greeting", "fsm", "stopped"]
    resumed = llproc.start(root, "resume", "greeting")
    try:
        llproc.wait_for(lambda: waiting(root, "tutorial"), WAIT, "the old run to go on")
        (root / "go").touch()
        code, err = finish(resumed)
        assert code == ExitCode.OK, err
    finally:
        resumed.kill()
    assert llproc.state(root, "tutorial")["status"] == "completed"
    assert not (root / ".loops" / ".running" / "greeting.state.json").exists()
