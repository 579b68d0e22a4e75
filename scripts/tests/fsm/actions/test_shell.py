"""The shell kind: `bash -c ACTION`, values quoted, judged by exit code, through the runner."""

from __future__ import annotations

from pathlib import Path

from little_loops.fsm.actions import shell
from little_loops.fsm.actions.request import ActionRequest
from little_loops.fsm.actions.runners import DefaultActionRunner
from little_loops.fsm.actions.spec import Interpolation


def test_the_command_line_is_bash_c_and_the_action() -> None:
    request = ActionRequest("echo hi | wc -c", 10, "shell")
    assert shell.argv(request, shell.SPEC.program) == ["bash", "-c", "echo hi | wc -c"]


def test_the_spec_serves_shell_and_behaves_as_before_kinds() -> None:
    spec = shell.SPEC
    assert spec.action_types == ("shell",)
    assert spec.interpolation is Interpolation.SHELL
    assert (spec.default_evaluator, spec.default_timeout) == ("exit_code", 120)
    assert spec.agent is None
    assert spec.readable is None
    assert spec.install_hint == ""
    assert spec.loop_idle_timeout
    assert not spec.sessions


def test_the_runner_runs_it_with_bash_and_a_missing_program_has_no_hint(tmp_path: Path) -> None:
    with DefaultActionRunner(cwd=tmp_path, keep_output=False) as runner:
        result = runner.execute(ActionRequest("echo $((6 * 7))", 10, "shell"))
        assert (result.output, result.exit_code) == ("42\n", 0)
    with DefaultActionRunner(cwd=tmp_path, commands={"shell": ("no-such-bash-x",)}) as runner:
        missing = runner.execute(ActionRequest("true", 10, "shell"))
    assert missing.error == "no-such-bash-x: command not found on PATH"
