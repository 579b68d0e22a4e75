"""What a simulation cannot know: the references it leaves as written, the limits it notes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.facts.timefmt import format_duration


def known(namespace: str, first: str, prev: Mapping[str, Any] | None) -> bool:
    """Whether a simulation knows the value of a reference (outputs, captures, time, the
    environment and evaluation details it does not; env is not printed on purpose)."""
    if namespace in ("context", "state"):
        return True
    if namespace == "loop":
        return first == "name"
    if namespace == "prev":
        return prev is None or first in ("state", "verdict")
    if namespace == "result":
        return first == "verdict"
    return False


def limit_notes(fsm: FSMLoop, prompts: int, judged: int, iteration: int) -> list[str]:
    """Notes on what a walk of *iteration* passes would cost or wait, and the limits a
    simulation cannot reach (nothing runs, so no time passes and nothing is spent)."""
    notes: list[str] = []
    calls = [
        f"{count} {what}{'s' if count != 1 else ''}"
        for count, what in ((prompts, "prompt action"), (judged, "LLM evaluation"))
        if count
    ]
    if calls:
        notes.append(f"this path calls Claude: {' and '.join(calls)}")
    if fsm.backoff and iteration > 1:
        waits = iteration - 1
        total = format_duration(waits * float(fsm.backoff) * 1000)
        notes.append(f"backoff: the run would wait {total} in all ({waits} × {fsm.backoff:g}s)")
    if fsm.timeout:
        notes.append(
            f"timeout ({format_duration(int(float(fsm.timeout) * 1000))}) not simulated: "
            "no action runs, so no time passes"
        )
    if fsm.max_cost_usd is not None:
        notes.append(f"max_cost_usd ({fsm.max_cost_usd:g}) not simulated: nothing is spent")
    return notes
