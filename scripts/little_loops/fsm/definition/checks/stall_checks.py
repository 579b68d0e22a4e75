"""Check a loop model's stall breakers: a setting that no detector of its place reads."""

from __future__ import annotations

from collections.abc import Iterator

from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.facts.errors import Severity

KeyPath = tuple[str | int, ...]


def stall_problems(fsm: FSMLoop) -> Iterator[tuple[KeyPath, str, Severity]]:
    """`ignore_volatile` where no `same_result` applies (the state's own, else the loop's):
    it only says how same_result compares outputs, so there it does nothing (a warning)."""
    loop = fsm.stall
    loop_counts = loop is not None and loop.same_result is not None
    states_count = any(
        s.stall is not None and s.stall.same_result is not None for s in fsm.states.values()
    )
    if loop is not None and loop.ignore_volatile is not None and not (loop_counts or states_count):
        yield ("stall", "ignore_volatile"), _idle("the loop nor any state"), "warning"
    for name, state in fsm.states.items():
        own = state.stall
        if own is None or own.ignore_volatile is None:
            continue
        if own.same_result is None and not loop_counts:
            where = ("states", name, "stall", "ignore_volatile")
            yield where, _idle("the state nor the loop"), "warning"


def _idle(where: str) -> str:
    return (
        f"does nothing: it says how same_result compares outputs, and neither {where} "
        "sets same_result (add same_result: N, or remove it)"
    )
