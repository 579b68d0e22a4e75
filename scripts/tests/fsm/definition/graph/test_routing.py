"""Map a verdict to the next state (definition/graph/routing.py)."""

from __future__ import annotations

from typing import Any

from little_loops.fsm.definition.graph.routing import (
    RouteChoice,
    StepOutcome,
    follow_route,
    illegal_route,
    no_route,
    resolve_route,
)
from little_loops.fsm.definition.model.typed import StateConfig
from little_loops.fsm.values.interpolation import InterpolationContext


def _state(data: dict[str, Any]) -> StateConfig:
    return StateConfig.from_dict(data)


def test_resolve_route_in_resolution_order() -> None:
    state = _state({"action": "x", "route": {"ok": "a", "_": "b"}, "on_success": "c"})
    assert resolve_route(state, "ok") == RouteChoice("a", "route 'ok'")
    assert resolve_route(state, "other") == RouteChoice("b", "route '_' (default)")
    assert resolve_route(state, "error") is None  # `_` never hides an error
    assert resolve_route(state, None) is None
    shorthand = _state({"action": "x", "on_success": "c", "on_error": "d"})
    assert resolve_route(shorthand, "success") == RouteChoice("c", "on_success")
    # a failure with no route of its own takes the error route (little-loops' rule)
    assert resolve_route(shorthand, "failure") == RouteChoice("d", "on_error (failure)")
    assert resolve_route(_state({"action": "x", "on_success": "c"}), "failure") is None


def test_next_is_not_taken_when_the_action_could_not_run() -> None:
    state = _state({"action": "x", "next": "a", "on_error": "e"})
    assert resolve_route(state, "failure") == RouteChoice("a", "next")
    assert resolve_route(state, "error", action_failed=True) == RouteChoice("e", "on_error")
    assert resolve_route(_state({"action": "x", "next": "a"}), None, action_failed=True) is None


def test_follow_route_resolves_current_and_references() -> None:
    ctx = InterpolationContext(context={"where": "done"})
    state = _state({"action": "x", "route": {"ok": "${context.where}", "again": "$current"}})
    assert follow_route(state, "ok", ctx, "s") == StepOutcome("done", "ok", "route 'ok'")
    assert follow_route(state, "again", ctx, "s") == StepOutcome(
        "s", "again", "route 'again' ($current)"
    )
    assert follow_route(state, "nope", ctx, "s") == StepOutcome(verdict="nope")
    broken = _state({"action": "x", "next": "${context.missing}"})
    outcome = follow_route(broken, "ok", ctx, "s")
    assert (outcome.target, outcome.stop) == (None, "error")
    assert outcome.error is not None
    assert outcome.error.startswith("route of state 's': ")


def test_why_a_run_ends_without_a_route() -> None:
    assert no_route("s", StepOutcome(verdict="odd")) == (
        "no valid transition from 's' for verdict 'odd'"
    )
    assert no_route("s", StepOutcome(error="boom")) == (
        "no valid transition from 's' for verdict '(none)': boom"
    )
    assert illegal_route("s", "t", "ok", ["s", "u"]) == (
        "illegal transition s → t: 't' is not a declared state (verdict 'ok'; declared: s, u)"
    )
