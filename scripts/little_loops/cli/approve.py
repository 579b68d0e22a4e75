"""`ll-loop approve NAME [--note TEXT]`: answer a run's approval question with yes."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from little_loops.cli.resolve import project_loops_dir
from little_loops.cli.runref import add_run_argument


def register(subparsers: Any, summary: str) -> None:
    add_answer_parser(subparsers, "approve", summary)


def add_answer_parser(subparsers: Any, command: str, summary: str) -> None:
    """`approve` or `reject`: the same arguments, the other verdict."""
    verdict = "success" if command == "approve" else "failure"
    parser = subparsers.add_parser(
        command,
        help=summary,
        description=f"Give the approval state the run waits at the verdict {verdict}. A run "
        "that waits in its process (--wait-approval) goes on by itself; a stopped one goes on "
        "with `ll-loop resume NAME`.",
    )
    add_run_argument(parser)
    parser.add_argument(
        "--note", metavar="TEXT", default="", help="a note for the loop, read as ${result.note}"
    )
    parser.set_defaults(handler=_handler)


def answer_command(
    name: str, command: str, note: str = "", *, loops_dir: Path | None = None
) -> int:
    """Answer the question the run of NAME waits on; 0 once the answer is written."""
    loops_dir = project_loops_dir() if loops_dir is None else loops_dir
    from little_loops.cli.runref import run_name
    from little_loops.fsm.facts.outcomes import ExitCode
    from little_loops.fsm.facts.safetext import one_line
    from little_loops.fsm.runs.approvals import APPROVED, REJECTED, write_answer
    from little_loops.fsm.runs.control import can_stop, saved_run

    loop_name = run_name(name, loops_dir, active="approve")
    saved = saved_run(loop_name, loops_dir)
    verdict = APPROVED if command == "approve" else REJECTED
    question = write_answer(loop_name, loops_dir, saved, verdict, note)
    shown, state = one_line(loop_name), one_line(str(question.get("state")))
    done = "approved" if verdict == APPROVED else "rejected"
    if can_stop(saved, loops_dir):  # its process runs: it waits for the answer
        after = "the run waiting for it goes on"
    else:
        after = f"continue with: ll-loop resume {shown}"
    print(f"{done} state '{state}' of loop '{shown}'; {after}", file=sys.stderr)
    return ExitCode.OK


def _handler(args: argparse.Namespace) -> int:
    return answer_command(args.loop, args.command, args.note)
