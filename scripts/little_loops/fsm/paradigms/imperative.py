"""The imperative paradigm: run steps in order, then a check decides whether to go again."""

from __future__ import annotations

from typing import Any

from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.paradigms.assemble import DONE, build, loop_settings
from little_loops.fsm.paradigms.spec import LOOP_SETTINGS, SpecReader

IMPERATIVE_KEYS = ("paradigm", "name", "steps", "until", *LOOP_SETTINGS)
UNTIL_KEYS = ("check", "passes")


def compile_imperative(spec: dict[str, Any]) -> FSMLoop:
    """`step_0 -> ... -> step_N -> check_done -> (success: done | failure: step_0)`.

    `until.passes: false` swaps the two routes: the loop ends when the check fails.
    """
    reader = SpecReader("paradigm 'imperative'", spec)
    reader.check_keys(IMPERATIVE_KEYS)
    name = reader.string("name")
    steps = reader.strings("steps")
    until = reader.mapping("until")
    until.check_keys(UNTIL_KEYS)
    check = until.string("check")
    passes = until.boolean("passes") if "passes" in until.data else True
    states: dict[str, dict[str, Any]] = {}
    for index, step in enumerate(steps):
        following = f"step_{index + 1}" if index + 1 < len(steps) else "check_done"
        states[f"step_{index}"] = {"action": step, "next": following}
    finished, again = (DONE, "step_0") if passes else ("step_0", DONE)
    states["check_done"] = {"action": check, "on_success": finished, "on_failure": again}
    states[DONE] = {"terminal": True}
    return build(reader, "imperative", name, "step_0", states, loop_settings(reader, name))
