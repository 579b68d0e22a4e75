"""Which check acts on which loop-file keys: it is imported and run only for a file with one."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from functools import cache
from importlib import import_module
from typing import Any

from little_loops.fsm.actions.registry import BY_OPTIONS_KEY
from little_loops.fsm.definition.model import commit_keys, core_keys
from little_loops.fsm.definition.model.agents import AGENT_KEY, AGENTS_KEY
from little_loops.fsm.definition.model.fanout_keys import FANOUT_STATE_KEYS
from little_loops.fsm.definition.model.run_keys import SUBLOOP_STATE_KEYS
from little_loops.fsm.definition.model.typed import APPROVAL, FSMLoop

_PACKAGE = "little_loops.fsm.definition"


class Feature:
    """A check and the keys it acts on: in a file with none of them it can find nothing, so
    it is not run there and its module is not imported. A key of the model (`at_model`) is
    read as the field of the same name. (A plain class: a dataclass's generated methods
    would cost more to make at start-up than the checks it spares.)"""

    __slots__ = ("check", "loop_keys", "state_keys", "state_values", "_read_in_a_state")

    def __init__(
        self,
        check: str,  # "MODULE:FUNCTION", MODULE under little_loops.fsm.definition
        loop_keys: tuple[str, ...] = (),  # at the loop's top level
        state_keys: tuple[str, ...] = (),  # in a state
        state_values: tuple[tuple[str, object], ...] = (),  # a state key with this value
    ) -> None:
        self.check, self.loop_keys = check, loop_keys
        self.state_keys, self.state_values = state_keys, state_values
        # Every key the test of a state reads: a raw state that has none of them is passed
        # over at once (a big file has thousands of states, most with none of any feature's).
        self._read_in_a_state = frozenset((*state_keys, *(key for key, _ in state_values)))

    def __repr__(self) -> str:
        return f"Feature({self.check!r})"

    def function(self) -> Callable[..., Any]:
        """The check's function, its module imported the first time."""
        return _function(self.check)

    def in_state(self, state: Mapping[Any, object]) -> bool:
        """True when the raw *state* has one of the keys."""
        if self._read_in_a_state.isdisjoint(state):
            return False
        return self._in_states(_key_of, (state,))

    def in_file(self, data: Mapping[Any, object]) -> bool:
        """True when the raw loop *data* has one of the keys, at its top or in a state."""
        if any(data.get(key) is not None for key in self.loop_keys):
            return True
        states = data.get("states")
        return isinstance(states, Mapping) and any(
            isinstance(state, Mapping) and self.in_state(state) for state in states.values()
        )

    def in_model(self, fsm: FSMLoop) -> bool:
        """True when the loop model *fsm* has one of the keys, at its top or in a state."""
        if any(getattr(fsm, key, None) is not None for key in self.loop_keys):
            return True
        return self._in_states(_field_of, fsm.states.values())

    def _in_states(self, value_of: Callable[[Any, str], object], states: Collection[Any]) -> bool:
        """True when one of *states* has one of the keys, *value_of(state, key)* reading a
        key's value (a raw state's or the model's: one test for both). Key by key over the
        states: one pass of a generator for each key, not one call per state."""
        return any(
            value_of(state, key) is not None for key in self.state_keys for state in states
        ) or any(
            value_of(state, key) == value for key, value in self.state_values for state in states
        )

    def at_state(self, state: Mapping[Any, object]) -> list[Any]:
        """The check's problems of the raw *state* (none when it has none of the keys)."""
        return list(self.function()(state)) if self.in_state(state) else []

    def at_file(self, data: Mapping[Any, object], *args: Any) -> list[Any]:
        """The check's problems of the raw loop *data* (none when it has none of the keys)."""
        return list(self.function()(data, *args)) if self.in_file(data) else []

    def at_model(self, fsm: FSMLoop, *args: Any) -> list[Any]:
        """The check's problems of the loop model *fsm* (none when it has none of the keys)."""
        return list(self.function()(fsm, *args)) if self.in_model(fsm) else []


def _key_of(state: Mapping[Any, object], key: str) -> object:
    """The value of *key* in the raw *state*, None when it lacks it."""
    return state.get(key)


def _field_of(obj: object, key: str) -> object:
    """The value of the field *key* of *obj*, None for a field it lacks."""
    return getattr(obj, key, None)


@cache
def _function(check: str) -> Callable[..., Any]:
    """The function *check* names, its module imported the first time."""
    module, _, name = check.partition(":")
    function: Callable[..., Any] = getattr(import_module(f"{_PACKAGE}.{module}"), name)
    return function


# A sub-loop state's keys: its core rows (loop, with, outcome) and its run keys.
_SUBLOOP_KEYS = (*(row.name for row in core_keys.SUBLOOP_KEYS), *SUBLOOP_STATE_KEYS)
_AGENT_KEYS = (AGENT_KEY, *BY_OPTIONS_KEY)

# A raw loop's agents (`agent:` names, custom `agents:`, options blocks, the judge of
# `llm.backend`, the agents of `parallel:` branches; `session: continue` is only wrong on
# an agent named by `agent:`): (path, message, severity, check).
AGENT_CHECKS = Feature(
    "checks.agent_checks:agent_problems",
    loop_keys=(*_AGENT_KEYS, AGENTS_KEY, "llm"),
    state_keys=(*_AGENT_KEYS, "parallel"),
)
# The checks of one raw state, in the order they run: (key path within it, problem).
STATE_CHECKS: tuple[Feature, ...] = (
    Feature(
        "checks.approval_checks:approval_problems",
        state_keys=("on_timeout",),
        state_values=(("action_type", APPROVAL),),
    ),
    Feature("checks.subloop_checks:key_problems", state_keys=_SUBLOOP_KEYS),
    Feature("model.fanout_keys:fanout_key_problems", state_keys=tuple(FANOUT_STATE_KEYS)),
    Feature("checks.commit_checks:checkpoint_key_problems", state_keys=commit_keys.STATE_KEYS),
)
# Stall breakers of a loop model: (key path, message, severity).
STALL = Feature("checks.stall_checks:stall_problems", loop_keys=("stall",), state_keys=("stall",))
# The child loops of a loop model read from a file (validate/loopfile.py): problems.
SUBLOOP_CHILDREN = Feature("checks.subloop_checks:attach_children", state_keys=("loop",))
FANOUT_CHILDREN = Feature(
    "checks.subloop_checks:fanout_child_problems", state_keys=tuple(FANOUT_STATE_KEYS)
)
