"""The run flags shared by `run` and `resume`: parser arguments made from the table of run flags."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from little_loops.cli import parameters
from little_loops.fsm.definition.model.arguments import Arguments
from little_loops.fsm.runs import flags
from little_loops.fsm.runs.overrides import RunFlags


@dataclass(frozen=True)
class RunOptions(RunFlags):
    """The run flags (`RunFlags`, one row each) and, for `run`, the loop's parameter values.

    `None`/False means "not given" (the loop file's value applies)."""

    arguments: Arguments = field(default_factory=Arguments)  # parameter values (run only)

    def argv(self) -> list[str]:
        """These options as `ll-loop run` flags (what a background run is started with)."""
        return super().argv() + parameters.argv(self.arguments)


def argparse_type(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """*parse* as an argparse type: its ValueError's message is what argparse prints."""

    def convert(text: str) -> Any:
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = parse.__name__
    return convert


positive_int = argparse_type(flags.positive_int)  # argparse type: an integer of at least 1


def add_run_flags(parser: argparse.ArgumentParser) -> None:
    """The flags that shape a run (run and resume both take them): a row of RunFlags each."""
    for name, row in flags.flag_rows(RunFlags):
        how: dict[str, Any] = {"dest": name, "help": row.help}
        if row.kind.paired:  # `--no-x` first: the row's own option is the dest's last action
            both = parser.add_mutually_exclusive_group()
            both.add_argument(row.negative, dest=name, action="store_const", const=False)
            both.add_argument(*row.options, action="store_const", const=True, **how)
            continue
        if not row.kind.takes_value:
            how["action"] = "store_true"
        else:
            how["metavar"] = row.metavar
            if row.kind.parse is not None:
                how["type"] = argparse_type(row.kind.parse)
        parser.add_argument(*row.options, **how)


def options_from_args(args: argparse.Namespace) -> RunOptions:
    """The RunOptions the parsed run flags stand for."""
    given: dict[str, Any] = {name: getattr(args, name) for name, _ in flags.flag_rows(RunFlags)}
    return RunOptions(**given)


def add_background_flag(parser: argparse.ArgumentParser) -> None:
    """`--background`, for `run` and `resume`."""
    from pathlib import Path

    from little_loops.fsm.facts.layout import LOOPS_DIR_NAME, run_files

    log = run_files("NAME", Path(LOOPS_DIR_NAME)).log
    parser.add_argument(
        "--background",
        action="store_true",
        help=f"detach; output goes to {log} and the pid is printed",
    )
