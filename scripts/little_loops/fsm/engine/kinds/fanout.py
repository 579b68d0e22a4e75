"""The fan-out state kind (`parallel:`, `map:`): branches run at once (fsm/fanout), routed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.definition.graph.routing import StepOutcome, follow_route
from little_loops.fsm.definition.model.fanout import (
    CHILD_LOOP_PATTERN,
    DEFAULT_MAX_CONCURRENCY,
    JOIN_ANY,
    FanOutConfig,
    MapConfig,
    child_loop_problem,
    fan_out_of,
)
from little_loops.fsm.definition.model.typed import StateConfig
from little_loops.fsm.engine import events
from little_loops.fsm.engine.kinds.action import error_outcome
from little_loops.fsm.engine.run import Run
from little_loops.fsm.facts.errors import InterpolationError, LoopError
from little_loops.fsm.facts.events import Event
from little_loops.fsm.facts.outcomes import Outcome
from little_loops.fsm.fanout.branches import Branch, prompt_branch
from little_loops.fsm.fanout.drive import Ending, Plan, fan_out
from little_loops.fsm.fanout.join import Judge
from little_loops.fsm.fanout.judge import judge_best
from little_loops.fsm.fanout.pool import STOP_BUDGET, Emit, FanOutSpec
from little_loops.fsm.values.interpolation import InterpolationContext, interpolate
from little_loops.fsm.values.shellquote import render
from little_loops.loops import LIBRARY_PREFIX

FANOUT_EVALUATOR = "fanout"  # the `type` of the evaluate event of a fan-out state
# `${captured.STATE}` while the fan-out runs: `[{PROGRESS_KEY: visit}, events so far...]`
# (a resume reads them back).
PROGRESS_KEY = "fanout_progress"


def run_state(run: Run, name: str, state: StateConfig, done: ActionResult | None) -> StepOutcome:
    """Run fan-out state *name*'s branches, join them into its verdict, merge, and route."""
    config = fan_out_of(state)
    assert config is not None
    if run.config.worktree is not None:  # its branches would start from, and merge into,
        msg = (  # the project's checkout, not this run's worktree
            f"state '{name}': a fan-out state does not run in a --worktree run yet (its"
            " branches would start from and merge into your checkout); run it without"
            " --worktree: each branch gets a worktree of its own"
        )
        return error_outcome(run, name, state, msg)
    try:
        branches = branches_of(config, run.context(), _static_budget(run, config))
    except (InterpolationError, LoopError, ValueError) as exc:
        return error_outcome(run, name, state, f"state '{name}': {exc}")
    try:
        judge = _judge(run, config, loops_dir_of(run))
        score = None if config.score is None else render(config.score, run.context())
    except InterpolationError as exc:
        return error_outcome(run, name, state, f"state '{name}': {exc}")
    visit = run.position.iteration
    before = _progress(run, name, visit)
    emit = _recorder(run, name, visit, before)

    loops_dir = loops_dir_of(run)
    plan = Plan(
        FanOutSpec(
            branches,
            loops_dir,
            max_concurrency=config.max_concurrency or DEFAULT_MAX_CONCURRENCY,
            stop_on_success=config.join == JOIN_ANY,
            max_cost_usd=_budget(run, config),
            timeout_s=_time_left(run, state),
        ),
        config.join,
        config.merge,
        None if score is None else score.script,
        judge,
        None if score is None else score.env,
    )
    ending = fan_out(plan, emit, run.stopping.flag.is_set, before)
    run.budget.spend.add(ending.cost_usd, None, "")
    judged = _judge_spend(run, ending)
    if ending.verdict is None:  # stopped: a resume goes on with the branches
        return StepOutcome(stop=run.stopping.asked() or Outcome.INTERRUPTED)
    if ending.stopped_by == STOP_BUDGET and run.budget.spend.reached(run.fsm.max_cost_usd):
        return StepOutcome(stop=Outcome.BUDGET)  # the loop's budget, not the state's own
    figures = ending.figures()
    run.memory.captured[name] = {"output": ending.verdict, **figures}
    memory = run.memory
    memory.last_result = {"verdict": ending.verdict, "details": figures}
    memory.prev_result = {"state": name, "output": ending.verdict, "verdict": ending.verdict}
    evaluation = events.Evaluation(state=name, type=FANOUT_EVALUATOR, verdict=ending.verdict)
    if ending.cost_usd or judged:
        evaluation["cost_usd"] = round(ending.cost_usd + (judged or 0.0), 6)
    run.emit(Event.EVALUATE, evaluation)
    return follow_route(state, ending.verdict, run.context(), name)


def loops_dir_of(run: Run) -> Path:
    """The project's `.loops/` folder, where the branches' runs keep their files."""
    return run.config.loops_dir or (run.config.cwd or Path.cwd()) / ".loops"


def _judge(run: Run, config: FanOutConfig, loops_dir: Path) -> Judge | None:
    """`join: best`'s LLM judge, asked the state's question (filled in now), or None."""
    question = config.judge_question
    if question is None:
        return None
    asked = interpolate(question, run.context())
    llm = run.fsm.llm
    return lambda green, base: judge_best(green, base, loops_dir, asked, llm)


def _judge_spend(run: Run, ending: Ending) -> float | None:
    """What the judge's call cost, added to the run's spend (None: no call was made)."""
    details = ending.joined.details if ending.joined is not None else {}
    usage = details.get("usage")
    reported = details.get("cost_usd")  # the judge via Claude Code reports its cost
    if isinstance(reported, float):
        return run.budget.spend.add_judge_cost(reported, usage)
    if isinstance(usage, dict) and usage:
        return run.budget.spend.add_judge(str(details.get("model") or run.fsm.llm.model), usage)
    return None


