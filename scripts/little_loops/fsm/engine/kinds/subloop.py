"""The sub-loop state kind (`loop:`): run the child loop in-process, within the parent's limits."""

from __future__ import annotations

import dataclasses
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.definition.checks.subloop_checks import MAX_DEPTH, is_dynamic
from little_loops.fsm.definition.graph.routing import StepOutcome, follow_route
from little_loops.fsm.definition.model.typed import (
    CURRENT_STATE_TOKEN,
    OUTCOME_FAILURE,
    FSMLoop,
    StateConfig,
)
from little_loops.fsm.engine import events
from little_loops.fsm.engine.kinds.action import error_outcome
from little_loops.fsm.engine.records import ExecutionResult
from little_loops.fsm.engine.run import Run
from little_loops.fsm.engine.subloop import (
    CUT_OFF,
    SUBLOOP_EVALUATOR,
    TREE_STOPS,
    child_context,
    end_verdict,
    find_child,
    shared_context,
)
from little_loops.fsm.evaluators.spec import ERROR_VERDICT
from little_loops.fsm.facts.errors import InterpolationError, LoopError, LoopRuntimeError
from little_loops.fsm.facts.events import Event
from little_loops.fsm.facts.outcomes import Outcome
from little_loops.fsm.facts.spend import is_unkept
from little_loops.fsm.processes.gitcmd import git
from little_loops.fsm.values.interpolation import interpolate


def run_state(run: Run, name: str, state: StateConfig, done: ActionResult | None) -> StepOutcome:
    """Run the child loop of sub-loop state *name*; its end is the verdict."""
    assert state.loop is not None
    if run.config.depth >= MAX_DEPTH:  # checked at run time too: a `loop: ${...}` may
        msg = (  # name its own loop, or an ancestor, and nest until Python's stack ran out
            f"sub-loop '{state.loop}' of state '{name}': sub-loops nested more than"
            f" {MAX_DEPTH} deep (does a loop run itself?)"
        )
        return error_outcome(run, name, state, msg)
    try:
        base = run.fsm.children.get(name)
        if base is None and is_dynamic(state.loop):
            base = find_child(state.loop, run.context(), run.fsm)
        if base is None:
            msg = f"sub-loop '{state.loop}' of state '{name}' was not loaded (validate the file)"
            return error_outcome(run, name, state, msg)
        if state.context_passthrough:
            context = shared_context(base, run.fsm.context, run.memory.captured)
        else:
            context = child_context(base, name, state.with_ or {}, run.context())
    except (InterpolationError, LoopError) as exc:
        return error_outcome(run, name, state, f"state '{name}': {exc}")
    # A child that names no sandbox runs in its parent's: a confined run stays confined.
    sandbox = base.sandbox if base.sandbox is not None else run.fsm.sandbox
    child_fsm = dataclasses.replace(base, context=context, sandbox=sandbox)
    limits = [x for x in (base.max_cost_usd, run.fsm.max_cost_usd) if x is not None]
    child_fsm.max_cost_usd = min(limits) if limits else None
    here = run.config.cwd or run.config.stall_cwd or Path.cwd()
    try:
        branch = interpolate(state.worktree, run.context()).strip() if state.worktree else ""
        tree = attach(here, branch) if branch else None
    except (InterpolationError, LoopError) as exc:
        return error_outcome(run, name, state, f"state '{name}': {exc}")
    try:
        return _run_child(run, name, state, base, child_fsm, tree)
    finally:
        if tree is not None:
            detach(here, tree)


def _run_child(
    run: Run, name: str, state: StateConfig, base: FSMLoop, child_fsm: FSMLoop, tree: Path | None
) -> StepOutcome:
    """Run the child (in the worktree *tree*, if given) to its end, and route on it."""
    child = run.new_child(child_fsm) if tree is None else run.new_child(child_fsm, tree)
    saved = run.children.take(base.name)
    if saved is not None:
        child.restore(saved)
    times = [x for x in (run.limits.clock.remaining_s(), state.timeout) if x is not None]
    child.share(run.budget.spend, min(times) if times else None)
    run.children.child = child
    spent_before = run.budget.spend.cost_usd
    try:
        result = child.run()
    finally:
        run.children.child = None
    if stops_tree(run, result.terminated_by, result.error):
        # The tree ends here: the run's last snapshot keeps the child where it stopped,
        # so a resume goes on inside it (a finished child's verdict is routed instead).
        run.children.child = child
        return StepOutcome(stop=result.terminated_by, error=result.error)
    ended = {"terminated_by": str(result.terminated_by)}
    shared = state.context_passthrough or state.with_ is not None
    run.memory.captured[name] = {**(result.captured if shared else {}), **ended}
    return _verdict(run, name, state, child_fsm, result, spent_before)


