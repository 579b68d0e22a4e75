"""little-loops' rehearsal of an action (`simulate --compat`): its output, exit code, verdict.

There, `simulate` runs the loop with every action replaced: the output is
`[simulated output for: ACTION]` and the exit code the scenario's (0 success, 1 failure,
2 error), and the state's evaluator reads them as in a run; the loop's max_steps is at most
20 there. Here an evaluator marked pure (`EvaluatorSpec.pure`: output, exit code and its
own keys alone) is run on them the same way; any other (a judge, git, a file) keeps the
scenario's verdict.
"""

from __future__ import annotations

import contextlib
from dataclasses import replace

from little_loops.fsm.definition.model.typed import FSMLoop, StateConfig
from little_loops.fsm.evaluators.spec import ERROR_VERDICT
from little_loops.fsm.facts.errors import InterpolationError
from little_loops.fsm.facts.verdict_words import FAILURE, SUCCESS
from little_loops.fsm.values.interpolation import InterpolationContext, interpolate

_EXIT_CODES = {SUCCESS: 0, FAILURE: 1, ERROR_VERDICT: 2}
# There, a rehearsal caps the loop's max_steps at this many steps (its `on_max_steps` route
# then runs), unless told otherwise.
SIMULATE_MAX_STEPS = 20


def capped(fsm: FSMLoop) -> FSMLoop:
    """*fsm* with its max_steps at most SIMULATE_MAX_STEPS, as little-loops rehearses it."""
    if fsm.max_steps is not None and fsm.max_steps <= SIMULATE_MAX_STEPS:
        return fsm
    return replace(fsm, max_steps=SIMULATE_MAX_STEPS)


def simulated(state: StateConfig, verdict: str | None) -> tuple[str, int]:
    """The output and exit code little-loops' simulate gives *state*'s action, for the
    scenario's *verdict* (None, or no action: nothing ran, an empty output and 0)."""
    if not state.action or verdict is None:
        return "", 0
    return f"[simulated output for: {state.action}]", _EXIT_CODES.get(verdict, 2)


def pure_verdict(
    state: StateConfig, output: str, exit_code: int, ctx: InterpolationContext
) -> tuple[str, str] | None:
    """The verdict *state*'s evaluator gives *output* and *exit_code*, and where it came
    from, when the evaluator is pure; else None. A `source:` that cannot be filled in is
    the output itself, as there."""
    from little_loops.fsm.evaluators.dispatch import evaluate  # not at --help
    from little_loops.fsm.evaluators.registry import is_pure

    config = state.effective_evaluate()
    if not is_pure(config.type):
        return None
    if config.source is not None:
        with contextlib.suppress(InterpolationError):
            output = interpolate(config.source, ctx)
        config = replace(config, source=None)
    result = evaluate(replace(config, theirs=True), output, exit_code, ctx)
    return result.verdict, f"{config.type} on the simulated output"
