"""The records a run produces: its result, a snapshot to resume from, and event text."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

# Strings longer than this are shortened in events (the full output stays in the
# output file and, up to the runner's tail, in `captured`).
EVENT_TEXT_LIMIT = 2000


@dataclass
class ExecutionResult:
    """How a run ended."""

    final_state: str
    iterations: int
    # terminal, max_iterations, timeout, error, handoff, budget, interrupted or stopped
    terminated_by: str
    duration_ms: int
    captured: dict[str, Any]
    error: str | None = None
    handoff: str | None = None
    cost_usd: float = 0.0
    usage: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ExecutorSnapshot:
    """Everything needed to continue a run later (persisted by PersistentExecutor)."""

    current_state: str
    iteration: int
    pass_states: list[str] = field(default_factory=list)
    captured: dict[str, Any] = field(default_factory=dict)
    prev_result: dict[str, Any] | None = None
    last_result: dict[str, Any] | None = None
    started_at: str = ""
    elapsed_ms: int = 0
    continuation: str | None = None
    cost_usd: float = 0.0
    usage: dict[str, int] = field(default_factory=dict)


def chomp(text: str) -> str:
    """Output as `$(...)` would give it: trailing newlines removed, so
    `[ "${captured.n.output}" -ge 3 ]` works. The output file keeps every byte."""
    return text.rstrip("\r\n")


def short(text: str, limit: int = EVENT_TEXT_LIMIT, tail: bool = False) -> str:
    if len(text) <= limit:
        return text
    if tail:
        return "…" + text[-limit:]
    return text[:limit] + "…"


def event_value(value: Any) -> Any:
    if isinstance(value, str):
        return short(value)
    return value
