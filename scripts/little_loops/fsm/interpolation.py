"""The seed path of interpolation: it lives in `little_loops.fsm.values.interpolation`."""

from little_loops.fsm.facts.errors import InterpolationError
from little_loops.fsm.values.interpolation import (
    InterpolationContext,
    interpolate,
    interpolate_dict,
    interpolate_value,
)

__all__ = [
    "InterpolationContext",
    "InterpolationError",
    "interpolate",
    "interpolate_dict",
    "interpolate_value",
]
