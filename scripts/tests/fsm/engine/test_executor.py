"""FSMExecutor with a scripted runner: the executor seed's acceptance criteria and routing."""

from __future__ import annotations

import re
import subprocess
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from support.fake_claude import REPORT, fake_claude, json_line, said, stream_claude
from support.loops import PayingRunner, first_action_complete, prompt_loop
from support.slowdown import scaled

from little_loops.fsm.actions.request import ActionRequest
from little_loops.fsm.actions.runners import DefaultActionRunner
from little_loops.fsm.definition.model.typed import (
    EvaluateConfig,
    FSMLoop,
    LLMConfig,
    RouteConfig,
    StateConfig,
)
from little_loops.fsm.engine.executor import ActionResult, ExecutorSnapshot, FSMExecutor
from little_loops.fsm.values.shellquote import shell_word


@dataclass
class Reply:
    exit_code: int = 0
    output: str = ""
    stderr: str = ""
    delay: float = 0.0


def filled(request: ActionRequest) -> str:
    """The action as a person reads it: each value a shell script reads from its environment
    written in place of its reference, a quoted word `"${LL_V_n}"` as one shell word."""
    env = request.env or {}

    def value(match: re.Match[str]) -> str:
        if match.group(1):
            return shell_word(env[match.group(1)])
        return env[match.group(2)]

    return re.sub(r'"\$\{(LL_V_\w+)\}"|\$\{(LL_V_\w+)\}', value, request.action)


@dataclass
class ScriptedRunner:
    """An ActionRunner written against the narrow seed Protocol only (no execute/cancel)."""

    replies: dict[str, list[Reply]] = field(default_factory=dict)
    default: Reply = field(default_factory=Reply)
    calls: list[str] = field(default_factory=list)
    slash_flags: list[bool] = field(default_factory=list)
    timeouts: list[float] = field(default_factory=list)

    def script(self, action: str, replies: Iterable[Reply]) -> ScriptedRunner:
        self.replies.setdefault(action, []).extend(replies)
        return self

    def run(self, request: ActionRequest) -> ActionResult:
        action = filled(request)
        timeout = request.timeout
        self.calls.append(action)
        self.slash_flags.append(request.kind == "claude")
        self.timeouts.append(timeout)
        queue = self.replies.get(action)
        reply = queue.pop(0) if queue else self.default
        if reply.delay:
            time.sleep(reply.delay)
        return ActionResult(reply.output, reply.stderr, reply.exit_code, int(reply.delay * 1000))

    @property
    def last_action(self) -> str:
        return self.calls[-1]


def loop(states: dict[str, StateConfig], initial: str = "check", **kw: Any) -> FSMLoop:
    return FSMLoop(name="test", initial=initial, states=states, **kw)


def check_fix_done(**kw: Any) -> FSMLoop:
    return loop(
        {
            "check": StateConfig(action="pytest", on_success="done", on_failure="fix"),
            "fix": StateConfig(action="fix.sh", next="check"),
            "done": StateConfig(terminal=True),
        },
        **kw,
    )


def run(fsm: FSMLoop, runner: ScriptedRunner, **kw: Any) -> tuple[Any, list[dict[str, Any]]]:
    events: list[dict[str, Any]] = []
    result = FSMExecutor(fsm, event_callback=events.append, action_runner=runner, **kw).run()
    return result, events


def kinds(events: list[dict[str, Any]]) -> list[str]:
    return [e["event"] for e in events]


