"""The convergence paradigm: measure a number and act until it reaches a target or stalls."""

from __future__ import annotations

from typing import Any

from little_loops.fsm.definition.model.typed import DIRECTIONS, FSMLoop
from little_loops.fsm.paradigms.assemble import DONE, build, loop_settings
from little_loops.fsm.paradigms.spec import LOOP_SETTINGS, SpecReader

CONVERGENCE_KEYS = (
    "paradigm",
    "name",
    "check",
    "toward",
    "using",
    "tolerance",
    "direction",
    *LOOP_SETTINGS,
)


def compile_convergence(spec: dict[str, Any]) -> FSMLoop:
    """`measure -> (target: done | progress: apply | stall: done)`, `apply -> measure`."""
    reader = SpecReader("paradigm 'convergence'", spec)
    reader.check_keys(CONVERGENCE_KEYS)
    name = reader.string("name")
    check = reader.string("check")
    toward = reader.number("toward")
    using = reader.string("using")
    tolerance = reader.number("tolerance", minimum=0) if "tolerance" in spec else 0
    evaluate: dict[str, Any] = {
        "type": "convergence",
        "target": "${context.target}",
        "tolerance": "${context.tolerance}",
        "previous": "${prev.output}",
    }
    if "direction" in spec:
        evaluate["direction"] = reader.choice("direction", DIRECTIONS)
    states: dict[str, dict[str, Any]] = {
        "measure": {
            "action": "${raw:context.metric_cmd}",  # the command itself: not one quoted word
            "capture": "current_value",
            "evaluate": evaluate,
            "route": {"target": DONE, "progress": "apply", "stall": DONE},
        },
        "apply": {"action": using, "next": "measure"},
        DONE: {"terminal": True},
    }
    context = {"metric_cmd": check, "target": toward, "tolerance": tolerance}
    return build(
        reader, "convergence", name, "measure", states, loop_settings(reader, name), context
    )
