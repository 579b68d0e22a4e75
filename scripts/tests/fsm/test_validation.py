"""The seed path `little_loops.fsm.validation`: validation by its old names."""

from __future__ import annotations

from pathlib import Path

import pytest

from little_loops.fsm.facts.errors import LoopValidationError
from little_loops.fsm.schema import FSMLoop, StateConfig
from little_loops.fsm.validation import (
    ValidationError,
    load_and_validate,
    validate_definition,
    validate_fsm,
)


def test_validate_a_model_and_a_definition() -> None:
    fsm = FSMLoop(name="x", initial="a", states={"a": StateConfig(action="true", next="b")})
    problems = validate_fsm(fsm)
    assert all(isinstance(p, ValidationError) for p in problems)
    assert "loop 'x' > states > a > next: 'b' is not a state (states: a)" in [
        str(p) for p in problems
    ]
    assert [str(p) for p in validate_definition({"name": "x"})][:1] == [
        "loop 'x': missing required key 'initial'"
    ]


def test_load_and_validate_a_file(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text("name: good\ninitial: a\nstates:\n  a: {terminal: true}\n")
    assert load_and_validate(good).name == "good"
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\ninitial: nowhere\nstates:\n  a: {terminal: true}\n")
    with pytest.raises(LoopValidationError, match="'nowhere' is not a state"):
        load_and_validate(bad)
