"""little-loops' rehearsal of an action with `simulate --compat` (engine/simulated_output.py)."""

from __future__ import annotations

import pytest
from support.engine_parts import loop

from little_loops.fsm.definition.model.typed import StateConfig
from little_loops.fsm.engine.simulated_output import (
    SIMULATE_MAX_STEPS,
    capped,
    pure_verdict,
    simulated,
)
from little_loops.fsm.evaluators.config import EvaluateConfig
from little_loops.fsm.values.interpolation import InterpolationContext

STATES = {"work": StateConfig(action="make", on_success="out"), "out": StateConfig(terminal=True)}
CTX = InterpolationContext(context={"report": "score=7"}, env={})


@pytest.mark.parametrize(("given", "kept"), [(None, 20), (5, 5), (20, 20), (21, 20), (500, 20)])
def test_capped_keeps_max_steps_at_most_twenty(given: int | None, kept: int) -> None:
    fsm = loop(STATES, max_steps=given)
    out = capped(fsm)
    assert SIMULATE_MAX_STEPS == 20
    assert out.max_steps == kept
    assert (out is fsm) == (given is not None and given <= 20)  # unchanged: the same loop
    assert fsm.max_steps == given  # the loop given is left as it was


@pytest.mark.parametrize(
    ("verdict", "code"), [("success", 0), ("failure", 1), ("error", 2), ("blocked", 2)]
)
def test_simulated_output_and_exit_code_by_the_scenarios_verdict(verdict: str, code: int) -> None:
    state = StateConfig(action="pytest -q", on_success="out")
    assert simulated(state, verdict) == ("[simulated output for: pytest -q]", code)


def test_nothing_runs_with_no_verdict_or_no_action() -> None:
    assert simulated(StateConfig(action="pytest", on_success="out"), None) == ("", 0)
    assert simulated(StateConfig(next="out"), "failure") == ("", 0)


def state_judged_by(**evaluate: object) -> StateConfig:
    return StateConfig(action="make", evaluate=EvaluateConfig(**evaluate), on_success="out")  # type: ignore[arg-type]


def test_a_pure_evaluator_reads_the_simulated_output_and_exit_code() -> None:
    by_code = state_judged_by(type="exit_code")
    assert pure_verdict(by_code, "x", 0, CTX) == ("success", "exit_code on the simulated output")
    assert pure_verdict(by_code, "x", 1, CTX) == ("failure", "exit_code on the simulated output")
    found = state_judged_by(type="output_contains", pattern="simulated output")
    said = "output_contains on the simulated output"
    assert pure_verdict(found, "[simulated output for: make]", 0, CTX) == ("success", said)
    assert pure_verdict(found, "nothing here", 0, CTX) == ("failure", said)


def test_a_state_with_no_evaluate_uses_its_kinds_default() -> None:
    shell = StateConfig(action="make", on_success="out")  # a shell action: exit_code
    assert pure_verdict(shell, "", 1, CTX) == ("failure", "exit_code on the simulated output")


def test_an_evaluator_that_is_not_pure_keeps_the_scenarios_verdict() -> None:
    judge = state_judged_by(type="llm_structured", prompt="Done?")
    assert pure_verdict(judge, "[simulated output for: make]", 0, CTX) is None
    prompt = StateConfig(action="/fix it", action_type="prompt", on_success="out")
    assert pure_verdict(prompt, "[simulated output for: /fix it]", 0, CTX) is None


def test_a_source_is_read_instead_of_the_output_when_it_can_be_filled_in() -> None:
    read = state_judged_by(type="output_contains", pattern="score=7", source="${context.report}")
    said = "output_contains on the simulated output"
    assert pure_verdict(read, "[simulated output for: make]", 0, CTX) == ("success", said)
    unknown = state_judged_by(type="output_contains", pattern="simulated", source="${captured.x}")
    assert pure_verdict(unknown, "[simulated output for: make]", 0, CTX) == ("success", said)
    assert pure_verdict(unknown, "other", 0, CTX) == ("failure", said)
