"""How the executor runs actions: the `ActionRunner` Protocol, and adapters for `run` only."""

from __future__ import annotations

import dataclasses
import inspect
import math
from collections.abc import Callable
from typing import Protocol, cast, runtime_checkable

from little_loops.fsm.actions import registry
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


class SeedRunsActions(Protocol):
    """The runner of the original design: `run(action, timeout, to_agent)`, where the third
    argument says the action goes to a coding agent (Claude Code) rather than to bash."""

    def run(self, action: str, timeout: float, to_agent: bool, /) -> ActionResult: ...


class SeedRunner:
    """A `RunsActions` over a runner written to the original design's three-argument `run`."""

    def __init__(self, runner: SeedRunsActions) -> None:
        self.runner = runner

    def run(self, request: ActionRequest) -> ActionResult:
        spec = request.spec if request.spec is not None else registry.get(request.kind)
        to_agent = spec.agent is not None
        timeout = math.inf if request.timeout is None else request.timeout
        return self.runner.run(request.standalone(), timeout, to_agent)


def takes_three_arguments(run: Callable[..., object]) -> bool:
    """True when *run* (a bound method) takes the seed's three positional arguments (and
    maybe more optional ones, as the original design's executor allowed)."""
    try:
        parameters = inspect.signature(run).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 3


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


def as_action_runner(runner: ActionRunner | RunsActions | SeedRunsActions) -> ActionRunner:
    """*runner* itself when it is a full `ActionRunner`, else wrapped in `RunOnly` (through
    `SeedRunner` when its `run` is the original design's three-argument one)."""
    if isinstance(runner, ActionRunner):
        return runner
    if takes_three_arguments(runner.run):
        return RunOnly(SeedRunner(cast(SeedRunsActions, runner)))
    return RunOnly(cast(RunsActions, runner))