def branches_of(
    config: FanOutConfig, ctx: InterpolationContext, max_cost_usd: float | None = None
) -> list[Branch]:
    """The branches of *config*, their `with:` values and map items filled in from *ctx*; a
    prompt branch runs with *max_cost_usd* as its own budget."""
    if isinstance(config, MapConfig):
        items = items_of(config.items, ctx)
        if config.prompt is not None:  # each item an agent, given the one prompt
            prompt = interpolate(config.prompt, ctx)
            return [prompt_branch(i, item, prompt, max_cost_usd) for i, item in enumerate(items)]
        shared = _bindings(config.with_, ctx)
        loop, source = loop_of(config.loop)
        return [
            Branch(i, loop, {**shared, config.as_: item}, item, source)
            for i, item in enumerate(items)
        ]
    out = []
    for i, branch in enumerate(getattr(config, "branches", [])):
        if "loop" not in branch:  # a prompt on a named agent
            agent = branch.get("agent")
            names = agent if isinstance(agent, list) else [agent]
            filled = ",".join(interpolate(str(name), ctx) for name in names)
            prompt = interpolate(str(branch.get("prompt")), ctx)
            out.append(prompt_branch(i, filled, prompt, max_cost_usd))
            continue
        loop, source = loop_of(interpolate(str(branch.get("loop") or ""), ctx))
        out.append(Branch(i, loop, _bindings(branch.get("with") or {}, ctx), loop, source))
    return out


def loop_of(written: str) -> tuple[str, str]:
    """A branch's loop as written: (the name its runs are filed by, what `ll-loop run` is
    given when that is not the name): `library:fix-tests` is run as itself, filed as
    fix-tests."""
    if not re.fullmatch(CHILD_LOOP_PATTERN, written):  # a `${...}` filled in with a path
        raise ValueError(f"loop: {child_loop_problem(written) or 'not a loop name'}")
    if written.startswith(LIBRARY_PREFIX):
        return written[len(LIBRARY_PREFIX) :], written
    return written, ""


def items_of(items: list[Any] | str, ctx: InterpolationContext) -> list[str]:
    """A map's items: the list as written, or its `${...}` text filled in and read as a JSON
    array (plain values) or, failing that, as its non-empty lines."""
    if isinstance(items, list):
        return [_text(item) for item in items]
    text = interpolate(items, ctx).strip()
    if text.startswith("["):
        try:
            found = json.loads(text)
        except ValueError:
            found = None
        if isinstance(found, list):
            return [_text(item) for item in found]
    return [line.strip() for line in text.splitlines() if line.strip()]


def _text(item: Any) -> str:
    return item if isinstance(item, str) else json.dumps(item)


def _bindings(values: dict[str, Any], ctx: InterpolationContext) -> dict[str, str]:
    return {str(k): interpolate(_text(v), ctx) for k, v in values.items()}


def _recorder(run: Run, name: str, visit: int, before: list[dict[str, Any]]) -> Emit:
    """What records each fan-out event: in the log, and in `${captured.STATE}` as a list
    (`{PROGRESS_KEY: visit}`, then the events) that only grows, so each event's recorded
    change is that event alone, not every branch again (the log grew with N squared)."""
    recorded: list[dict[str, Any]] = [{PROGRESS_KEY: visit}, *before]

    def emit(kind: str, payload: dict[str, Any]) -> None:
        event = {"state": name, **payload}
        recorded.append({"event": str(kind), **event})
        run.memory.captured[name] = recorded
        run.emit(Event(kind), event)

    return emit


def progress_of(kept: object) -> tuple[int, list[dict[str, Any]]] | None:
    """A fan-out state's `${captured.STATE}` while it runs (or after a crash): its visit
    and the events recorded so far; None when *kept* is no such progress (its results)."""
    visit: object = None
    found: object = None
    if isinstance(kept, list) and kept and isinstance(kept[0], dict):
        visit, found = kept[0].get(PROGRESS_KEY), kept[1:]
    elif isinstance(kept, dict):  # as a run of an earlier version recorded it
        progress = kept.get(PROGRESS_KEY)
        if isinstance(progress, dict):
            visit, found = progress.get("visit"), progress.get("events")
    if not isinstance(visit, int) or not isinstance(found, list):
        return None
    return visit, [e for e in found if isinstance(e, dict)]


def _progress(run: Run, name: str, visit: int) -> list[dict[str, Any]]:
    """The events this visit of the state wrote before a crash or a stop (a resume)."""
    found = progress_of(run.memory.captured.get(name))
    return found[1] if found is not None and found[0] == visit else []


def _budget(run: Run, config: FanOutConfig) -> float | None:
    """What the branches may spend together: the state's max_cost_usd and what is left of
    the loop's, whichever is less."""
    limits = [x for x in (config.max_cost_usd,) if x is not None]
    if run.fsm.max_cost_usd is not None:
        limits.append(max(0.0, run.fsm.max_cost_usd - run.budget.spend.cost_usd))
    return min(limits) if limits else None


def _static_budget(run: Run, config: FanOutConfig) -> float | None:
    """A prompt branch's own budget: the state's max_cost_usd or the loop's, the lesser (the
    same on a resume, so the child's command line is found again; the branches' spend
    together is held to what is left by the fan-out itself)."""
    limits = [x for x in (config.max_cost_usd, run.fsm.max_cost_usd) if x is not None]
    return min(limits) if limits else None


def _time_left(run: Run, state: StateConfig) -> float | None:
    times = [x for x in (run.limits.clock.remaining_s(), state.timeout) if x is not None]
    return min(times) if times else None
