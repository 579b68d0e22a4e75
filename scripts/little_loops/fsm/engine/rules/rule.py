"""What a rule of a run is (engine/rules/): it owns a slice of the snapshot, dumps, restores."""

from __future__ import annotations

from typing import Any, Protocol

from little_loops.fsm.engine.records import ExecutorSnapshot


class Rule(Protocol):
    """A rule keeps its own part of the run's state: it dumps it into the snapshot (its
    fields of ExecutorSnapshot, no other part's) and restores it from a saved one."""

    def dump(self) -> dict[str, Any]: ...

    def restore(self, snap: ExecutorSnapshot) -> None: ...
