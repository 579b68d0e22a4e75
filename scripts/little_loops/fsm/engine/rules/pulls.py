"""The pull-request rule: the current `pr:` state's pull request, kept so a resume goes on."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from little_loops.fsm.engine.records import ExecutorSnapshot


@dataclass
class PullRecord:
    """The pull request of a `pr:` state: opened for the commit *head*, looked at *looks*
    times, its checks waited for *waited_s* seconds in all, *green* the checks that all
    passed at the last look (a merge needs the same checks green at two looks in a row)."""

    state: str
    number: int
    url: str
    head: str
    looks: int = 0
    waited_s: float = 0.0
    green: list[str] = field(default_factory=list)  # the checks all passed at the last look

    @classmethod
    def from_dict(cls, data: object) -> PullRecord | None:
        """A saved record; None when there is none or it cannot be read (the state
        pushes and opens or updates its pull request again, which is harmless)."""
        if not isinstance(data, dict):
            return None
        try:
            record = cls(
                state=str(data["state"]),
                number=int(data["number"]),
                url=str(data["url"]),
                head=str(data["head"]),
                looks=int(data.get("looks", 0)),
                waited_s=float(data.get("waited_s", 0.0)),
                green=[str(n) for n in data.get("green") or []],
            )
        except (KeyError, TypeError, ValueError, OverflowError):
            return None
        return record if record.number > 0 and record.waited_s >= 0 else None


class PullRequests:
    """The current `pr:` state's pull request (the `pr` field of the snapshot)."""

    def __init__(self) -> None:
        self.record: PullRecord | None = None

    def dump(self) -> dict[str, Any]:
        return {"pr": None if self.record is None else asdict(self.record)}

    def restore(self, snap: ExecutorSnapshot) -> None:
        self.record = PullRecord.from_dict(snap.pr)

    def of(self, state: str) -> PullRecord | None:
        """The record of *state*, when the run is in it with its pull request opened."""
        record = self.record
        return record if record is not None and record.state == state else None

    def left(self) -> None:
        """The run left the state: its next visit pushes and looks afresh."""
        self.record = None
