"""Check a loop model's caps and endings: where a cap's route goes, how a terminal ends."""

from __future__ import annotations

from collections.abc import Iterator

from little_loops.fsm.definition.graph.edges import cap_routes
from little_loops.fsm.definition.model.endings import failure_by_name, failure_name_note
from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.facts.errors import Severity
from little_loops.fsm.facts.suggest import did_you_mean

KeyPath = tuple[str | int, ...]
# The cap each cap route is taken at.
_CAP_OF = {"on_max_steps": "max_steps", "on_max_iterations": "max_iterations"}


def route_problems(fsm: FSMLoop) -> Iterator[tuple[KeyPath, str, Severity]]:
    """A cap route to no state, one that is never taken, and each terminal that ends a run
    as a failure by its name alone (a note: it is no mistake, but it is easy to miss)."""
    for key, target in cap_routes(fsm):
        if target not in fsm.states:
            hint = did_you_mean(target, fsm.states) or f" (states: {', '.join(fsm.states)})"
            yield (key,), f"'{target}' is not a state{hint}", "error"
        if key == "on_max_steps" and fsm.max_steps is None:
            yield (key,), "never taken: the loop sets no max_steps", "warning"
    for name in failure_by_name(fsm):
        yield ("states", name), failure_name_note(name), "warning"
