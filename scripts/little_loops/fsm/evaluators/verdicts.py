"""The verdicts a state's evaluator can give, worked out from the loop file alone."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from little_loops.fsm.definition.model import FSMLoop, StateConfig
from little_loops.fsm.engine.routing import ERROR_VERDICT

# What each deterministic evaluator answers besides `error` (see fsm/evaluators.py).
_FIXED: dict[str, tuple[str, ...]] = {
    "exit_code": ("success", "failure"),
    "output_numeric": ("success", "failure"),
    "output_json": ("success", "failure"),
    "output_contains": ("success", "failure"),
    "convergence": ("target", "progress", "stall"),
}
# The default verdict schema of llm_structured (fsm/llm_judge.py: DEFAULT_LLM_SCHEMA). Kept
# here so validation does not import the judge; a test holds the two together.
DEFAULT_LLM_VERDICTS: tuple[str, ...] = ("success", "failure", "blocked", "partial")
UNCERTAIN_SUFFIX = "_uncertain"

# What can make each evaluator answer `error`, for messages.
_ERROR_CAUSES: dict[str, str] = {
    "exit_code": "exit code 2 or more",
    "output_numeric": "output that is not a number",
    "output_json": "output that is not JSON or lacks the path",
    "output_contains": "a reference that cannot be resolved",
    "convergence": "output that is not a number",
    "llm_structured": "a failed LLM call",
}


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


def schema_verdicts(schema: Any) -> list[str] | None:
    """The verdict enum of an llm_structured schema (None when it has none)."""
    if schema is None:
        return list(DEFAULT_LLM_VERDICTS)
    props = schema.get("properties") if isinstance(schema, dict) else None
    spec = props.get("verdict") if isinstance(props, dict) else None
    enum = spec.get("enum") if isinstance(spec, dict) else None
    if not isinstance(enum, list):
        return None
    return [str(v) for v in enum]


def state_verdicts(fsm: FSMLoop, state: StateConfig) -> StateVerdicts | None:
    """What *state* can answer, or None when it is not evaluated (terminal, or `next:`)."""
    if state.terminal or state.next is not None:
        return None
    config = state.effective_evaluate()
    kind = config.type
    causes = _ERROR_CAUSES.get(kind, "a failed evaluation")
    if state.action:
        causes += ", a timeout, a missing command"
    if kind == "llm_structured":
        if not fsm.llm.enabled:
            # llm.enabled: false judges by exit code instead (evaluators._llm_skipped).
            kind = "exit_code"
            source = "exit_code: llm.enabled is false"
            causes = _ERROR_CAUSES["exit_code"] + (", a timeout" if state.action else "")
            verdicts: tuple[str, ...] | None = _FIXED["exit_code"]
        else:
            enum = schema_verdicts(config.schema)
            source = "llm_structured, default schema" if config.schema is None else "llm_structured"
            verdicts = None if enum is None else tuple(enum)
            if verdicts is not None and config.uncertain_suffix:
                verdicts += tuple(v + UNCERTAIN_SUFFIX for v in verdicts)
                source += ", uncertain_suffix"
    else:
        source = kind
        verdicts = _FIXED.get(kind, ())
    if kind == "exit_code" and not state.action:
        # Nothing ran, so the exit code is 0: only `success` (or an error).
        verdicts = ("success",)
    return StateVerdicts(kind, source, verdicts, causes)


def free_text_verdicts(fsm: FSMLoop) -> bool:
    """True when some state's verdict is whatever a model answers (a schema without an enum)."""
    if not fsm.llm.enabled:
        return False
    for state in fsm.states.values():
        found = state_verdicts(fsm, state)
        if found is not None and found.verdicts is None:
            return True
    return False