class TestSeedAcceptance:
    def test_simple_success_path(self) -> None:
        runner = ScriptedRunner().script("pytest", [Reply(0)])
        result, _ = run(check_fix_done(), runner)
        assert (result.final_state, result.iterations, result.terminated_by) == (
            "done",
            1,
            "terminal",
        )
        assert runner.calls == ["pytest"]

    def test_fix_retry_loop_counts_passes(self) -> None:
        runner = ScriptedRunner().script("pytest", [Reply(1), Reply(0)])
        result, _ = run(check_fix_done(), runner)
        assert runner.calls == ["pytest", "fix.sh", "pytest"]
        assert result.final_state == "done"
        assert result.iterations == 2  # check→fix is pass 1, check again starts pass 2

    def test_max_iterations_respected(self) -> None:
        fsm = loop(
            {
                "loop": StateConfig(action="fail.sh", on_failure="loop"),
                "done": StateConfig(terminal=True),
            },
            initial="loop",
            max_iterations=3,
        )
        runner = ScriptedRunner(default=Reply(1))
        result, _ = run(fsm, runner)
        assert result.iterations == 3
        assert result.terminated_by == "max_iterations"
        assert len(runner.calls) == 3

    def test_reaching_terminal_on_last_allowed_pass_is_terminal(self) -> None:
        runner = ScriptedRunner().script("pytest", [Reply(1), Reply(0)])
        result, _ = run(check_fix_done(max_iterations=2), runner)
        assert result.terminated_by == "terminal"

    def test_variable_interpolation(self) -> None:
        fsm = loop(
            {
                "check": StateConfig(action="mypy ${context.target_dir}", on_success="done"),
                "done": StateConfig(terminal=True),
            },
            context={"target_dir": "src/"},
        )
        runner = ScriptedRunner()
        run(fsm, runner)
        assert runner.last_action == "mypy src/"

    def test_capture_stores_output(self) -> None:
        fsm = loop(
            {
                "measure": StateConfig(action="count.sh", capture="errors", next="done"),
                "done": StateConfig(terminal=True),
            },
            initial="measure",
        )
        runner = ScriptedRunner().script("count.sh", [Reply(0, output="42", stderr="w")])
        result, _ = run(fsm, runner)
        assert result.captured["errors"] == {
            "output": "42",
            "stderr": "w",
            "exit_code": 0,
            "duration_ms": 0,
        }

    def test_events_emitted_in_order(self) -> None:
        runner = ScriptedRunner().script("pytest", [Reply(0)])
        _, events = run(check_fix_done(), runner)
        assert kinds(events) == [
            "loop_start",
            "state_enter",
            "action_start",
            "action_complete",
            "evaluate",
            "route",
            "loop_complete",
        ]
        assert all("ts" in e for e in events)
        assert events[-1]["terminated_by"] == "terminal"

    def test_explicit_evaluate_overrides_default(self) -> None:
        fsm = loop(
            {
                "check": StateConfig(
                    action="pytest",
                    evaluate=EvaluateConfig(type="output_contains", pattern="passed"),
                    on_success="done",
                    on_failure="fix",
                ),
                "fix": StateConfig(action="fix.sh", next="check"),
                "done": StateConfig(terminal=True),
            }
        )
        runner = ScriptedRunner().script("pytest", [Reply(1, output="3 passed")])
        result, events = run(fsm, runner)
        assert result.final_state == "done"
        evaluate = next(e for e in events if e["event"] == "evaluate")
        assert evaluate["type"] == "output_contains"
        assert evaluate["verdict"] == "success"


