"""The seed path of validation: it lives in `little_loops.fsm.definition.validation`."""

from little_loops.fsm.definition.validation import (
    FileReport,
    check_file,
    load_and_validate,
    validate_definition,
    validate_fsm,
)
from little_loops.fsm.errors import ValidationError

__all__ = [
    "FileReport",
    "ValidationError",
    "check_file",
    "load_and_validate",
    "validate_definition",
    "validate_fsm",
]
