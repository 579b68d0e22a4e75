"""The seed path `little_loops.fsm.interpolation`: `${...}` resolution by its old names."""

from __future__ import annotations

import pytest

from little_loops.fsm.interpolation import (
    InterpolationContext,
    InterpolationError,
    interpolate,
    interpolate_dict,
)


def test_interpolate_through_the_seed_path() -> None:
    ctx = InterpolationContext(context={"target": "src/"}, state_name="fix")
    assert interpolate("ruff ${context.target} in ${state.name}", ctx) == "ruff src/ in fix"
    assert interpolate_dict({"a": "${context.target}"}, ctx) == {"a": "src/"}


def test_an_unknown_reference_is_an_interpolation_error() -> None:
    with pytest.raises(InterpolationError, match="missing"):
        interpolate("${context.missing}", InterpolationContext())