class TestActionType:
    def _one(self, state: StateConfig) -> ScriptedRunner:
        state.on_success = "done"
        state.on_failure = "done"
        fsm = loop(
            {"check": state, "done": StateConfig(terminal=True)}, llm=LLMConfig(enabled=False)
        )
        runner = ScriptedRunner()
        run(fsm, runner)
        return runner

    def test_prompt_goes_to_claude_without_slash(self) -> None:
        runner = self._one(StateConfig(action="Analyze the code", action_type="prompt"))
        assert runner.slash_flags == [True]

    def test_shell_wins_over_leading_slash(self) -> None:
        runner = self._one(StateConfig(action="/usr/bin/ls", action_type="shell"))
        assert runner.slash_flags == [False]

    @pytest.mark.parametrize(("action", "flag"), [("/ll:help", True), ("ls /", False)])
    def test_heuristic_without_action_type(self, action: str, flag: bool) -> None:
        assert self._one(StateConfig(action=action)).slash_flags == [flag]

    def test_default_timeouts_differ_for_prompts_and_shell(self) -> None:
        assert self._one(StateConfig(action="ls")).timeouts == [120]
        assert self._one(StateConfig(action="/x")).timeouts == [1800]
        assert self._one(StateConfig(action="ls", timeout=7)).timeouts == [7]

    def test_no_llm_falls_back_to_exit_code_with_a_note(self) -> None:
        fsm = loop(
            {
                "check": StateConfig(action="/ll:fix", on_success="done", on_failure="check"),
                "done": StateConfig(terminal=True),
            },
            llm=LLMConfig(enabled=False),
        )
        runner = ScriptedRunner().script("/ll:fix", [Reply(0, output="done it")])
        result, events = run(fsm, runner)
        assert result.final_state == "done"
        evaluate = next(e for e in events if e["event"] == "evaluate")
        assert evaluate["verdict"] == "success"
        assert "disabled" in evaluate["llm_skipped"]


def table(routes: dict[str, str], action: str = "act", **kw: Any) -> StateConfig:
    return StateConfig(action=action, route=RouteConfig.from_dict(routes), **kw)


def verdict_loop(state: StateConfig, exit_code: int) -> tuple[Any, list[dict[str, Any]]]:
    fsm = loop(
        {
            "check": state,
            "a": StateConfig(terminal=True),
            "b": StateConfig(terminal=True),
            "c": StateConfig(terminal=True),
        }
    )
    return run(fsm, ScriptedRunner().script(state.action or "", [Reply(exit_code)]))


class TestRouting:
    def test_route_table_matches_verdict(self) -> None:
        result, _ = verdict_loop(table({"success": "a", "failure": "b"}), 1)
        assert result.final_state == "b"

    def test_default_route_catches_unmatched_verdict(self) -> None:
        result, events = verdict_loop(table({"success": "a", "_": "c"}), 1)
        assert result.final_state == "c"
        route = next(e for e in events if e["event"] == "route")
        assert route["reason"] == "route '_' (default)"

    def test_error_route(self) -> None:
        result, _ = verdict_loop(table({"success": "a", "_error": "b", "_": "c"}), 2)
        assert result.final_state == "b"

    def test_default_route_does_not_swallow_errors(self) -> None:
        result, _ = verdict_loop(table({"success": "a", "_": "c"}), 2)
        assert result.terminated_by == "error"
        assert result.error == "no valid transition from 'check' for verdict 'error': exit code 2"

    def test_route_table_overrides_shorthand(self) -> None:
        state = table({"failure": "b"}, on_failure="c")
        result, _ = verdict_loop(state, 1)
        assert result.final_state == "b"

    def test_shorthand_on_error(self) -> None:
        state = StateConfig(action="act", on_success="a", on_failure="b", on_error="c")
        assert verdict_loop(state, 127)[0].final_state == "c"

    def test_no_valid_transition_names_state_and_verdict(self) -> None:
        state = StateConfig(action="act", on_success="a")
        result, events = verdict_loop(state, 1)
        assert result.terminated_by == "error"
        assert result.error == "no valid transition from 'check' for verdict 'failure'"
        assert events[-1]["error"] == result.error

    def test_current_retries_same_state_with_captures(self) -> None:
        fsm = loop(
            {
                "check": StateConfig(
                    action="try ${captured.last.output}",
                    capture="last",
                    route=RouteConfig.from_dict({"success": "done", "failure": "$current"}),
                ),
                "done": StateConfig(terminal=True),
            },
            max_iterations=5,
        )
        runner = ScriptedRunner()
        runner.script("try ${captured.last.output}", [])
        runner.default = Reply(1, output="x")
        calls: list[str] = []

        def run_(request: ActionRequest) -> ActionResult:
            calls.append(filled(request))
            return ActionResult(str(len(calls)), "", 0 if len(calls) == 3 else 1, 0)

        runner.run = run_  # type: ignore[method-assign]
        fsm.states["check"].action = "try-${state.iteration}"
        result, events = run(fsm, runner)
        assert calls == ["try-1", "try-2", "try-3"]
        assert result.iterations == 3
        assert result.captured["last"]["output"] == "3"
        reasons = [e["reason"] for e in events if e["event"] == "route"]
        assert reasons[:2] == ["route 'failure' ($current)"] * 2

    def test_undeclared_interpolated_target_ends_run(self) -> None:
        fsm = loop(
            {
                "check": StateConfig(
                    action="pick",
                    capture="choice",
                    route=RouteConfig.from_dict({"success": "${captured.choice.output}"}),
                ),
                "done": StateConfig(terminal=True),
            }
        )
        result, events = run(fsm, ScriptedRunner().script("pick", [Reply(0, output="nowhere")]))
        assert result.terminated_by == "error"
        assert result.error == (
            "illegal transition check → nowhere: 'nowhere' is not a declared state "
            "(verdict 'success'; declared: check, done)"
        )
        assert "route" not in kinds(events)

    def test_every_route_event_has_full_record(self) -> None:
        runner = ScriptedRunner().script("pytest", [Reply(1), Reply(0)])
        _, events = run(check_fix_done(), runner)
        routes = [e for e in events if e["event"] == "route"]
        assert [(r["from"], r["to"], r["verdict"], r["reason"]) for r in routes] == [
            ("check", "fix", "failure", "on_failure"),
            ("fix", "check", None, "next"),
            ("check", "done", "success", "on_success"),
        ]
        assert all(r["ts"] for r in routes)


