"""What an action kind is: the spec's defaults, its interpolation, its shown name."""

from __future__ import annotations

from little_loops.fsm.actions import claude_code, shell
from little_loops.fsm.actions.request import ActionRequest, ActionResult
from little_loops.fsm.actions.spec import ActionKindSpec, Interpolation
from little_loops.fsm.values.interpolation import InterpolationContext
from little_loops.fsm.values.shellquote import Rendered


def _plain() -> ActionKindSpec:
    return ActionKindSpec(
        name="plain",
        summary="a test kind",
        action_types=("plain",),
        argv=lambda request, program: [*program, request.action],
        program=("printf", "%s"),
    )


def test_the_defaults_are_a_plain_commands() -> None:
    spec = _plain()
    assert spec.interpolation is Interpolation.TEXT
    assert (spec.default_evaluator, spec.default_timeout) == ("exit_code", 120)
    assert spec.agent is None
    assert spec.options_key is None
    assert not spec.sessions
    assert spec.loop_idle_timeout
    result = ActionResult("out", "", 0, 1)
    assert spec.finish(result, ActionRequest("x", 1, "plain")) is result
    assert spec.usage_limit(result) is None
    assert not spec.lost_session(result)
    assert spec.readable is None
    assert spec.latest_step is None


def test_shown_as_is_the_agent_else_the_name() -> None:
    assert _plain().shown_as == "plain"
    assert shell.SPEC.shown_as == "shell"
    assert claude_code.SPEC.shown_as == "Claude"


def test_shell_interpolation_hands_values_in_the_environment_and_text_keeps_them() -> None:
    ctx = InterpolationContext(context={"who": "a b; rm -rf x"})
    assert Interpolation.TEXT.apply("hi ${context.who}", ctx) == Rendered("hi a b; rm -rf x")
    for rendered in (
        Interpolation.SHELL.apply("echo ${context.who}", ctx),
        shell.SPEC.interpolate("echo ${context.who}", ctx),
    ):
        assert (rendered.script, rendered.env) == ('echo "${LL_V_1}"', {"LL_V_1": "a b; rm -rf x"})
        assert rendered.readable == "echo 'a b; rm -rf x'"
    fix = claude_code.SPEC.interpolate("fix ${context.who}", ctx)
    assert (fix.script, fix.env) == ("fix a b; rm -rf x", {})
