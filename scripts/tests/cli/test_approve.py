"""`ll-loop approve` (cli/approve.py): its arguments, and the answer written for a waiting run."""

from __future__ import annotations

import argparse

import pytest
from support.project import LoopProject

from little_loops.cli.approve import answer_command, register
from little_loops.fsm.facts.outcomes import ExitCode

GATE = """\
    name: ship
    initial: ask
    states:
      ask:
        action_type: approval
        action: "Deploy?"
        on_success: deploy
        on_failure: done
      deploy:
        action: 'printf %s "${result.note}" > deployed.txt'
        next: done
      done:
        terminal: true
"""


def test_the_arguments() -> None:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command"), "answer yes")
    args = parser.parse_args(["approve", "ship", "--note", "go"])
    assert (args.command, args.loop, args.note) == ("approve", "ship", "go")
    assert callable(args.handler)
    assert parser.parse_args(["approve", "ship"]).note == ""


def test_an_answer_lets_a_stopped_run_go_on(
    loop_project: LoopProject, capsys: pytest.CaptureFixture[str]
) -> None:
    loop_project.write("ship", GATE)
    assert loop_project.run("run", "ship").code == ExitCode.AWAITING_APPROVAL
    capsys.readouterr()
    assert answer_command("ship", "approve", "shipped", loops_dir=loop_project.loops) == 0
    assert capsys.readouterr().err == (
        "approved state 'ask' of loop 'ship'; continue with: ll-loop resume ship\n"
    )
    assert loop_project.run("resume", "ship").code == ExitCode.OK
    assert (loop_project.root / "deployed.txt").read_text() == "shipped"