class TestLimits:
    def test_loop_timeout(self) -> None:
        fsm = loop(
            {
                "check": StateConfig(action="slow", on_failure="check"),
                "done": StateConfig(terminal=True),
            },
            timeout=0.3,
            max_iterations=100,
        )
        started = time.monotonic()
        result, _ = run(fsm, ScriptedRunner(default=Reply(1, delay=0.1)))
        assert result.terminated_by == "timeout"
        assert time.monotonic() - started < scaled(1.0, at_most=5)  # not 100 passes of 0.1 s

    def test_loop_timeout_caps_action_timeout(self) -> None:
        fsm = loop(
            {
                "check": StateConfig(action="x", timeout=100, on_success="done"),
                "done": StateConfig(terminal=True),
            },
            timeout=5,
        )
        runner = ScriptedRunner()
        run(fsm, runner)
        assert runner.timeouts[0] <= 5

    def test_backoff_sleeps_between_passes(self) -> None:
        slept: list[float] = []
        runner = ScriptedRunner().script("pytest", [Reply(1), Reply(1), Reply(0)])
        result, _ = run(check_fix_done(backoff=2.5), runner, sleep=slept.append)
        assert result.final_state == "done"
        assert slept == [2.5, 2.5]

    def test_backoff_is_real_time(self) -> None:
        runner = ScriptedRunner().script("pytest", [Reply(1), Reply(0)])
        started = time.monotonic()
        run(check_fix_done(backoff=0.3), runner)
        assert time.monotonic() - started >= 0.3

    def test_maintain_restarts_from_on_maintain(self) -> None:
        fsm = loop(
            {
                "check": StateConfig(action="c", on_success="all_valid"),
                "other": StateConfig(action="o", on_success="all_valid"),
                "all_valid": StateConfig(terminal=True, on_maintain="other"),
            },
            maintain=True,
            max_iterations=3,
        )
        runner = ScriptedRunner()
        result, events = run(fsm, runner)
        assert runner.calls == ["c", "o", "o"]
        assert result.terminated_by == "max_iterations"
        restarts = [
            e for e in events if e["event"] == "route" and e["reason"] == "maintain restart"
        ]
        assert [(r["from"], r["to"]) for r in restarts] == [("all_valid", "other")] * 3

    def test_maintain_without_on_maintain_restarts_from_initial(self) -> None:
        fsm = check_fix_done(maintain=True, max_iterations=2)
        runner = ScriptedRunner()
        result, _ = run(fsm, runner)
        assert runner.calls == ["pytest", "pytest"]
        assert result.terminated_by == "max_iterations"

    def test_terminal_without_maintain_ends(self) -> None:
        fsm = loop({"check": StateConfig(terminal=True, on_maintain="check")})
        result, _ = run(fsm, ScriptedRunner())
        assert (result.terminated_by, result.iterations) == ("terminal", 0)

    def test_terminal_state_action_runs_once(self) -> None:
        fsm = loop(
            {
                "check": StateConfig(action="c", capture="n", on_success="done"),
                "done": StateConfig(action="echo ${captured.n.output}", terminal=True),
            }
        )
        runner = ScriptedRunner().script("c", [Reply(0, output="7")])
        result, _ = run(fsm, runner)
        assert runner.calls == ["c", "echo 7"]
        assert result.terminated_by == "terminal"


