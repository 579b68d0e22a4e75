"""How the executor runs actions: the `ActionRunner` Protocol, and an adapter for `run` only."""

from __future__ import annotations

import dataclasses
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

    def run(self, request: ActionRequest) -> ActionResult:
        """Run *request* with the runner's own directory and output settings."""
        ...

    def execute(self, request: ActionRequest) -> ActionResult:
        """Run one action to completion, timeout, idle timeout or cancellation."""
        ...

    def cancel(self, reason: str = "stopped") -> None:
        """Stop the running action; safe from a signal handler or another thread."""
        ...


class RunsActions(Protocol):
    """The narrow runner of the seed: only `run`. Test doubles implement just this."""

    def run(self, request: ActionRequest) -> ActionResult:
        """Run *request*'s action (of kind `request.kind`) within `request.timeout` seconds."""
        ...


class RunOnly:
    """An `ActionRunner` over a runner that has only `run`.

    It writes no output file and cannot stop a running action (a stop takes effect when
    the action returns); an idle timeout is not enforced.
    """

    streams_output = False

    def __init__(self, runner: RunsActions) -> None:
        self.runner = runner

    def run(self, request: ActionRequest) -> ActionResult:
        return self.runner.run(request)

    def execute(self, request: ActionRequest) -> ActionResult:
        timeout = math.inf if request.timeout is None else request.timeout
        return self.run(dataclasses.replace(request, timeout=timeout))

    def cancel(self, reason: str = "stopped") -> None:
        """Nothing to stop: the executor ends the run when the action returns."""


def as_action_runner(runner: ActionRunner | RunsActions) -> ActionRunner:
    """*runner* itself when it is a full `ActionRunner`, else wrapped in `RunOnly`."""
    if isinstance(runner, ActionRunner):
        return runner
    return RunOnly(runner)
