"""Pass counting: the one rule, and the executor and the simulation both using it."""

from __future__ import annotations

import inspect
from types import ModuleType

import pytest

from little_loops.fsm.definition.model.typed import StateConfig
from little_loops.fsm.engine import core, passes, simulate
from little_loops.fsm.engine.passes import Passes

WORK = StateConfig(action="true", next="b")
END = StateConfig(terminal=True)


def test_the_first_working_state_begins_the_first_pass() -> None:
    counter = Passes()
    assert not counter.begins("done", END)
    assert counter.begins("a", WORK)
    counter.start()
    counter.ran("a")
    assert counter.iteration == 1
    assert not counter.begins("b", WORK)
    assert counter.begins("a", WORK)  # back to a state already run in this pass


def test_a_maintain_restart_begins_a_new_pass_even_at_a_terminal_state() -> None:
    counter = Passes(iteration=1, states=["a"])
    counter.restarted()
    assert counter.begins("done", END)
    counter.start()
    assert (counter.iteration, counter.states, counter.pending) == (2, [], False)
    assert not counter.begins("a", WORK)


@pytest.mark.parametrize("module", [core, simulate])
def test_executor_and_simulation_count_passes_through_passes(module: ModuleType) -> None:
    source = inspect.getsource(module)
    assert "Passes(" in source
    # The rule is written once: neither module counts or resets passes itself.
    for copy in ("iteration += 1", "pass_states.append", "pass_pending = True", " in self.pass"):
        assert copy not in source, (module, copy)
    assert "iteration += 1" in inspect.getsource(passes)