class TestContextAndHandoff:
    def test_prev_and_result_reach_next_state(self) -> None:
        fsm = loop(
            {
                "check": StateConfig(action="c", on_failure="log"),
                "log": StateConfig(
                    action="echo ${prev.state} ${prev.exit_code} ${result.verdict} ${prev.output}",
                    next="done",
                ),
                "done": StateConfig(terminal=True),
            }
        )
        runner = ScriptedRunner().script("c", [Reply(1, output="E1")])
        run(fsm, runner)
        assert runner.calls[1] == "echo check 1 failure E1"

    def test_shell_actions_get_values_quoted_and_prompts_as_text(self, tmp_path: Path) -> None:
        fsm = loop(
            {
                "check": StateConfig(action="c", capture="out", next="sh"),
                "sh": StateConfig(action="echo ${captured.out} '${captured.out}'", next="ask"),
                "ask": StateConfig(action="/review ${captured.out}", next="done"),
                "done": StateConfig(terminal=True),
            }
        )
        runner = ScriptedRunner().script("c", [Reply(0, output="it's $(touch x)")])
        requests: list[ActionRequest] = []
        scripted = runner.run

        def keep(request: ActionRequest) -> ActionResult:
            requests.append(request)
            return scripted(request)

        runner.run = keep  # type: ignore[method-assign]
        run(fsm, runner)
        shell, prompt = requests[1:]
        # The shell script reads the value from its environment; real bash prints it as data.
        assert "$(touch" not in shell.action
        ran = subprocess.run(
            ["bash", "-c", shell.action],
            env=dict(shell.env or {}),
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=True,
        )
        assert ran.stdout == "it's $(touch x) it's $(touch x)\n"
        assert not (tmp_path / "x").exists()
        assert prompt.action == "/review it's $(touch x)"
        assert not prompt.env

    def test_prev_skips_unconditional_states(self) -> None:
        fsm = loop(
            {
                "measure": StateConfig(action="m", on_success="apply"),
                "apply": StateConfig(action="a", next="report"),
                "report": StateConfig(action="echo ${prev.state}:${prev.output}", next="done"),
                "done": StateConfig(terminal=True),
            },
            initial="measure",
        )
        runner = ScriptedRunner().script("m", [Reply(0, output="5")])
        run(fsm, runner)
        assert runner.calls[-1] == "echo measure:5"

    def test_decision_state_evaluates_source_without_action(self) -> None:
        fsm = loop(
            {
                "measure": StateConfig(action="count", capture="errors", next="decide"),
                "decide": StateConfig(
                    evaluate=EvaluateConfig(
                        type="output_numeric",
                        source="${captured.errors.output}",
                        operator="eq",
                        target=0,
                    ),
                    route=RouteConfig.from_dict({"success": "done", "failure": "fix"}),
                ),
                "fix": StateConfig(action="fix", next="measure"),
                "done": StateConfig(terminal=True),
            },
            initial="measure",
        )
        runner = ScriptedRunner().script("count", [Reply(0, output="2\n"), Reply(0, output="0\n")])
        result, _ = run(fsm, runner)
        assert runner.calls == ["count", "fix", "count"]
        assert result.final_state == "done"

    def test_undefined_variable_in_action_is_an_error_verdict(self) -> None:
        fsm = loop(
            {
                "check": StateConfig(
                    action="echo ${context.nope}", on_success="done", on_error="done"
                ),
                "done": StateConfig(terminal=True),
            }
        )
        runner = ScriptedRunner()
        result, events = run(fsm, runner)
        assert runner.calls == []
        assert result.final_state == "done"
        assert "${context.nope}" in next(e for e in events if e["event"] == "evaluate")["error"]

    def test_undefined_variable_without_error_route_fails_the_run(self) -> None:
        fsm = loop(
            {
                "check": StateConfig(action="echo ${captured.x.output}", on_success="done"),
                "done": StateConfig(terminal=True),
            }
        )
        result, _ = run(fsm, ScriptedRunner())
        assert result.terminated_by == "error"
        assert "${captured.x.output}" in (result.error or "")

    def test_context_handoff_from_prompt_ends_run(self) -> None:
        fsm = loop(
            {
                "fix": StateConfig(action="/ll:fix", on_success="done", on_failure="fix"),
                "done": StateConfig(terminal=True),
            },
            initial="fix",
        )
        runner = ScriptedRunner().script(
            "/ll:fix", [Reply(0, output="worked a lot\nCONTEXT_HANDOFF: continue with file b.py\n")]
        )
        result, events = run(fsm, runner)
        assert result.terminated_by == "handoff"
        assert result.handoff == "continue with file b.py"
        assert result.final_state == "fix"
        assert events[-1]["handoff"] == "continue with file b.py"

    def test_handoff_marker_from_shell_is_just_output(self) -> None:
        fsm = loop(
            {
                "check": StateConfig(action="echo", on_success="done"),
                "done": StateConfig(terminal=True),
            }
        )
        runner = ScriptedRunner().script("echo", [Reply(0, output="CONTEXT_HANDOFF: x")])
        assert run(fsm, runner)[0].terminated_by == "terminal"


