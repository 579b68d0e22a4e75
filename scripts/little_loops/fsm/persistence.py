"""The seed path of run persistence: it lives in `little_loops.fsm.runs`."""

from little_loops.fsm.runs.persistent import PersistentExecutor
from little_loops.fsm.runs.state import LoopState
from little_loops.fsm.runs.store import (
    RunInfo,
    StatePersistence,
    get_loop_history,
    list_running_loops,
)

__all__ = [
    "LoopState",
    "PersistentExecutor",
    "RunInfo",
    "StatePersistence",
    "get_loop_history",
    "list_running_loops",
]
