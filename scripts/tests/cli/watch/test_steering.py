"""What `watch`'s keys do: a run of another user's is only looked at; the HTML report."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest
from support import llproc

from little_loops.cli.watch import steering
from little_loops.fsm.facts.outcomes import ExitCode
from little_loops.fsm.processes.pids import pid_alive

SLOW = """\
    name: slow
    initial: nap
    states:
      nap:
        action: sleep {marker}
        next: done
      done:
        terminal: true
"""


@pytest.mark.skipif(os.getuid() != 0, reason="giving a file to another user needs root")
def test_a_run_of_another_user_is_read_only(tmp_path: Path, marker: str) -> None:
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "slow.yaml").write_text(textwrap.dedent(SLOW.format(marker=marker)))
    started = llproc.console(tmp_path, "run", "slow", "--background")
    assert started.returncode == ExitCode.OK, started.stderr
    pid = int(started.stdout)
    state = tmp_path / ".loops" / ".running" / "slow.state.json"
    try:
        llproc.wait_for(lambda: len(llproc.sleepers(marker)) == 1, timeout=30, what="the sleep")
        os.chown(state, 65534, 65534)
        why = "read-only: the files of run slow belong to another user"
        assert steering.stop("slow", tmp_path / ".loops") == (1, why)
        assert steering.resume("slow", tmp_path / ".loops") == (1, why)
        assert steering.answer("slow", tmp_path / ".loops", True, "x") == (1, why)
        assert pid_alive(pid)
    finally:
        os.chown(state, 0, 0)
        llproc.console(tmp_path, "stop", "slow")


def test_stop_of_a_run_that_ended_says_so(tmp_path: Path) -> None:
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "quick.yaml").write_text(
        "name: quick\ninitial: done\nstates:\n  done:\n    action: echo hi\n    terminal: true\n"
    )
    assert llproc.console(tmp_path, "run", "quick").returncode == ExitCode.OK
    code, said = steering.stop("quick", tmp_path / ".loops")
    assert code == ExitCode.FAILED
    assert said == "ll-loop: loop 'quick' is not running (last status: completed)"


def test_the_html_report_is_written_outside_the_run(tmp_path: Path) -> None:
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "quick.yaml").write_text(
        "name: quick\ninitial: done\nstates:\n  done:\n    action: echo hi\n    terminal: true\n"
    )
    assert llproc.console(tmp_path, "run", "quick").returncode == ExitCode.OK
    code, said = steering.html_report("quick", tmp_path / ".loops")
    assert code == 0
    assert said.startswith("HTML report written: ")
    path = Path(said.removeprefix("HTML report written: ").removesuffix(" (open it in a browser)"))
    try:
        assert path.parent != tmp_path / ".loops" / ".running"
        assert "<html" in path.read_text()
    finally:
        path.unlink()


def test_an_answer_for_a_run_replaced_under_its_name_acts_on_none(tmp_path: Path) -> None:
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "ask.yaml").write_text(
        "name: ask\ninitial: q\nstates:\n  q:\n    action_type: approval\n    action: Go?\n"
        "    on_success: done\n    on_failure: done\n  done:\n    terminal: true\n"
    )
    loops = tmp_path / ".loops"
    assert llproc.console(tmp_path, "run", "ask").returncode == ExitCode.AWAITING_APPROVAL
    asked = steering.run_id_of("ask", loops)
    assert asked is not None
    assert llproc.console(tmp_path, "stop", "ask").returncode in (ExitCode.OK, ExitCode.FAILED)
    assert llproc.console(tmp_path, "run", "ask").returncode == ExitCode.AWAITING_APPROVAL
    now = steering.run_id_of("ask", loops)
    assert now not in (None, asked)  # another run waits under the same name
    code, said = steering.answer("ask", loops, True, "ok", run_id=asked)
    assert code == ExitCode.FAILED
    assert said == f"run ask is now another run ({now}, not {asked}); nothing done"
    assert not (loops / ".running" / "ask.approval.json").exists()
    assert steering.answer("ask", loops, True, "ok", run_id=now)[0] == ExitCode.OK
