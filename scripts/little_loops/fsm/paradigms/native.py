"""The native `fsm` paradigm: a file already written as states, checked and read as is."""

from __future__ import annotations

from typing import Any

from little_loops.fsm.definition.checks.key_checks import check_definition
from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.facts.errors import LoopValidationError


def compile_fsm(spec: dict[str, Any]) -> FSMLoop:
    """The raw definition checks every loop file gets, then the model.

    Raises LoopValidationError (a LoopDefinitionError) carrying every error found.
    """
    errors = [p for p in check_definition(spec) if p.severity == "error"]
    if errors:
        raise LoopValidationError(errors)
    return FSMLoop.from_dict(spec)
