"""Claude sessions of a run: recorded by session_key, resumed by `session: continue`,
kept across a stop and resume, and started fresh when Claude Code has lost one."""

from __future__ import annotations

import json
from typing import Any

from little_loops.fsm.actions.request import ActionRequest, ActionResult
from little_loops.fsm.definition.model.typed import FSMLoop, StateConfig
from little_loops.fsm.engine.executor import FSMExecutor
from little_loops.fsm.runs.state import LoopState

LOST = "No conversation found with session ID: {}\n"


class SessionRunner:
    """A Claude double: each Claude action gets a new session id unless it resumes one;
    ids in `lost` cannot be resumed. `stop_at` stops the run during that action."""

    streams_output = False

    def __init__(self, lost: frozenset[str] = frozenset()) -> None:
        self.requests: list[ActionRequest] = []
        self.lost = lost
        self.executor: FSMExecutor | None = None
        self.stop_at: str | None = None

    def run(self, request: ActionRequest) -> ActionResult:
        return self.execute(request)

    def execute(self, request: ActionRequest) -> ActionResult:
        self.requests.append(request)
        if request.action == self.stop_at and self.executor is not None:
            self.executor.request_shutdown("stopped")
        if request.kind != "claude":
            return ActionResult("", "", 1 if len(self.requests) < 3 else 0, 1)
        if request.resume_session in self.lost:
            return ActionResult("", LOST.format(request.resume_session), 1, 1)
        session = request.resume_session or f"sess-{len(self.requests)}"
        return ActionResult("done", "", 0, 1, session_id=session)

    def cancel(self, reason: str = "stopped") -> None:
        pass


def loop(**fix: Any) -> FSMLoop:
    return FSMLoop(
        name="sessions",
        initial="fix",
        states={
            "fix": StateConfig(action="Fix", action_type="prompt", next="check", **fix),
            "check": StateConfig(action="check", on_success="done", on_failure="fix"),
            "done": StateConfig(terminal=True),
        },
    )


def _claude(runner: SessionRunner) -> list[ActionRequest]:
    return [r for r in runner.requests if r.kind == "claude"]


def test_continue_resumes_the_states_last_session_and_fresh_does_not() -> None:
    for session, resumed in (("continue", [None, "sess-1"]), ("fresh", [None, None])):
        runner = SessionRunner()
        executor = FSMExecutor(loop(session=session), action_runner=runner)
        assert executor.run().terminated_by == "terminal"
        assert [r.resume_session for r in _claude(runner)] == resumed
        assert executor.sessions == {"fix": "sess-1" if session == "continue" else "sess-3"}


def test_states_with_one_session_key_share_a_session() -> None:
    fsm = FSMLoop(
        name="shared",
        initial="plan",
        states={
            "plan": StateConfig(action="Plan", action_type="prompt", next="fix"),
            "fix": StateConfig(
                action="Fix", action_type="prompt", session="continue", session_key="plan"
            ),
        },
    )
    fsm.states["fix"].next = "done"
    fsm.states["done"] = StateConfig(terminal=True)
    runner = SessionRunner()
    FSMExecutor(fsm, action_runner=runner).run()
    assert [r.resume_session for r in runner.requests] == [None, "sess-1"]


def test_sessions_survive_a_stop_and_resume() -> None:
    runner = SessionRunner()
    first = FSMExecutor(loop(session="continue"), action_runner=runner)
    runner.executor, runner.stop_at = first, "check"
    assert first.run().terminated_by == "stopped"
    # What the state file keeps, read back as a resume reads it.
    saved = json.loads(json.dumps(LoopState.from_snapshot("sessions", first.snapshot()).to_dict()))
    assert saved["sessions"] == {"fix": "sess-1"}
    again = SessionRunner()
    second = FSMExecutor(loop(session="continue"), action_runner=again)
    second.restore(LoopState.from_dict(saved).snapshot())
    second.run()
    assert [r.resume_session for r in _claude(again)] == ["sess-1"]


def test_a_session_claude_lost_runs_fresh_with_a_note() -> None:
    runner, seen = SessionRunner(lost=frozenset({"sess-1"})), list[dict[str, Any]]()
    executor = FSMExecutor(loop(session="continue"), seen.append, runner)
    assert executor.run().terminated_by == "terminal"
    assert [r.resume_session for r in _claude(runner)] == [None, "sess-1", None]
    (note,) = [e for e in seen if e["event"] == "session_lost"]
    assert note["note"] == "claude cannot resume session sess-1: state 'fix' starts a fresh one"
    completes = [e for e in seen if e["event"] == "action_complete" and e["state"] == "fix"]
    assert [c["exit_code"] for c in completes] == [0, 0]
    assert executor.sessions == {"fix": "sess-4"}
