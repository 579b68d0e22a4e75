"""The seed-era path of the error hierarchy, which lives in `little_loops.fsm.facts.errors`."""

from little_loops.fsm.facts.errors import *  # noqa: F403