class TestShutdownAndResume:
    def test_request_shutdown_during_action(self) -> None:
        # The first action lasts long enough (longer on a slower machine) to be stopped in.
        runner = ScriptedRunner(default=Reply(1, delay=scaled(0.3)))
        executor = FSMExecutor(check_fix_done(), action_runner=runner)
        timer = threading.Timer(0.1, executor.request_shutdown, args=("stopped",))
        timer.start()
        result = executor.run()
        timer.join()
        assert result.terminated_by == "stopped"
        assert result.final_state == "check"  # the interrupted state runs again on resume

    def test_snapshot_restore_continues_with_captures(self) -> None:
        runner = ScriptedRunner().script("pytest", [Reply(1)])
        first = FSMExecutor(check_fix_done(), action_runner=runner)
        stopped = {"done": False}

        def stop_at_fix(event: dict[str, Any]) -> None:
            if event["event"] == "state_enter" and event["state"] == "fix" and not stopped["done"]:
                stopped["done"] = True
                first.request_shutdown("interrupted")

        first.event_callback = stop_at_fix
        result = first.run()
        assert (result.terminated_by, result.final_state) == ("interrupted", "fix")
        snap = first.snapshot()
        assert isinstance(snap, ExecutorSnapshot)

        runner2 = ScriptedRunner().script("pytest", [Reply(0)])
        second = FSMExecutor(check_fix_done(), action_runner=runner2)
        second.restore(snap)
        result2 = second.run()
        assert runner2.calls == ["fix.sh", "pytest"]
        assert (result2.final_state, result2.iterations) == ("done", 2)
        assert result2.duration_ms >= snap.elapsed_ms

    def test_restore_rejects_unknown_state(self) -> None:
        executor = FSMExecutor(check_fix_done(), action_runner=ScriptedRunner())
        with pytest.raises(Exception, match="saved state 'gone' is not a state of loop 'test'"):
            executor.restore(ExecutorSnapshot(current_state="gone", iteration=1))


