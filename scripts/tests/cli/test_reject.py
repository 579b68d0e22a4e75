"""`ll-loop reject` (cli/reject.py): approve's arguments, the other verdict."""

from __future__ import annotations

import argparse

import pytest
from support.project import LoopProject

from little_loops.cli.approve import answer_command
from little_loops.cli.reject import register
from little_loops.fsm.facts.outcomes import ExitCode

GATE = """\
    name: ship
    initial: ask
    states:
      ask:
        action_type: approval
        action: "Deploy?"
        on_success: done
        on_failure: undo
      undo:
        action: 'printf %s "${result.note}" > rejected.txt'
        next: done
      done:
        terminal: true
"""


def test_reject_takes_the_same_arguments() -> None:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command"), "answer no")
    args = parser.parse_args(["reject", "ship", "--note", "not today"])
    assert (args.command, args.loop, args.note) == ("reject", "ship", "not today")


def test_a_rejection_routes_on_failure(
    loop_project: LoopProject, capsys: pytest.CaptureFixture[str]
) -> None:
    loop_project.write("ship", GATE)
    assert loop_project.run("run", "ship").code == ExitCode.AWAITING_APPROVAL
    capsys.readouterr()
    assert answer_command("ship", "reject", "no", loops_dir=loop_project.loops) == 0
    assert capsys.readouterr().err.startswith("rejected state 'ask' of loop 'ship'")
    assert loop_project.run("resume", "ship").code == ExitCode.OK
    assert (loop_project.root / "rejected.txt").read_text() == "no"
