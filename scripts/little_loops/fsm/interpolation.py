"""The seed path of interpolation: it lives in `little_loops.fsm.engine.interpolation`."""

from little_loops.fsm.engine.interpolation import (
    InterpolationContext,
    interpolate,
    interpolate_dict,
    interpolate_value,
)
from little_loops.fsm.errors import InterpolationError

__all__ = [
    "InterpolationContext",
    "InterpolationError",
    "interpolate",
    "interpolate_dict",
    "interpolate_value",
]
