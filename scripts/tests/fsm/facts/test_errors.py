"""The error hierarchy (facts/errors.py): which errors are which, and their messages."""

from __future__ import annotations

import pytest

from little_loops.fsm.facts.errors import (
    CorruptStateError,
    InterpolationError,
    LoopDefinitionError,
    LoopError,
    LoopFileError,
    LoopRuntimeError,
    LoopSetupError,
    LoopValidationError,
    ParadigmSpecError,
    RunLogError,
    ScopeConflictError,
    ValidationError,
)


@pytest.mark.parametrize(
    ("error", "parent"),
    [
        (LoopFileError, LoopDefinitionError),
        (LoopValidationError, LoopDefinitionError),
        (ParadigmSpecError, LoopDefinitionError),
        (InterpolationError, LoopRuntimeError),
        (RunLogError, LoopRuntimeError),
        (CorruptStateError, LoopRuntimeError),
        (ScopeConflictError, LoopRuntimeError),
        (LoopSetupError, LoopError),
        (LoopDefinitionError, LoopError),
        (LoopRuntimeError, LoopError),
    ],
)
def test_each_error_is_a_kind_of_its_parent(error: type[Exception], parent: type) -> None:
    assert issubclass(error, parent)


def test_a_file_error_says_where_as_far_as_it_knows() -> None:
    assert str(LoopFileError("a.yaml", "not YAML", 3, 7)) == "a.yaml:3:7: not YAML"
    assert str(LoopFileError("a.yaml", "not YAML", 3)) == "a.yaml:3: not YAML"
    error = LoopFileError("a.yaml", "empty")
    assert (str(error), error.source, error.detail, error.line) == (
        "a.yaml: empty",
        "a.yaml",
        "empty",
        None,
    )


def test_a_validation_error_reads_its_state_and_key_off_the_path() -> None:
    error = ValidationError.at("fix", ("states", "check", "on_sucess"), "unknown key")
    assert (error.state, error.key, error.severity) == ("check", "on_sucess", "error")
    assert str(error) == "loop 'fix' > states > check > on_sucess: unknown key"
    whole_state = ValidationError.at(None, ("states", "check"), "dead end", "warning")
    assert (whole_state.state, whole_state.key, whole_state.severity) == ("check", None, "warning")
    assert str(whole_state) == "states > check: dead end"
    top = ValidationError.at("fix", ("initial",), "not a state")
    assert (top.state, top.key) == (None, "initial")
    missing = ValidationError.at("fix", ("states", "a"), "missing", key="action")
    assert missing.key == "action"
    assert str(ValidationError("bare")) == "bare"


def test_a_failed_validation_shows_the_first_error_and_how_many_more() -> None:
    first = ValidationError.at("fix", ("initial",), "not a state")
    first.line = 2
    second = ValidationError("other")
    error = LoopValidationError([first, second], "fix.yaml")
    assert str(error) == "fix.yaml:2: loop 'fix' > initial: not a state (and 1 more)"
    assert error.errors == [first, second]
    assert str(LoopValidationError([second])) == "other"
    assert str(LoopValidationError([], "x.yaml")) == "x.yaml: invalid loop definition"


def test_a_paradigm_spec_error_keeps_its_detail_and_key_path() -> None:
    error = ParadigmSpecError("bad spec", "fix: required", ("constraints", 1, "fix"))
    assert (str(error), error.detail, error.key_path) == (
        "bad spec",
        "fix: required",
        ("constraints", 1, "fix"),
    )
