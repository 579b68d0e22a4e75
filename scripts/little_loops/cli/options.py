"""The RunOptions the run flags of `run` and `resume` make (the flags are in cli/flags.py)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from little_loops.fsm.runs.overrides import Overrides


@dataclass(frozen=True)
class RunOptions(Overrides):
    """The run flags: the overrides a resume repeats, and how this run is shown and queued.

    `None`/False means "not given" (the loop file's value applies)."""

    queue: bool = False
    quiet: bool = False
    as_json: bool = False
    no_color: bool = False

    def argv(self) -> list[str]:
        """These options as `ll-loop run` flags (what a background run is started with)."""
        out: list[str] = []
        if self.max_iterations is not None:
            out += ["--max-iterations", str(self.max_iterations)]
        if self.no_llm:
            out.append("--no-llm")
        if self.llm_model is not None:
            out += ["--llm-model", self.llm_model]
        if self.max_cost is not None:
            out += ["--max-cost", repr(self.max_cost)]
        for flag, given in (
            ("--queue", self.queue),
            ("--quiet", self.quiet),
            ("--json", self.as_json),
            ("--no-color", self.no_color),
        ):
            if given:
                out.append(flag)
        return out


def options_from_args(args: argparse.Namespace) -> RunOptions:
    """The RunOptions the parsed run flags stand for."""
    return RunOptions(
        max_iterations=args.max_iterations,
        no_llm=args.no_llm,
        llm_model=args.llm_model,
        max_cost=args.max_cost,
        queue=args.queue,
        quiet=args.quiet,
        as_json=args.as_json,
        no_color=args.no_color,
    )
