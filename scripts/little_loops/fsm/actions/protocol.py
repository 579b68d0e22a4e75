"""How the executor runs actions: the `ActionRunner` Protocol, and an adapter for `run` only."""

from __future__ import annotations

import math
from typing import Protocol, runtime_checkable

from little_loops.fsm.actions.request import ActionRequest, ActionResult


@runtime_checkable
class ActionRunner(Protocol):
    """Every call the executor makes on a runner (`DefaultActionRunner` implements it)."""

    @property
    def streams_output(self) -> bool:
        """True when `execute` writes all of stdout and stderr, live, to files (`output_file`)."""
        ...

    def run(self, action: str, timeout: int | float, is_slash_command: bool) -> ActionResult:
        """Run `action` (bash, or claude when `is_slash_command`) within `timeout` seconds."""
        ...

    def execute(self, request: ActionRequest) -> ActionResult:
        """Run one action to completion, timeout, idle timeout or cancellation."""
        ...

    def cancel(self, reason: str = "stopped") -> None:
        """Stop the running action; safe from a signal handler or another thread."""
        ...


class RunsActions(Protocol):
    """The narrow runner of the seed: only `run`. Test doubles implement just this."""

    def run(self, action: str, timeout: int | float, is_slash_command: bool) -> ActionResult:
        """Run `action` (bash, or claude when `is_slash_command`) within `timeout` seconds."""
        ...


class RunOnly:
    """An `ActionRunner` over a runner that has only `run`.

    It writes no output file and cannot stop a running action (a stop takes effect when
    the action returns); an idle timeout is not enforced.
    """

    streams_output = False

    def __init__(self, runner: RunsActions) -> None:
        self.runner = runner

    def run(self, action: str, timeout: int | float, is_slash_command: bool) -> ActionResult:
        return self.runner.run(action, timeout=timeout, is_slash_command=is_slash_command)

    def execute(self, request: ActionRequest) -> ActionResult:
        timeout = math.inf if request.timeout is None else request.timeout
        return self.run(request.action, timeout, request.is_slash_command)

    def cancel(self, reason: str = "stopped") -> None:
        """Nothing to stop: the executor ends the run when the action returns."""


def as_action_runner(runner: ActionRunner | RunsActions) -> ActionRunner:
    """*runner* itself when it is a full `ActionRunner`, else wrapped in `RunOnly`."""
    if isinstance(runner, ActionRunner):
        return runner
    return RunOnly(runner)