def test_maintain_restart_between_terminal_states_is_bounded() -> None:
    fsm = loop(
        {
            "done": StateConfig(action="echo done", terminal=True, on_maintain="report"),
            "report": StateConfig(action="echo report", terminal=True, on_maintain="done"),
        },
        initial="done",
        maintain=True,
        max_iterations=3,
    )
    runner = ScriptedRunner()
    result, _ = run(fsm, runner)
    assert result.terminated_by == "max_iterations"
    assert runner.calls == ["echo done", "echo report", "echo done", "echo report"]


def test_backoff_never_waits_past_the_loop_timeout() -> None:
    fsm = loop(
        {"check": StateConfig(action="c", on_failure="check"), "done": StateConfig(terminal=True)},
        timeout=0.4,
        backoff=10,
    )
    started = time.monotonic()
    result, _ = run(fsm, ScriptedRunner(default=Reply(1)))
    assert time.monotonic() - started < scaled(2, at_most=8)  # not the 10 s backoff
    assert (result.terminated_by, result.iterations) == ("timeout", 1)


class TestNextWhenTheActionCannotRun:
    def test_undefined_variable_does_not_take_next(self) -> None:
        fsm = loop(
            {
                "deploy": StateConfig(action="echo ${captured.build.output}", next="done"),
                "done": StateConfig(terminal=True),
            },
            initial="deploy",
        )
        result, _ = run(fsm, ScriptedRunner())
        assert (result.terminated_by, result.final_state) == ("error", "deploy")
        assert "${captured.build.output}" in (result.error or "")

    def test_on_error_catches_it(self) -> None:
        fsm = loop(
            {
                "deploy": StateConfig(
                    action="echo ${captured.build.output}", next="done", on_error="failed"
                ),
                "done": StateConfig(terminal=True),
                "failed": StateConfig(terminal=True),
            },
            initial="deploy",
        )
        result, events = run(fsm, ScriptedRunner())
        assert result.final_state == "failed"
        route = next(e for e in events if e["event"] == "route")
        assert (route["to"], route["verdict"], route["reason"]) == ("failed", "error", "on_error")

    def test_a_timed_out_action_does_not_take_next(self) -> None:
        class TimedOut:
            def run(self, request: ActionRequest) -> ActionResult:
                result = ActionResult("", "", 124, 5)
                result.error = "action timed out after 5ms"
                return result

        fsm = loop(
            {"build": StateConfig(action="make", next="done"), "done": StateConfig(terminal=True)},
            initial="build",
        )
        result = FSMExecutor(fsm, action_runner=TimedOut()).run()
        assert result.terminated_by == "error"
        assert result.error == (
            "no valid transition from 'build' for verdict 'error': action timed out after 5ms"
        )


def test_a_failing_event_sink_ends_the_run_with_an_error_not_an_exception() -> None:
    def full_disk(event: dict[str, Any]) -> None:
        if event["event"] != "loop_start":
            raise OSError(28, "No space left on device")

    result = FSMExecutor(
        check_fix_done(), event_callback=full_disk, action_runner=ScriptedRunner()
    ).run()
    assert result.terminated_by == "error"
    assert result.error == (
        "internal error: OSError: [Errno 28] No space left on device; could not record the end "
        "of the run: OSError: [Errno 28] No space left on device"
    )


