"""`ll-loop simulate NAME --verdicts STATE=V1,V2`: walk a loop with scripted verdicts.

Nothing runs. The walk is this command's data, so it goes to stdout: one block per state
like the run display, then how it ended. Exit 0 when the walk reaches a terminal state,
1 when it fails (no valid transition, an undeclared target), 3 at max_iterations, and 2
when it cannot go on (the script ran out with no --default, a target known only at run
time) or the arguments are wrong.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from little_loops.cli.resolve import project_loops_dir, resolve_loop_path
from little_loops.fsm.facts.safetext import one_line

if TYPE_CHECKING:
    from little_loops.fsm.engine.simulation import SimulatedStep, SimulationResult

# As fsm/engine/scenarios.py SCENARIOS (a test holds them equal): not imported, so that
# `ll-loop --help` loads no engine module.
SCENARIO_NAMES = ("all-pass", "all-fail", "all-error", "first-fail", "alternating")
INDENT = " " * 7
INDENT_CHILD = " " * 4  # one level of sub-loop


def register(subparsers: Any, summary: str) -> None:
    parser = subparsers.add_parser(
        "simulate",
        help=summary,
        description=(
            "Walk a loop from its initial state with scripted verdicts instead of running "
            "its actions: prints the path, the actions it would run and the limits it would "
            "hit. Exit 0 when it reaches a terminal state, 1 when it fails, 3 at "
            "max_iterations, 2 when the script runs out or the arguments are wrong."
        ),
    )
    parser.add_argument("loop", metavar="NAME|PATH", help="loop name or loop file path")
    parser.add_argument(
        "--verdicts",
        action="append",
        default=[],
        metavar="STATE=V1,V2,...",
        help="verdicts for STATE, used in order (repeat for each state)",
    )
    parser.add_argument(
        "--branch-verdicts",
        action="append",
        default=[],
        metavar="STATE=V1,V2,...",
        help="how each branch of fan-out STATE ends (success, failure, stopped), in branch "
        "order; the state's verdict is their join (repeat for each fan-out state)",
    )
    parser.add_argument(
        "--default",
        metavar="VERDICT",
        help="verdict for a state whose scripted verdicts are used up (default: stop there)",
    )
    parser.add_argument(
        "--scenario",
        choices=SCENARIO_NAMES,
        help=(
            "verdicts by pattern for the states not given --verdicts: all-pass, all-fail, "
            "all-error, first-fail (the first action fails, the rest pass), alternating "
            "(odd actions fail, even ones pass)"
        ),
    )
    parser.add_argument(
        "--json", action="store_true", dest="as_json", help="print the walk as JSON"
    )
    parser.add_argument(
        "--compat",
        action="store_true",
        help="load the loop as written (for little-loops): our stricter checks are warnings, "
        "and the keys it reads otherwise have its meaning",
    )
    parser.set_defaults(handler=_handler)


def _handler(args: argparse.Namespace) -> int:
    return simulate_command(
        args.loop,
        parse_verdicts(args.verdicts),
        branches=parse_verdicts(args.branch_verdicts, "--branch-verdicts"),
        default=args.default,
        scenario=args.scenario,
        as_json=args.as_json,
        compat=args.compat,
    )


def parse_verdicts(items: Sequence[str], option: str = "--verdicts") -> dict[str, list[str]]:
    """`["check=failure,success", "fix=success"]` -> `{"check": ["failure", "success"], ...}`;
    a state given twice gets both lists, in order."""
    from little_loops.fsm.facts.errors import LoopDefinitionError

    script: dict[str, list[str]] = {}
    for item in items:
        state, sep, verdicts = item.partition("=")
        if not sep or not state.strip() or not verdicts.strip():
            raise LoopDefinitionError(
                f"{option} {item!r}: expected STATE=VERDICT[,VERDICT...], "
                "e.g. check=failure,success"
            )
        script.setdefault(state.strip(), []).extend(v.strip() for v in verdicts.split(","))
    return script


def _mark(verdict: str) -> str:
    from little_loops.fsm.evaluators.registry import verdict_went_well

    went_well = verdict_went_well(verdict)
    return "•" if went_well is None else "✓" if went_well else "✗"


def step_lines(step: SimulatedStep, max_iterations: int) -> list[str]:
    """The lines of one step: `[1/10] check → pytest`, the verdict, where it goes."""
    head = f"[{step.iteration}/{max_iterations}] {step.state}"
    if step.action is not None:
        first, *rest = step.action.splitlines() or [""]
        lines = [f"{head} → {first}", *(f"{INDENT}  {line}" for line in rest)]
    else:
        lines = [head]
    lines.extend(f"{INDENT}! {note}" for note in step.notes)
    lines.extend(
        f"{INDENT}⇉ {one_line(b['branch'])}: {b['verdict']} (scripted)" for b in step.branches
    )
    if step.verdict is not None:
        lines.append(f"{INDENT}{_mark(step.verdict)} {step.verdict} ({step.verdict_from})")
    if step.reason == "maintain restart":
        lines.append(f"{INDENT}↻ maintain: restarting at {step.target}")
    elif step.target is not None:
        lines.append(f"{INDENT}→ {step.target} ({step.reason})")
    return [INDENT_CHILD * step.depth + line for line in lines]  # a sub-loop's: indented


def outcome_line(result: SimulationResult) -> str:
    """`Simulation ended: done (2 iterations)`, or why the walk stopped."""
    from little_loops.fsm.engine.simulation import MAX_ITERATIONS, TERMINAL, TERMINAL_FAILURE

    n = result.iterations
    count = f"{n} iteration{'' if n == 1 else 's'}"
    if result.terminated_by == TERMINAL:
        return f"Simulation ended: {result.final_state} ({count})"
    if result.terminated_by == TERMINAL_FAILURE:
        return f"Simulation ended in {result.final_state}, a failure: {result.message} ({count})"
    if result.terminated_by == MAX_ITERATIONS:
        return f"Simulation stopped: {result.message} ({count})"
    return f"Simulation stopped in {result.final_state}: {result.message} ({count})"


def format_result(result: SimulationResult) -> str:
    lines: list[str] = []
    for step in result.steps:
        lines.extend(step_lines(step, result.max_iterations))
    lines.append("")
    lines.append(outcome_line(result))
    for state, verdicts in result.unused.items():
        lines.append(f"Unused scripted verdicts: {state}={','.join(verdicts)}")
    lines.extend(f"Note: {note}" for note in result.notes)
    return "\n".join(lines) + "\n"


def simulate_command(
    name_or_path: str,
    verdicts: dict[str, list[str]],
    *,
    branches: dict[str, list[str]] | None = None,
    default: str | None = None,
    scenario: str | None = None,
    as_json: bool = False,
    loops_dir: Path | None = None,
    out: TextIO | None = None,
    compat: bool = False,
) -> int:
    """Simulate one loop and print the walk; returns the exit code for how it ended."""
    loops_dir = project_loops_dir() if loops_dir is None else loops_dir
    # Imported here so that `ll-loop --help` does not load YAML and the validators.
    from little_loops.fsm.engine.simulate import simulate
    from little_loops.fsm.validate.loopfile import load_and_validate

    fsm = load_and_validate(resolve_loop_path(name_or_path, loops_dir), compat=compat)
    result = simulate(fsm, verdicts, default, scenario=scenario, branches=branches)
    stream = sys.stdout if out is None else out
    if as_json:
        import json

        json.dump(result.to_dict(), stream, indent=2, ensure_ascii=False)
        stream.write("\n")
    else:
        stream.write(format_result(result))
    return result.exit_code
