"""The learning state kind (`type: learning`): prove each target from the registry.

A target without a proven record gets little-loops' `/ll:explore-api`, then a second look.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.definition.graph.routing import StepOutcome, follow_route
from little_loops.fsm.definition.graph.verdicts import state_verdicts
from little_loops.fsm.definition.model.learning import LEARNING_TYPE, LearningConfig
from little_loops.fsm.definition.model.typed import OUTCOME_SUCCESS, StateConfig
from little_loops.fsm.engine import events
from little_loops.fsm.engine.kinds.action import error_outcome, run_action, stop_after_action
from little_loops.fsm.engine.learning_tests import REFUTED, STALE, Staleness, status_of
from little_loops.fsm.engine.rules.fallback import agents_of
from little_loops.fsm.engine.run import Run
from little_loops.fsm.facts.errors import InterpolationError, LoopError
from little_loops.fsm.facts.events import Event
from little_loops.fsm.values.interpolation import InterpolationContext, interpolate

EXPLORE_COMMAND = "/ll:explore-api"  # little-loops' command that proves a target
NOT_FOUND_EXIT = 127  # bash: the agent's command is not there
# What to install when the command cannot run, for the one-line error.
EXPLORE_NEEDS = "Claude Code with little-loops' ll plugin, or an agent: that runs it"


def run_state(run: Run, name: str, state: StateConfig, done: ActionResult | None) -> StepOutcome:
    """Prove every target of learning state *name* in order: `success` when all are proven;
    the blocked verdict at the first refuted one, or one still unproven after its retries."""
    assert state.learning is not None
    root = run.config.cwd or Path.cwd()
    try:
        targets, retries = resolved(state.learning, run.context())
        staleness = Staleness.of_project(root)
        for target in targets:
            status, tries = status_of(root, target, staleness), 0
            while status is None or status == STALE:
                if tries >= retries:
                    return _blocked(run, name, state, target, "retries_exhausted", tries)
                failed = _explore(run, name, state, target)
                if failed is not None:
                    return failed
                status, tries = status_of(root, target, staleness), tries + 1
            if status == REFUTED:
                return _blocked(run, name, state, target, "refuted", tries)
    except (InterpolationError, LoopError, ValueError) as exc:
        return error_outcome(run, name, state, f"learning state '{name}': {exc}")
    return _routed(run, name, state, OUTCOME_SUCCESS, {"targets": targets})


def resolved(learning: LearningConfig, ctx: InterpolationContext) -> tuple[list[str], int]:
    """The targets (`targets_csv` filled in and split at commas, else `targets`) and the
    `/ll:explore-api` runs allowed for each (`max_retries_expr` filled in, else max_retries)."""
    if learning.targets_csv is not None:
        text = interpolate(learning.targets_csv, ctx)
        targets = [part.strip() for part in text.split(",") if part.strip()]
    else:
        targets = list(learning.targets)
    retries = learning.max_retries
    if learning.max_retries_expr is not None:
        text = interpolate(learning.max_retries_expr, ctx).strip()
        try:
            retries = int(text)
        except ValueError:
            raise ValueError(f"max_retries_expr: expected a whole number, got {text!r}") from None
    return targets, retries


def _explore(run: Run, name: str, state: StateConfig, target: str) -> StepOutcome | None:
    """Run `/ll:explore-api TARGET` on the state's agent (a prompt, as little-loops does);
    the run's end when it was stopped, an error when the command could not run at all."""
    remedy = dataclasses.replace(
        state, action=f"{EXPLORE_COMMAND} {target}", action_type=None, capture=None
    )
    _, result = run_action(run, name, remedy, run.context(), agents_of(run.fsm, remedy))
    stop = stop_after_action(run, result)
    if stop is not None:
        return stop
    if result.error is not None and result.exit_code == NOT_FOUND_EXIT:
        msg = (
            f"learning state '{name}' cannot run {EXPLORE_COMMAND} for '{target}' "
            f"(it needs {EXPLORE_NEEDS}): {result.error}"
        )
        return error_outcome(run, name, state, msg)
    return None


def _blocked(
    run: Run, name: str, state: StateConfig, target: str, reason: str, tries: int
) -> StepOutcome:
    """The blocked verdict (`on_blocked`, else the failure route) for *target*."""
    known = state_verdicts(run.fsm, state)
    verdict = known.verdicts[-1] if known is not None and known.verdicts else "failure"
    details = {"target": target, "reason": reason, "explored": tries}
    return _routed(run, name, state, verdict, details)


def _routed(
    run: Run, name: str, state: StateConfig, verdict: str, details: dict[str, Any]
) -> StepOutcome:
    """*verdict* of learning state *name*: emitted, kept for `${result.*}`/`${prev.*}`, routed."""
    run.memory.last_result = {"verdict": verdict, "details": details, **details}
    run.memory.prev_result = {
        "state": name,
        "output": "",
        "stderr": "",
        "exit_code": 0 if verdict == OUTCOME_SUCCESS else 1,
        "verdict": verdict,
    }
    run.emit(Event.EVALUATE, events.evaluation(name, LEARNING_TYPE, verdict, details))
    return follow_route(state, verdict, run.context(), name)
