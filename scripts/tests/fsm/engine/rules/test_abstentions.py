"""The `--compat` hold on an unrouted `cannot_judge` (engine/rules/abstentions.py)."""

from __future__ import annotations

from dataclasses import replace

from support.engine_parts import loop

from little_loops.fsm.definition.graph.routing import StepOutcome
from little_loops.fsm.definition.model.blocks import RouteConfig
from little_loops.fsm.definition.model.typed import FSMLoop, StateConfig
from little_loops.fsm.engine.records import ExecutorSnapshot
from little_loops.fsm.engine.rules.abstentions import Abstentions, routes_exactly
from little_loops.fsm.evaluators.judge_theirs import HOLD_CAP
from little_loops.fsm.values.interpolation import InterpolationContext

CTX = InterpolationContext(context={"fix": "repair"}, env={})
# A judged state with a route table: its `_` catches cannot_judge, which must not count.
TABLE = StateConfig(
    action="review",
    route=RouteConfig(routes={"success": "out", "failure": "work"}, default="work", error="fix"),
)
SHORTHAND = StateConfig(action="review", on_success="out", on_failure="work")
ROUTED = StateConfig(
    action="review", route=RouteConfig(routes={"cannot_judge": "ask", "success": "out"})
)


def compat(state: StateConfig, theirs: bool = True) -> FSMLoop:
    fsm = loop(
        {
            "work": state,
            "fix": StateConfig(action="fix", next="work"),
            "ask": StateConfig(terminal=True),
            "out": StateConfig(terminal=True),
        }
    )
    return replace(fsm, theirs=theirs)


def test_routes_exactly_is_a_route_for_the_verdict_itself() -> None:
    assert routes_exactly(ROUTED, "cannot_judge")
    assert routes_exactly(ROUTED, "success")
    assert not routes_exactly(ROUTED, "cannot_judge_uncertain")
    assert not routes_exactly(TABLE, "cannot_judge")  # `_` does not count
    assert not routes_exactly(TABLE, "error")  # nor does the error route `_error`
    assert routes_exactly(SHORTHAND, "failure")
    assert not routes_exactly(SHORTHAND, "cannot_judge")


def test_held_up_to_the_cap_then_the_error_route() -> None:
    rule = Abstentions(compat(TABLE))
    for count in range(1, HOLD_CAP + 1):
        held = rule.judged("work", TABLE, "cannot_judge", CTX)
        assert held == StepOutcome(
            "work",
            "cannot_judge",
            f"cannot_judge held ({count} of {HOLD_CAP}): no route for it, judged again",
        )
        assert rule.dump() == {"abstentions": {"work": count}}
    out = rule.judged("work", TABLE, "cannot_judge_uncertain", CTX)
    assert out is not None
    assert (out.target, out.verdict) == ("fix", "cannot_judge_uncertain")
    assert out.reason.endswith(f"(cannot_judge_uncertain held {HOLD_CAP} times: its error route)")
    assert rule.dump() == {"abstentions": {}}  # the count starts again
    assert rule.judged("work", TABLE, "cannot_judge", CTX) == StepOutcome(
        "work",
        "cannot_judge",
        f"cannot_judge held (1 of {HOLD_CAP}): no route for it, judged again",
    )


def test_past_the_cap_with_no_error_route_no_valid_transition() -> None:
    rule = Abstentions(compat(SHORTHAND))
    rule.held = {"work": HOLD_CAP}
    out = rule.judged("work", SHORTHAND, "cannot_judge", CTX)
    assert out == StepOutcome(
        verdict="cannot_judge",
        error=f"cannot_judge held {HOLD_CAP} times: its error route, and the state has none",
    )
    assert out.target is None


def test_the_error_route_target_is_filled_in() -> None:
    state = StateConfig(action="review", on_success="out", on_error="${context.fix}")
    rule = Abstentions(compat(state))
    rule.held = {"work": HOLD_CAP}
    out = rule.judged("work", state, "cannot_judge", CTX)
    assert out is not None
    assert (out.target, out.verdict) == ("repair", "cannot_judge")


def test_another_verdict_resets_the_count_and_is_routed_as_usual() -> None:
    rule = Abstentions(compat(TABLE))
    rule.judged("work", TABLE, "cannot_judge", CTX)
    rule.judged("fix", TABLE, "cannot_judge", CTX)
    assert rule.judged("work", TABLE, "failure", CTX) is None
    assert rule.dump() == {"abstentions": {"fix": 1}}


def test_not_held_without_compat_or_with_a_route_for_it() -> None:
    ours = Abstentions(compat(TABLE, theirs=False))
    assert ours.judged("work", TABLE, "cannot_judge", CTX) is None
    assert ours.dump() == {"abstentions": {}}
    routed = Abstentions(compat(ROUTED))
    routed.held = {"work": 1}
    assert routed.judged("work", ROUTED, "cannot_judge", CTX) is None
    assert routed.dump() == {"abstentions": {}}


def test_its_count_is_restored_and_a_garbled_one_dropped() -> None:
    fsm = compat(TABLE)
    rule = Abstentions(fsm)
    rule.judged("work", TABLE, "cannot_judge", CTX)
    again = Abstentions(fsm)
    again.restore(ExecutorSnapshot(current_state="work", iteration=1, **rule.dump()))
    assert again.held == {"work": 1}
    assert again.judged("work", TABLE, "cannot_judge", CTX) == StepOutcome(
        "work",
        "cannot_judge",
        f"cannot_judge held (2 of {HOLD_CAP}): no route for it, judged again",
    )
    garbled = {"a": True, "b": 0, "c": HOLD_CAP + 1, "d": "1", "e": -1, "f": 1.0, 7: 1}
    odd = Abstentions(fsm)
    odd.restore(ExecutorSnapshot("work", 1, abstentions=garbled))  # type: ignore[arg-type]
    assert odd.held == {"7": 1}
