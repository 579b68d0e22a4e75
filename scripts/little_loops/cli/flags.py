"""The run flags of `run` and `resume` as parser arguments (argparse only: `--help` builds them)."""

from __future__ import annotations

import argparse


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
        "-q", "--quiet", action="store_true", help="print only the outcome line on stderr"
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
