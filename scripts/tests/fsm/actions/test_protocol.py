"""The `ActionRunner` Protocol declares every call the executor makes on a runner."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from little_loops.fsm.actions import protocol
from little_loops.fsm.actions.protocol import ActionRunner, RunOnly, as_action_runner
from little_loops.fsm.actions.registry import SLASH_KIND
from little_loops.fsm.actions.request import ActionRequest, ActionResult
from little_loops.fsm.actions.runners import DefaultActionRunner
from little_loops.fsm.engine import executor, records, step


class OnlyRun:
    def __init__(self) -> None:
        self.calls: list[tuple[str, float | None, str]] = []

    def run(self, request: ActionRequest) -> ActionResult:
        self.calls.append((request.action, request.timeout, request.kind))
        return ActionResult("out", "", 0, 1)


def _runner_calls(source: str) -> set[str]:
    """The attributes read on `self.action_runner` (executor) or `self.runner` (step)."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr in ("action_runner", "runner")
        ):
            names.add(node.attr)
    return names


def _declared() -> set[str]:
    tree = ast.parse(inspect.getsource(ActionRunner))
    cls = tree.body[0]
    assert isinstance(cls, ast.ClassDef)
    return {node.name for node in cls.body if isinstance(node, ast.FunctionDef)}


def test_the_protocol_declares_every_call_the_executor_makes() -> None:
    calls = set()
    for module in (executor, step):
        source = Path(inspect.getfile(module)).read_text()
        calls |= _runner_calls(source)
        assert "getattr(" not in source
    assert {"execute", "cancel", "streams_output"} <= calls
    assert calls <= _declared()


def test_no_runner_module_probes_with_getattr() -> None:
    for module in (protocol, executor, step, records):
        assert "getattr(" not in inspect.getsource(module)


def test_the_default_runner_is_a_full_action_runner(tmp_path: Path) -> None:
    with DefaultActionRunner(cwd=tmp_path) as runner:
        assert isinstance(runner, ActionRunner)
        assert as_action_runner(runner) is runner
        assert runner.streams_output


def test_a_run_only_runner_is_adapted() -> None:
    inner = OnlyRun()
    adapted = as_action_runner(inner)
    assert isinstance(adapted, RunOnly)
    assert not adapted.streams_output
    result = adapted.execute(ActionRequest("echo", 5.0, "claude", idle_timeout=1.0))
    assert result.output == "out"
    assert inner.calls == [("echo", 5.0, "claude")]
    adapted.cancel("stopped")  # nothing to stop
    assert adapted.run(ActionRequest("x", 1, "shell")).exit_code == 0


class SeedStyle:
    """A runner written to the original design's `run(action, timeout, is_slash_command)`."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, float, bool]] = []

    def run(self, action: str, timeout: float, is_slash_command: bool) -> ActionResult:
        self.calls.append((action, timeout, is_slash_command))
        return ActionResult("done", "", 0, 1)


def test_a_runner_of_the_original_design_still_runs_a_loop() -> None:
    # People wrote runners to the seed's three-argument `run`; the executor still drives
    # them: the third argument is True for an action that goes to the coding agent.
    from little_loops.fsm.engine.executor import FSMExecutor
    from little_loops.fsm.schema import FSMLoop

    fsm = FSMLoop.from_dict(
        {
            "name": "seed",
            "initial": "ask",
            "states": {
                "ask": {"action": "/fix-it", "evaluate": {"type": "exit_code"}, "next": "check"},
                "check": {"action": "make test", "timeout": 7, "on_success": "done"},
                "done": {"terminal": True},
            },
        }
    )
    runner = SeedStyle()
    result = FSMExecutor(fsm, action_runner=runner).run()
    assert result.final_state == "done"
    assert [(action, agent) for action, _, agent in runner.calls] == [
        ("/fix-it", True),
        ("make test", False),
    ]
    assert runner.calls[1][1] == 7


def test_a_runner_of_the_original_design_gets_a_script_that_carries_its_values(
    tmp_path: Path,
) -> None:
    # Such a runner is handed only text, not the environment the values travel in: the
    # text assigns them first, so real bash runs it with each value as data.
    import subprocess

    from little_loops.fsm.engine.executor import FSMExecutor
    from little_loops.fsm.schema import FSMLoop

    value = 'it\'s $(touch PWNED) "x"\n; rm -rf /tmp/nothing'
    fsm = FSMLoop.from_dict(
        {
            "name": "seed",
            "initial": "say",
            "context": {"v": value},
            "states": {
                "say": {"action": "printf '%s|' ${context.v} '${context.v}'", "next": "done"},
                "done": {"terminal": True},
            },
        }
    )
    runner = SeedStyle()
    FSMExecutor(fsm, action_runner=runner).run()
    script = runner.calls[0][0]
    assert "$(touch" not in script.split("\n")[-1]  # the value is not in the command itself
    ran = subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, check=True, env={}, cwd=tmp_path
    )
    assert ran.stdout == f"{value}|{value}|"
    assert not (tmp_path / "PWNED").exists()


def test_a_runner_taking_the_request_is_not_mistaken_for_the_seed_one() -> None:
    runner = OnlyRun()
    as_action_runner(runner).execute(ActionRequest(action="x", timeout=3, kind="shell"))
    assert runner.calls == [("x", 3, "shell")]


class SeedStyleWithExtras:
    """A seed runner with an optional fourth parameter, as runners that stream lines have."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, float, bool]] = []

    def run(
        self, action: str, timeout: float, is_slash_command: bool, on_line: object = None
    ) -> ActionResult:
        self.calls.append((action, timeout, is_slash_command))
        return ActionResult("done", "", 0, 1)


class SeedStyleWithDefaults:
    """A seed runner whose last argument has a default (the old executor passed it anyway)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, float, bool]] = []

    def run(self, action: str, timeout: float = 60, is_slash_command: bool = False) -> ActionResult:
        self.calls.append((action, timeout, is_slash_command))
        return ActionResult("done", "", 0, 1)


def test_a_seed_runner_with_an_optional_extra_parameter_is_still_the_seed_one() -> None:
    # The old executor called run(action, timeout=..., is_slash_command=...): extra optional
    # parameters were fine. Taking such a runner for one of `run(request)` breaks every action.
    for runner in (SeedStyleWithExtras(), SeedStyleWithDefaults()):
        request = ActionRequest(action="/x", timeout=3, kind=SLASH_KIND.name)
        as_action_runner(runner).execute(request)
        assert runner.calls == [("/x", 3, True)]


def test_a_runner_taking_the_request_and_an_option_is_not_the_seed_one() -> None:
    class RequestAndOption:
        def __init__(self) -> None:
            self.kinds: list[str] = []

        def run(self, request: ActionRequest, verbose: bool = False) -> ActionResult:
            self.kinds.append(request.kind)
            return ActionResult("", "", 0, 1)

    runner = RequestAndOption()
    as_action_runner(runner).execute(ActionRequest(action="x", timeout=3, kind="shell"))
    assert runner.kinds == ["shell"]