# --- moved from test_spend.py ---


class TestBudget:
    def test_budget_stops_after_the_first_paid_call_that_crosses_it(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        calls = fake_claude(tmp_path, monkeypatch, cost=0.04)
        events: list[dict[str, Any]] = []
        fsm = prompt_loop(max_cost_usd=0.1, max_iterations=20)
        result = FSMExecutor(
            fsm, event_callback=events.append, action_runner=DefaultActionRunner(cwd=tmp_path)
        ).run()
        # 0.04, 0.08, 0.12: the third call crosses $0.10, so no fourth call starts.
        assert len(calls.read_text().splitlines()) == 3
        assert result.terminated_by == "budget"
        assert result.cost_usd == pytest.approx(0.12)
        assert result.error == "spend $0.1200 reached max_cost_usd $0.1 before state 'fix'"
        complete = [e for e in events if e["event"] == "action_complete"]
        assert complete[0]["cost_usd"] == 0.04
        assert complete[0]["usage"]["input_tokens"] == 1200
        assert complete[-1]["spent_usd"] == pytest.approx(0.12)
        assert result.usage["claude_input_tokens"] == 3600

    def test_recorded_dollars_are_rounded_to_micro_dollars(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # Claude Code sums its cost in floating point and can report float noise; the
        # event and the run's total must agree to the digit, whatever Claude printed.
        fake_claude(tmp_path, monkeypatch, cost=0.29152500000000003)
        events: list[dict[str, Any]] = []
        fsm = prompt_loop(max_iterations=1)
        result = FSMExecutor(
            fsm, event_callback=events.append, action_runner=DefaultActionRunner(cwd=tmp_path)
        ).run()
        (complete,) = [e for e in events if e["event"] == "action_complete"]
        assert repr(complete["cost_usd"]) == "0.291525"
        assert repr(complete["spent_usd"]) == "0.291525"
        assert result.cost_usd == complete["cost_usd"]

    def test_a_paid_terminal_action_waits_for_the_budget_too(self) -> None:
        fsm = FSMLoop(
            name="maintained",
            initial="check",
            states={
                "check": StateConfig(action="true", on_success="done", on_failure="done"),
                "done": StateConfig(terminal=True, action="/report"),
            },
            maintain=True,
            max_iterations=10,
            max_cost_usd=0.15,
        )
        runner = PayingRunner(cost=0.1, exit_code=0)
        result = FSMExecutor(fsm, action_runner=runner).run()
        # $0.10, $0.20: the second report crosses $0.15, so no third one starts.
        assert runner.calls == ["true", "/report", "true", "/report", "true"]
        assert (result.terminated_by, result.final_state) == ("budget", "done")

    def test_shell_states_run_on_after_the_budget_is_reached(self) -> None:
        fsm = FSMLoop(
            name="mixed",
            initial="fix",
            states={
                "fix": StateConfig(action="/fix", next="check"),
                "check": StateConfig(action="test", on_success="done", on_failure="fix"),
                "done": StateConfig(terminal=True),
            },
            max_cost_usd=0.5,
        )
        runner = PayingRunner(cost=1.0, exit_code=1)
        result = FSMExecutor(fsm, action_runner=runner).run()
        assert runner.calls == ["/fix", "test"]
        assert (result.terminated_by, result.final_state) == ("budget", "fix")


def test_the_loops_idle_timeout_does_not_end_a_claude_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A loop-level idle_timeout is for its shell steps: a Claude session inside a long
    # tool call (1 s of silence here) is not ended by it.
    report = {**REPORT, "type": "result"}
    stream_claude(
        tmp_path, monkeypatch, said("running the suite") + "sleep 1\n" + json_line(report)
    )
    fsm = prompt_loop(idle_timeout=0.3, max_iterations=1)
    complete = first_action_complete(fsm, tmp_path)
    assert (complete["exit_code"], complete["output"]) == (0, "Fixed the bug")
