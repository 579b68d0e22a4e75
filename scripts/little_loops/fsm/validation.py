"""The seed path of validation: it lives in `little_loops.fsm.validate.loopfile`."""

from little_loops.fsm.facts.errors import ValidationError
from little_loops.fsm.validate.loopfile import (
    FileReport,
    check_file,
    load_and_validate,
    validate_definition,
    validate_fsm,
)

__all__ = [
    "FileReport",
    "ValidationError",
    "check_file",
    "load_and_validate",
    "validate_definition",
    "validate_fsm",
]
