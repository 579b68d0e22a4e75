"""The seed-era path `little_loops.fsm.errors`: the error hierarchy under its old name."""

from __future__ import annotations

import pytest

from little_loops.fsm import errors
from little_loops.fsm.facts import errors as home


def test_every_error_is_the_one_from_its_home() -> None:
    names = [n for n in dir(home) if n.endswith("Error") and not n.startswith("_")]
    assert "LoopValidationError" in names
    for name in names:
        assert getattr(errors, name) is getattr(home, name)


def test_catching_by_the_seed_name() -> None:
    with pytest.raises(errors.LoopDefinitionError, match="x.yaml:3: bad"):
        raise home.LoopFileError("x.yaml", "bad", 3)
