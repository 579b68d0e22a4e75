"""A forge's CLI is run with a deadline and its output kept to a bounded tail."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from support import slowdown

from little_loops.fsm.forges import program
from little_loops.fsm.forges.forge import ForgeError


def test_stdin_goes_in_and_the_exit_code_and_both_outputs_come_back(tmp_path: Path) -> None:
    ran = program.run_program(
        ["bash", "-c", "cat; echo oops >&2; exit 3"], tmp_path, dict(os.environ), "the body\n"
    )
    assert (ran.code, ran.out, ran.err) == (3, "the body\n", "oops\n")
    assert ran.problem() == "oops"


def test_only_the_tail_of_a_huge_output_is_kept(tmp_path: Path) -> None:
    script = "head -c 3000000 /dev/zero | tr '\\0' x; echo; echo the end"
    ran = program.run_program(["bash", "-c", script], tmp_path, dict(os.environ), out_bytes=100)
    assert len(ran.out) == 100
    assert ran.out.endswith("x\nthe end\n")


def test_a_missing_program_is_not_installed(tmp_path: Path) -> None:
    with pytest.raises(program.NotInstalled, match="^no-such-forge-cli is not on PATH$"):
        program.run_program(["no-such-forge-cli", "x"], tmp_path, dict(os.environ))


def test_a_call_that_does_not_finish_is_ended_with_what_it_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(program, "TIMEOUT", slowdown.scaled(0.5))
    pids = tmp_path / "pids"
    script = f"sleep 300 & echo $! > {pids}; wait"
    with pytest.raises(ForgeError, match=r"^`bash -c sleep 300 & .*` did not finish in \d+s$"):
        program.run_program(["bash", "-c", script], tmp_path, dict(os.environ))
    stat = Path(f"/proc/{int(pids.read_text())}/stat")
    deadline = time.monotonic() + slowdown.scaled(10)
    while stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] != "Z":
        assert time.monotonic() < deadline, "the call's child outlived it"
        time.sleep(0.05)
