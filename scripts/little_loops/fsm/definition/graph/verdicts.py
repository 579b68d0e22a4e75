"""The verdicts a state's evaluator can give, worked out from the loop file alone."""

from __future__ import annotations

from dataclasses import dataclass

from little_loops.fsm.definition.model.fanout_keys import fan_out_of
from little_loops.fsm.definition.model.learning_keys import BLOCKED_VERDICT, LEARNING_TYPE, proves
from little_loops.fsm.definition.model.typed import (
    DEFAULT_EVALUATOR,
    OUTCOME_FAILURE,
    OUTCOME_SUCCESS,
    TERMINAL_OUTCOMES,
    FSMLoop,
    StateConfig,
)
from little_loops.fsm.evaluators.registry import SPECS, needs_llm
from little_loops.fsm.evaluators.spec import ERROR_VERDICT


@dataclass(frozen=True)
class StateVerdicts:
    """What a state's evaluation can answer.

    `verdicts` leaves out `error`, which every evaluator can give; it is None when the
    verdicts cannot be known from the file (an llm_structured schema without a verdict enum).
    `source` names where they come from, for messages: `exit_code`,
    `llm_structured, default schema`, ...
    """

    evaluator: str
    source: str
    verdicts: tuple[str, ...] | None
    error_causes: str

    def can_give(self, verdict: str) -> bool | None:
        """True or False, or None when the verdicts are not known."""
        if verdict == ERROR_VERDICT:
            return True
        if self.verdicts is None:
            return None
        return verdict in self.verdicts


def state_verdicts(fsm: FSMLoop, state: StateConfig) -> StateVerdicts | None:
    """What *state* can answer, or None when it is not evaluated (terminal, or `next:`)."""
    if state.terminal or state.next is not None:
        return None
    if state.loop is not None:  # the child loop's end (engine/subloop.py)
        causes = "the child loop ended by a limit or an error"
        return StateVerdicts("loop", f"loop {state.loop}", TERMINAL_OUTCOMES, causes)
    if fan_out_of(state) is not None:  # the join of its branches (fsm/fanout/join.py)
        causes = "a branch's loop not found, a stop, the budget or the time, the judge unable"
        return StateVerdicts("fanout", "join", (OUTCOME_SUCCESS, OUTCOME_FAILURE), causes)
    if proves(state):  # all targets proven, else blocked (on_failure without on_blocked)
        blocked = BLOCKED_VERDICT if state.on_blocked is not None else OUTCOME_FAILURE
        causes = "a target not read, or /ll:explore-api not run"
        return StateVerdicts(LEARNING_TYPE, LEARNING_TYPE, (OUTCOME_SUCCESS, blocked), causes)
    config = state.effective_evaluate()
    spec = SPECS.get(config.type)
    causes = spec.error_causes if spec is not None else "a failed evaluation"
    if state.action:
        causes += ", a timeout, a missing command"
    if spec is None:
        return StateVerdicts(config.type, config.type, (), causes)
    source = spec.name
    verdicts: tuple[str, ...] | None
    if spec.needs_llm and not fsm.llm.enabled:
        # llm.enabled: false judges by exit code instead (dispatch.llm_skipped).
        spec = SPECS[DEFAULT_EVALUATOR]
        source = f"{spec.name}: llm.enabled is false"
        causes = spec.error_causes + (", a timeout" if state.action else "")
        verdicts = spec.verdicts
    else:
        verdicts = spec.verdicts_for(config)
        if spec.config_verdicts is not None:  # verdicts read from the judge's schema
            if config.schema is None:
                source += ", default schema"
            if verdicts is not None and config.uncertain_suffix:
                source += ", uncertain_suffix"
    if spec.name == DEFAULT_EVALUATOR and not state.action:
        # Nothing ran, so the exit code is 0: only `success` (or an error).
        verdicts = ("success",)
    return StateVerdicts(spec.name, source, verdicts, causes)


def free_text_verdicts(fsm: FSMLoop) -> bool:
    """True when some state's verdict is whatever a model answers (a schema without an enum)."""
    if not fsm.llm.enabled:
        return False
    for state in fsm.states.values():
        found = state_verdicts(fsm, state)
        if found is not None and found.verdicts is None:
            return True
    return False


def judged_by_llm(state: StateConfig) -> bool:
    """True when *state*'s result goes to an evaluator that asks a model (while `llm` is
    enabled): an evaluated state (not terminal, approval, sub-loop or `next:`) of that kind."""
    if state.terminal or state.is_approval() or state.loop is not None or state.next is not None:
        return False
    return needs_llm(state.effective_evaluate().type)
