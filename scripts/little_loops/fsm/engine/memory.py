"""What a run remembers between states: captures, prev, result, handoff note, sessions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.engine.records import ExecutorSnapshot, acted_result
from little_loops.fsm.evaluators.spec import EvaluationResult

VERDICT_KEY = "verdict"  # in `action_result`: the verdict given, before the run routes it


@dataclass
class Memory:
    """The values `${captured.*}`, `${prev.*}` and `${result.*}` read, and what a resume
    needs to go on with the current state's action (its finished result, its note)."""

    captured: dict[str, Any] = field(default_factory=dict)
    prev_result: dict[str, Any] | None = None
    last_result: dict[str, Any] | None = None
    started_at: str = ""
    continuation: str | None = None  # a handoff note, given to the next prompt
    continuity: str | None = None  # `session_mode: continue`: for the next prompt (not saved)
    acted: dict[str, Any] | None = None  # the current state's finished action (acted_record)
    sessions: dict[str, str] = field(default_factory=dict)  # agent session ids by session_key
    session_agents: dict[str, str] = field(default_factory=dict)  # whose (absent: claude's)
    resumed_action: ActionResult | None = None  # restored: evaluate it, do not run it again
    resumed_verdict: EvaluationResult | None = None  # restored: its verdict, not judged again
    # The guards of the current state's action (engine/kinds/guards.py): the test files
    # before it, then the guards' verdicts. Saved: a resumed run judges with them.
    guard: dict[str, Any] | None = None
    guard_applied: bool = False  # its verdicts were acted on in this process (not saved)

    def dump(self) -> dict[str, Any]:
        return {
            "captured": dict(self.captured),  # a copy: the run goes on changing its own
            "prev_result": self.prev_result,
            "last_result": self.last_result,
            "started_at": self.started_at,
            "continuation": self.continuation,
            "action_result": self.acted,
            "sessions": dict(self.sessions),
            "session_agents": dict(self.session_agents),
            "guard": self.guard,
        }

    def restore(self, snap: ExecutorSnapshot) -> None:
        finished = snap.entered and snap.action_result is not None
        self.acted = snap.action_result if finished else None
        self.resumed_action = acted_result(self.acted) if self.acted is not None else None
        self.resumed_verdict = _verdict(self.acted.get(VERDICT_KEY)) if self.acted else None
        self.captured = dict(snap.captured)
        self.prev_result = snap.prev_result
        self.last_result = snap.last_result
        self.started_at = snap.started_at
        self.continuation = snap.continuation
        self.sessions = dict(snap.sessions)
        self.session_agents = dict(snap.session_agents)
        self.guard = snap.guard  # cleared when the run leaves its state: it is this one's
        self.guard_applied = False

    def verdict(self, judged: EvaluationResult) -> None:
        """The current state's action got *judged*: kept with it until the run routes it."""
        if self.acted is not None:
            self.acted = {**self.acted, VERDICT_KEY: judged.to_dict()}

    def left(self) -> None:
        """The run left the current state: its action and verdict are routed."""
        self.acted = None
        self.resumed_verdict = None
        self.guard = None
        self.guard_applied = False

    def take_verdict(self) -> EvaluationResult | None:
        """The verdict recorded before a resume, once (None: judge the action)."""
        judged, self.resumed_verdict = self.resumed_verdict, None
        return judged

    def error_detail(self) -> str | None:
        """The error of the last verdict's details, if it has one."""
        details = (self.last_result or {}).get("details")
        error = details.get("error") if isinstance(details, dict) else None
        return str(error) if error else None


def _verdict(saved: Any) -> EvaluationResult | None:
    """The verdict recorded in a saved `action_result`, or None (none, or not one)."""
    if not isinstance(saved, dict) or not isinstance(saved.get("verdict"), str):
        return None
    details = saved.get("details")
    return EvaluationResult(saved["verdict"], details if isinstance(details, dict) else {})
