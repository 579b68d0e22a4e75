"""Map a verdict to the next state's (raw) name, in the design doc's resolution order."""

from __future__ import annotations

from dataclasses import dataclass

from little_loops.fsm.definition.model import StateConfig
from little_loops.fsm.evaluators.spec import ERROR_VERDICT


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
    action or a failed LLM call, which would keep an unattended loop spending. For the
    same reason `next` is not taken when the action could not run (*action_failed*: its
    command could not be built, it timed out, its program is missing): only an error route
    (`on_error`, `error:`/`_error:`) continues from there.
    """
    if state.next is not None and not action_failed:
        return RouteChoice(state.next, "next")
    if verdict is None:
        return None
    if state.route is not None:
        table = state.route
        if verdict in table.routes:
            return RouteChoice(table.routes[verdict], f"route '{verdict}'")
        if verdict == ERROR_VERDICT:
            if table.error is not None:
                return RouteChoice(table.error, "route '_error'")
            return None
        if table.default is not None:
            return RouteChoice(table.default, "route '_' (default)")
        return None
    shorthand = {
        "success": state.on_success,
        "failure": state.on_failure,
        ERROR_VERDICT: state.on_error,
    }.get(verdict)
    if shorthand is not None:
        return RouteChoice(shorthand, f"on_{verdict}")
    return None