def stops_tree(run: Run, how: Outcome, error: str | None = None) -> bool:
    """True when the child's end *how* (with *error*) ends this run too: a stop, or a limit
    of this run (its budget used up or, a child's step not counted, not kept; its
    deadline); the child's own limits are its verdict `error`."""
    if how == Outcome.BUDGET:
        limit = run.fsm.max_cost_usd
        return limit is not None and (run.budget.spend.reached(limit) or is_unkept(error))
    if how == Outcome.TIMEOUT:
        return run.limits.clock.deadline_passed()
    return how in TREE_STOPS


def _verdict(
    run: Run,
    name: str,
    state: StateConfig,
    child_fsm: FSMLoop,
    result: ExecutionResult,
    spent_before: float,
) -> StepOutcome:
    """The child's end as this state's verdict (success, failure or error), and its route."""
    how = result.terminated_by
    verdict = end_verdict(child_fsm, how, result.final_state)
    cut_off = how in CUT_OFF
    if cut_off and how == Outcome.TIMEOUT and state.timeout is not None:
        verdict = OUTCOME_FAILURE  # the state's own time is up: a failure, as upstream routes it
    details: dict[str, Any] = {
        "loop": child_fsm.name,
        "final_state": result.final_state,
        "terminated_by": how,
        "captured": dict(result.captured),
    }
    if result.error or verdict == ERROR_VERDICT:  # a limit has no error of its own
        details["error"] = result.error or f"loop '{child_fsm.name}' ended by {how}"
    memory = run.memory
    memory.last_result = {"verdict": verdict, "details": details}
    memory.prev_result = {"state": name, "output": result.final_state, "verdict": verdict}
    if state.capture:
        memory.captured[state.capture] = {"output": result.final_state, **details}
    judged = events.Evaluation(state=name, type=SUBLOOP_EVALUATOR, verdict=verdict)
    judged["final_state"] = result.final_state
    if result.error:
        judged["error"] = result.error
    spend = run.budget.spend
    if spend.cost_usd > spent_before:  # the child's spend, on this state
        judged["cost_usd"] = round(spend.cost_usd - spent_before, 6)
    run.emit(Event.EVALUATE, judged)
    if cut_off and state.on_timeout is not None:  # the child was cut off by a limit
        target = name if state.on_timeout == CURRENT_STATE_TOKEN else state.on_timeout
        return StepOutcome(target, verdict, "on_timeout")
    outcome = follow_route(state, verdict, run.context(), name)
    if outcome.target is None and verdict == ERROR_VERDICT:
        outcome.error = details["error"]
    return outcome


# A sub-loop state's `worktree:`: its child runs in a scratch git worktree of that branch.
_UNSAFE = re.compile(r"[^A-Za-z0-9-]")  # what a branch name gives the scratch folder's name


def attach(where: Path, branch: str) -> Path:
    """A new worktree of the existing *branch* of the repository at *where* (checked out
    there, as little-loops does), in a scratch folder; LoopRuntimeError in one line when git
    refuses (no such branch, checked out elsewhere, not a repository)."""
    top = git(where, "rev-parse", "--show-toplevel").out.strip()
    if not git(where, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}", check=False).ok:
        raise LoopRuntimeError(f"worktree: no branch '{branch}' in {top}")
    folder = Path(tempfile.mkdtemp(prefix=f"ll-subloop-{_UNSAFE.sub('-', branch)}-"))
    os.rmdir(folder)  # git makes it
    git(Path(top), "worktree", "add", str(folder), branch)
    return folder


def detach(where: Path, tree: Path) -> None:
    """Remove the worktree *tree* (its uncommitted changes with it); its branch stays."""
    git(where, "worktree", "remove", "--force", str(tree), check=False)
    git(where, "worktree", "prune", check=False)
