"""Map a verdict to the next state's (raw) name, in the design doc's resolution order."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from little_loops.fsm.definition.graph.transitions import NEXT_KEY, Transition, transitions
from little_loops.fsm.definition.model.typed import CURRENT_STATE_TOKEN, StateConfig
from little_loops.fsm.evaluators.spec import ERROR_VERDICT
from little_loops.fsm.facts.errors import InterpolationError
from little_loops.fsm.facts.verdict_words import FAILURE
from little_loops.fsm.values.interpolation import InterpolationContext, interpolate

if TYPE_CHECKING:
    from little_loops.fsm.actions.request import ActionResult


@dataclass
class StepOutcome:
    """What running one state produced: a target to go to, or a reason to stop."""

    target: str | None = None
    verdict: str | None = None
    reason: str = ""
    stop: str | None = None  # a terminated_by value
    error: str | None = None
    again: bool = False  # run the step again (after its wait) instead of routing
    rejudge: ActionResult | None = None  # with again: only evaluate this result again


@dataclass(frozen=True)
class RouteChoice:
    """Where a verdict leads: the raw target (may be `$current` or hold `${...}`) and why."""

    target: str
    reason: str


def resolve_route(
    state: StateConfig, verdict: str | None, *, action_failed: bool = False
) -> RouteChoice | None:
    """The route *state* declares for *verdict*, or None when it declares none.

    Order: `next` (unconditional), then the `route:` table (which overrides the
    shorthand), then `on_success`/`on_failure`/`on_error`. In a table, an `error`
    verdict uses `error:` or `_error:`, never `_`: a catch-all must not hide a crashed
    action or a failed LLM call, which would keep an unattended loop spending (with
    `--compat`, `_` takes it, before `_error:`, as little-loops' does). For the
    same reason `next` is not taken when the action could not run (*action_failed*: its
    command could not be built, it timed out, its program is missing): only an error route
    (`on_error`, `error:`/`_error:`) continues from there. A `failure` that no route
    takes goes to the error route, if there is one (little-loops' rule).
    """
    for transition in transitions(state):
        if transition.key == NEXT_KEY:
            if action_failed:
                continue
        elif verdict is None or not transition.answers(verdict):
            continue
        return RouteChoice(transition.target, transition.reason)
    if verdict == FAILURE:  # a failure with no route of its own takes the error route
        found = resolve_route(state, ERROR_VERDICT, action_failed=True)
        return None if found is None else RouteChoice(found.target, f"{found.reason} (failure)")
    return None


def error_way(state: StateConfig) -> Transition | None:
    """*state*'s error route (`on_error`, `error:`/`_error:`), its `next:` aside, or None."""
    return next((t for t in transitions(state) if t.is_error_route), None)


def next_fails(state: StateConfig, exit_code: int | None) -> bool:
    """Whether a `next:` state whose action exited with *exit_code* takes its error route
    instead: a non-zero exit does when the state has one (`on_error`, `error:`/`_error:`)."""
    if state.next is None or exit_code in (0, None):
        return False
    return error_way(state) is not None


def follow_route(
    state: StateConfig,
    verdict: str | None,
    ctx: InterpolationContext,
    current: str,
    *,
    action_failed: bool = False,
) -> StepOutcome:
    """Where the state *current* goes for *verdict*: `$current` and `${...}` resolved."""
    choice = resolve_route(state, verdict, action_failed=action_failed)
    if choice is None:
        return StepOutcome(verdict=verdict)
    if choice.target == CURRENT_STATE_TOKEN:
        return StepOutcome(current, verdict, f"{choice.reason} ($current)")
    try:
        target = interpolate(choice.target, ctx)
    except InterpolationError as exc:
        return StepOutcome(
            verdict=verdict, stop="error", error=f"route of state '{current}': {exc}"
        )
    return StepOutcome(target, verdict, choice.reason)


def no_route(state_name: str, outcome: StepOutcome) -> str:
    """Why the run ends when no transition of state *state_name* matches *outcome*.

    A sub-loop's error comes with its child's own reason (`no valid transition from ...:`
    first); a reason already there is not said again, so a loop that runs itself, directly
    or through another, says each once and not once per level of nesting."""
    shown = outcome.verdict if outcome.verdict is not None else "(none)"
    detail = f"{_NO_ROUTE}{state_name}' for verdict '{shown}'"
    if not outcome.error:
        return detail
    said, rest = set(), outcome.error
    while rest.startswith(_NO_ROUTE):  # the reasons that lead the error, one by one
        reason, found, rest = rest.partition("': ")
        if not found:
            break
        said.add(f"{reason}'")
    return outcome.error if detail in said else f"{detail}: {outcome.error}"


_NO_ROUTE = "no valid transition from '"


def illegal_route(
    state_name: str, target: str, verdict: str | None, declared: Iterable[str]
) -> str:
    """Why the run ends when a route from *state_name* names an undeclared *target*."""
    return (
        f"illegal transition {state_name} → {target}: '{target}' is not a declared state"
        f" (verdict {verdict!r}; declared: {', '.join(declared)})"
    )
