"""One state's work: its action run through a runner, its verdict, the events and the spend."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from support.engine_parts import Recorded

from little_loops.fsm.actions.claude import NO_SESSION
from little_loops.fsm.actions.request import ActionRequest, ActionResult
from little_loops.fsm.actions.runners import DefaultActionRunner
from little_loops.fsm.definition.model.typed import (
    SESSION_CONTINUE,
    FSMLoop,
    LLMConfig,
    StateConfig,
)
from little_loops.fsm.engine import step
from little_loops.fsm.engine.config import ExecutorConfig
from little_loops.fsm.engine.step import (
    ActionCall,
    Launch,
    SessionBook,
    StateWork,
    action_request,
    handoff_note,
)
from little_loops.fsm.evaluators.spec import ERROR_VERDICT, EvaluationResult
from little_loops.fsm.facts.events import Event
from little_loops.fsm.facts.layout import output_file_name
from little_loops.fsm.facts.spend import Spend
from little_loops.fsm.values.interpolation import InterpolationContext

SHELL = StateConfig(action="make test", timeout=50, on_success="done", on_failure="done")
CLAUDE = StateConfig(
    action="Fix it", action_type="prompt", session=SESSION_CONTINUE, on_success="done"
)


def loop(**states: StateConfig) -> FSMLoop:
    return FSMLoop(
        name="fix",
        initial=next(iter(states)),
        states={**states, "done": StateConfig(terminal=True)},
        llm=LLMConfig(enabled=False),
        idle_timeout=30,
    )


@dataclass
class Scripted:
    """A full ActionRunner whose results are given in order; it records each request."""

    results: list[ActionResult]
    streams_output: bool = False
    requests: list[ActionRequest] = field(default_factory=list)

    def run(self, request: ActionRequest) -> ActionResult:
        return self.execute(request)

    def execute(self, request: ActionRequest) -> ActionResult:
        self.requests.append(request)
        return self.results.pop(0)

    def cancel(self, reason: str = "stopped") -> None:
        raise AssertionError("not stopped here")


def paid(output: str, code: int, cost: float, session: str | None) -> ActionResult:
    result = ActionResult(output, "", code, 5, cost_usd=cost, session_id=session)
    if NO_SESSION in output:
        result.stderr = output
    return result


def test_a_handoff_note_is_read_from_the_start_of_a_line() -> None:
    assert handoff_note("working\nCONTEXT_HANDOFF:  go on with b.py \nbye") == "go on with b.py"
    assert handoff_note("CONTEXT_HANDOFF:") == ""
    assert handoff_note("no handoff here") is None
    assert handoff_note("said CONTEXT_HANDOFF: not at the start") is None


def test_a_request_takes_the_kind_and_its_idle_timeout() -> None:
    fsm = loop(check=SHELL, fix=CLAUDE)
    shell = action_request(fsm, ActionCall("check", SHELL, "make test"), Launch(50))
    assert (shell.kind, shell.timeout, shell.idle_timeout) == ("shell", 50, 30)
    launch = Launch(9, Path("x.out"), {"model": "m"}, "s-1")
    claude = action_request(fsm, ActionCall("fix", CLAUDE, "Fix it"), launch)
    assert claude.kind == "claude"
    assert claude.idle_timeout is None  # the loop's idle_timeout is not a Claude session's
    assert (claude.output_file, claude.options, claude.resume_session) == (
        Path("x.out"),
        {"model": "m"},
        "s-1",
    )


def test_a_shell_action_runs_within_the_time_left_and_is_announced() -> None:
    emitted = Recorded()
    runner = Scripted([ActionResult("ok", "", 0, 3)])
    work = StateWork(loop(check=SHELL), runner, emitted)
    result = work.act(ActionCall("check", SHELL, "make test"), 12.5, Spend())
    assert result.output == "ok"
    (request,) = runner.requests
    assert (request.action, request.timeout, request.output_file) == ("make test", 12.5, None)
    assert emitted.seen == [
        (
            Event.ACTION_START,
            {"state": "check", "action": "make test", "action_type": "shell", "timeout": 12.5},
        )
    ]
    work.completed("check", result, Spend())
    name, payload = emitted.seen[-1]
    assert name == Event.ACTION_COMPLETE
    assert (payload["state"], payload["exit_code"], payload["output"]) == ("check", 0, "ok")


def test_a_streaming_runner_gets_an_output_file_named_by_the_key(tmp_path: Path) -> None:
    emitted = Recorded()
    runner = Scripted([ActionResult("", "", 0, 1)], streams_output=True)
    work = StateWork(
        loop(check=SHELL), runner, emitted, ExecutorConfig(output_dir=tmp_path, output_key="fix@ab")
    )
    work.act(ActionCall("check", SHELL, "make test"), None, Spend())
    expected = tmp_path / output_file_name("fix@ab", "check")
    assert runner.requests[0].output_file == expected
    assert runner.requests[0].timeout == 50  # the state's own timeout, with no limit left
    assert emitted.seen[0][1]["output_path"] == str(expected)


def test_a_claude_action_resumes_its_session_records_the_new_one_and_adds_its_cost() -> None:
    emitted = Recorded()
    runner = Scripted([paid("fixed", 0, 0.5, "s-2")])
    spend = Spend()
    sessions = {"fix": "s-1"}
    work = StateWork(loop(fix=CLAUDE), runner, emitted)
    work.act(ActionCall("fix", CLAUDE, "Fix it"), None, spend, SessionBook(sessions))
    assert runner.requests[0].resume_session == "s-1"
    assert runner.requests[0].options == {}
    assert emitted.seen[0][1]["resume_session"] == "s-1"
    assert sessions == {"fix": "s-2"}
    assert spend.cost_usd == 0.5


def test_a_session_that_cannot_be_resumed_is_started_fresh() -> None:
    emitted = Recorded()
    lost = paid(f"{NO_SESSION} s-1", 1, 0.25, None)
    runner = Scripted([lost, paid("fixed", 0, 0.5, "s-3")])
    spend = Spend()
    sessions = {"fix": "s-1"}
    result = StateWork(loop(fix=CLAUDE), runner, emitted).act(
        ActionCall("fix", CLAUDE, "Fix it"), None, spend, SessionBook(sessions)
    )
    assert result.output == "fixed"
    assert [r.resume_session for r in runner.requests] == ["s-1", None]
    assert emitted.names() == [Event.ACTION_START, Event.SESSION_LOST]
    assert emitted.seen[1][1]["session_id"] == "s-1"
    assert spend.cost_usd == 0.75  # both tries are paid for
    assert sessions == {"fix": "s-3"}


def test_the_verdict_is_judged_and_emitted() -> None:
    emitted = Recorded()
    work = StateWork(loop(check=SHELL), Scripted([]), emitted)
    ctx = InterpolationContext(env={})
    failed = work.judge("check", SHELL, ActionResult("", "", 1, 1), ctx, Spend())
    assert failed.verdict == "failure"
    assert emitted.seen[-1][0] == Event.EVALUATE
    assert emitted.seen[-1][1]["verdict"] == "failure"
    assert emitted.seen[-1][1]["type"] == "exit_code"
    assert work.judge("check", SHELL, None, ctx, Spend()).verdict == "success"


def test_an_action_that_could_not_run_is_the_verdict_error() -> None:
    emitted = Recorded()
    work = StateWork(loop(check=SHELL), Scripted([]), emitted)
    broken = ActionResult("", "", 124, 1, error="timed out after 50s")
    result = work.judge("check", SHELL, broken, InterpolationContext(env={}), Spend())
    assert result == EvaluationResult(
        ERROR_VERDICT, {"error": "timed out after 50s", "exit_code": 124}
    )
    assert emitted.seen[-1][1]["verdict"] == ERROR_VERDICT


def test_a_judge_cost_is_added_and_a_rate_limited_judge_emits_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    answers = [
        EvaluationResult("success", {"cost_usd": 0.125}),
        EvaluationResult(ERROR_VERDICT, {"error": "API error 429 rate limit reached"}),
    ]

    def judged(*args: Any, **kwargs: Any) -> EvaluationResult:
        return answers.pop(0)

    monkeypatch.setattr(step, "evaluate", judged)
    emitted = Recorded()
    spend = Spend()
    work = StateWork(loop(check=SHELL), Scripted([]), emitted)
    ctx = InterpolationContext(env={})
    work.judge("check", SHELL, ActionResult("", "", 0, 1), ctx, spend)
    assert spend.cost_usd == 0.125
    assert emitted.seen[-1][1]["cost_usd"] == 0.125
    waited = work.judge("check", SHELL, ActionResult("", "", 0, 1), ctx, spend)
    assert waited.verdict == ERROR_VERDICT
    assert len(emitted.seen) == 1  # the executor waits and asks again: no verdict yet


def test_a_real_bash_action_through_the_default_runner(tmp_path: Path) -> None:
    emitted = Recorded()
    runner = DefaultActionRunner(cwd=tmp_path, output_dir=tmp_path)
    work = StateWork(loop(check=SHELL), runner, emitted, ExecutorConfig(output_dir=tmp_path))
    result = work.act(
        ActionCall("check", SHELL, "echo checked; echo oops >&2; exit 1"), None, Spend()
    )
    assert (result.output.strip(), result.stderr.strip(), result.exit_code) == (
        "checked",
        "oops",
        1,
    )
    output_file = tmp_path / output_file_name("fix", "check")
    assert output_file.read_text().strip() == "checked"
    verdict = work.judge("check", SHELL, result, InterpolationContext(env={}), Spend())
    assert verdict.verdict == "failure"


def test_a_session_continued_on_another_agent_starts_fresh_and_is_kept_with_that_agent() -> None:
    other = dataclasses.replace(CLAUDE.action_kind(), name="other", agent="Other")
    emitted = Recorded()
    runner = Scripted([paid("fixed", 0, 0.5, "o-1"), paid("again", 0, 0.5, "o-2")])
    sessions, whose = {"fix": "s-1"}, {"fix": "claude"}
    work = StateWork(loop(fix=CLAUDE), runner, emitted)
    work.act(
        ActionCall("fix", CLAUDE, "Fix it", other), None, Spend(), SessionBook(sessions, whose)
    )
    assert runner.requests[0].kind == "other"
    assert runner.requests[0].resume_session is None  # claude's session: not other's to resume
    start = emitted.seen[0][1]
    assert start["agent"] == "other"
    assert start["fresh_session"] == "session 'fix' is claude's: other starts a fresh one"
    assert (sessions, whose) == ({"fix": "o-1"}, {"fix": "other"})
    # Its own session it resumes; a session recorded before agents were (no owner) is claude's.
    work.act(
        ActionCall("fix", CLAUDE, "Fix it", other), None, Spend(), SessionBook(sessions, whose)
    )
    assert runner.requests[1].resume_session == "o-1"
    assert "fresh_session" not in emitted.seen[1][1]
