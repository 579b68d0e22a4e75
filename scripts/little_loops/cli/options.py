"""The run flags shared by `run` and `resume`: parser arguments and the RunOptions they make."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

from little_loops.cli import parameters
from little_loops.fsm.definition.arguments import Arguments
from little_loops.fsm.runs.overrides import Overrides


@dataclass(frozen=True)
class RunOptions(Overrides):
    """The run flags: the overrides a resume repeats, and how this run is shown and queued.

    `None`/False means "not given" (the loop file's value applies)."""

    queue: bool = False
    quiet: bool = False
    verbose: bool = False
    as_json: bool = False
    no_color: bool = False
    arguments: Arguments = field(default_factory=Arguments)  # parameter values (run only)

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
        if self.wait_approval:
            out.append("--wait-approval")
        if self.model is not None:
            out += ["--model", self.model]
        for flag, given in (
            ("--queue", self.queue),
            ("--quiet", self.quiet),
            ("--verbose", self.verbose),
            ("--json", self.as_json),
            ("--no-color", self.no_color),
        ):
            if given:
                out.append(flag)
        return out + parameters.argv(self.arguments)


def positive_int(text: str) -> int:
    """argparse type: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def positive_dollars(text: str) -> float:
    """argparse type: a spend limit in US dollars, more than 0."""
    try:
        value = float(text.removeprefix("$"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an amount in dollars, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be more than 0, got {text}")
    return value


def add_run_flags(parser: argparse.ArgumentParser) -> None:
    """The flags that shape a run (run and resume both take them)."""
    parser.add_argument(
        "-n",
        "--max-iterations",
        type=positive_int,
        metavar="N",
        help="stop after N iterations (overrides max_iterations of the loop file)",
    )
    parser.add_argument(
        "--no-llm",
        action="store_true",
        help="never call the LLM: llm_structured states are judged by exit code",
    )
    parser.add_argument("--llm-model", metavar="MODEL", help="the model of the LLM evaluator")
    parser.add_argument(
        "--model",
        metavar="MODEL",
        help="the Claude model of every prompt and slash-command state (overrides claude: model)",
    )
    parser.add_argument(
        "--max-cost",
        type=positive_dollars,
        metavar="USD",
        help="end the run (exit 6) before the next paid step once Claude spend reaches USD "
        "(overrides max_cost_usd of the loop file)",
    )
    parser.add_argument(
        "--queue",
        action="store_true",
        help="wait for a loop holding an overlapping scope instead of refusing to start",
    )
    parser.add_argument(
        "--wait-approval",
        action="store_true",
        help="at an approval state, wait for `ll-loop approve`/`reject` and go on "
        "(default: stop there, exit 9, and go on with `ll-loop resume`)",
    )
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="print only the outcome line on stderr"
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="show each action's output live under its state line (Claude's as text)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        dest="as_json",
        help="print the final result as JSON on stdout",
    )
    parser.add_argument(
        "--no-color", action="store_true", help="no colours (also when NO_COLOR is set)"
    )


def options_from_args(args: argparse.Namespace) -> RunOptions:
    """The RunOptions the parsed run flags stand for."""
    return RunOptions(
        max_iterations=args.max_iterations,
        no_llm=args.no_llm,
        llm_model=args.llm_model,
        max_cost=args.max_cost,
        wait_approval=args.wait_approval,
        model=args.model,
        queue=args.queue,
        quiet=args.quiet,
        verbose=args.verbose,
        as_json=args.as_json,
        no_color=args.no_color,
    )


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
