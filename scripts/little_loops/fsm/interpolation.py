"""The seed path of interpolation: it lives in `little_loops.fsm.engine.interpolation`."""

from little_loops.fsm.engine.interpolation import (
    InterpolationContext,
    interpolate,
    interpolate_dict,
    interpolate_value,
)

__all__ = [
    "InterpolationContext",
    "interpolate",
    "interpolate_dict",
    "interpolate_value",
]
