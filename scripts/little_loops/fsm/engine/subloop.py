"""A sub-loop state's child: its context, how its end reaches the parent, its saved snapshot."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from little_loops.fsm.definition.checks.subloop_checks import (
    INTERPOLATION_START,
    child_path,
    is_dynamic,
)
from little_loops.fsm.definition.model.endings import ends_in_failure
from little_loops.fsm.definition.model.metadata import RUN_DIR_KEY, runner_values
from little_loops.fsm.definition.model.parameters import check_value
from little_loops.fsm.definition.model.typed import (
    OUTCOME_FAILURE,
    OUTCOME_SUCCESS,
    FSMLoop,
)
from little_loops.fsm.engine.records import ExecutionResult, ExecutorSnapshot
from little_loops.fsm.evaluators.spec import ERROR_VERDICT
from little_loops.fsm.facts.errors import LoopDefinitionError, LoopError
from little_loops.fsm.facts.outcomes import Outcome
from little_loops.fsm.facts.spend import Spend
from little_loops.fsm.validate.loopfile import load_and_validate
from little_loops.fsm.values.interpolation import (
    InterpolationContext,
    interpolate,
    interpolate_value,
    literal,
)

# How a child run's end reaches the parent: these stop the whole tree, with the same
# terminated_by at the top; any other end but a terminal state is the verdict error.
TREE_STOPS: tuple[Outcome, ...] = (
    Outcome.BUDGET,
    Outcome.INTERRUPTED,
    Outcome.STOPPED,
    Outcome.HANDOFF,
    Outcome.HANDOFF_ENDED,
    Outcome.AWAITING_APPROVAL,
)
# A child cut off by one of these limits routes to its state's `on_timeout:` when it has one.
CUT_OFF: tuple[Outcome, ...] = (Outcome.TIMEOUT, Outcome.MAX_ITERATIONS)
SUBLOOP_EVALUATOR = "loop"  # the evaluator type the sub-loop's `evaluate` event names


def end_verdict(child: FSMLoop, terminated_by: str, final_state: str) -> str:
    """A sub-loop state's verdict when its *child* ended so: success at a terminal state,
    failure at one with `outcome: failure` (or a failure name) or one reached on the
    verdict error, else error (a limit or an error)."""
    if terminated_by not in (Outcome.TERMINAL, Outcome.TERMINAL_FAILURE):
        return ERROR_VERDICT
    final = child.states.get(final_state)
    failed = terminated_by == Outcome.TERMINAL_FAILURE or (
        final is not None and ends_in_failure(final_state, final)
    )
    return OUTCOME_FAILURE if failed else OUTCOME_SUCCESS


def child_context(
    child: FSMLoop, state_name: str, given: Mapping[str, Any], ctx: InterpolationContext
) -> dict[str, Any]:
    """The child's context: its own, with `with:` interpolated and checked against its
    parameters (defaults for the rest); raises LoopDefinitionError naming the key."""
    out = dict(child.context)
    for key, raw in given.items():
        text = isinstance(raw, str) and INTERPOLATION_START in raw
        nested = isinstance(raw, list | Mapping)  # its items are filled in here too
        value = interpolate(raw, ctx) if text else interpolate_value(raw, ctx) if nested else raw
        spec = child.parameters.get(key)
        try:
            value = value if spec is None else check_value(spec, value, text=text)
        except ValueError as exc:
            raise LoopDefinitionError(
                f"state '{state_name}' > with > {key}: parameter of loop '{child.name}': {exc}"
            ) from None
        # A filled-in value is data (it may be a command's or Claude's output): the child
        # must not fill in a `${...}` in it, which could read `${env.TOKEN}`.
        out[key] = literal(value) if text or nested else value
    for name, spec in child.parameters.items():
        if name not in out:
            if spec.required:
                raise LoopDefinitionError(
                    f"state '{state_name}': missing parameter '{name}' of loop '{child.name}'"
                )
            if spec.default is not None:  # (an optional one without: left out)
                out[name] = spec.run_default()
    # The run's folder is the parent's too (as little-loops shares it); the other values a
    # run starts with, for the keys the child reads.
    if ctx.context.get(RUN_DIR_KEY) and not out.get(RUN_DIR_KEY):
        out[RUN_DIR_KEY] = ctx.context[RUN_DIR_KEY]
    out.update(runner_values(out, child.input_key, child.to_dict()))
    return out


def shared_context(
    child: FSMLoop, parent_context: Mapping[str, Any], captured: Mapping[str, Any]
) -> dict[str, Any]:
    """The context of a `context_passthrough` child: its parameters' defaults, then the
    parent's context, then each of its captures by name (an action's output as its text),
    then the child's own `context:`, which wins (as in little-loops). Values given are data to
    the child, as `with:` values are (the parent's context is as its run holds it)."""
    outputs = {
        key: value["output"] if isinstance(value, Mapping) and "exit_code" in value else value
        for key, value in captured.items()
    }
    defaults = {name: spec.run_default() for name, spec in child.parameters.items()}
    return {**defaults, **parent_context, **literal(outputs), **child.context}


def find_child(loop: str, ctx: InterpolationContext, parent: FSMLoop) -> FSMLoop:
    """The child loop a `loop: ${...}` names now: filled in, found from the parent's file as
    a written name is, loaded and validated; LoopError in one line when it cannot be."""
    name = interpolate(loop, ctx).strip()
    if not name:
        raise LoopDefinitionError(f"loop: {loop} is empty when filled in")
    source = Path(parent.source) if parent.source else Path(".loops") / "parent.yaml"
    try:
        return load_and_validate(child_path(name, source))
    except LoopDefinitionError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise LoopDefinitionError(f"loop: {loop} is '{name}': {first}") from None


class ChildRun(Protocol):
    """What a sub-loop state needs of its child's executor (FSMExecutor is one)."""

    @property
    def fsm(self) -> FSMLoop: ...

    def run(self) -> ExecutionResult: ...

    def request_shutdown(self, reason: str = ...) -> None: ...

    def snapshot(self) -> ExecutorSnapshot: ...

    def restore(self, snap: ExecutorSnapshot) -> None: ...

    def share(self, spend: Spend, parent_remaining_s: float | None) -> None: ...


class Children:
    """The child a sub-loop state runs now, or the saved one a resume goes on inside."""

    def __init__(self, fsm: FSMLoop) -> None:
        self.fsm = fsm
        self.child: ChildRun | None = None
        self.pending: dict[str, Any] | None = None  # its saved snapshot, on resume

    def dump(self) -> dict[str, Any]:
        """The running child's snapshot (with its own child), saved as `child`; on a resume,
        the saved one until the child goes on from it (a resume's own start is saved
        before the child's: a crash then must not lose where the child was)."""
        if self.child is None:
            return {"child": self.pending}
        saved = dataclasses.asdict(self.child.snapshot())
        return {"child": {"loop": self.child.fsm.name, **saved}}

    def restore(self, snap: ExecutorSnapshot) -> None:
        # A saved child is always one still running (a finished one is not kept): go on in
        # it, also when the run was saved as only arrived at its state (a resume's start,
        # which enters it again).
        self.pending = snap.child
        check_saved_children(self.fsm, snap.current_state, self.pending)

    def take(self, loop: str) -> ExecutorSnapshot | None:
        """The saved snapshot of child *loop* to go on from (once), or None."""
        saved, self.pending = self.pending, None
        if saved is None or saved.get("loop") != loop:
            return None
        fields = {f.name for f in dataclasses.fields(ExecutorSnapshot)}
        return ExecutorSnapshot(**{k: v for k, v in saved.items() if k in fields})

    def stop(self, reason: str) -> None:
        if self.child is not None:
            self.child.request_shutdown(reason)


def check_saved_children(fsm: FSMLoop, state: str, saved: dict[str, Any] | None) -> None:
    """Refuse, as for the run's own state, a saved sub-loop that its file no longer has:
    routing it as the verdict `error` would end the run that could be resumed."""
    while isinstance(saved, dict):
        config = fsm.states.get(state)
        if config is not None and config.loop is not None and is_dynamic(config.loop):
            return  # its child is found again when the state runs: a new name starts afresh
        child, name, at = fsm.children.get(state), saved.get("loop"), saved.get("current_state")
        if child is None or child.name != name:
            raise LoopError(
                f"cannot resume: state '{state}' of loop '{fsm.name}' no longer runs "
                f"loop '{name}' (the loop file changed?)"
            )
        if at not in child.states:
            raise LoopError(
                f"cannot resume: saved state '{at}' is not a state of loop "
                f"'{child.name}' (the loop file changed?)"
            )
        fsm, state, saved = child, str(at), saved.get("child")
