"""The action state kind: an action runs, is judged and routed; a retry runs it again."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from support.engine_parts import Exits, loop, parts

from little_loops.fsm.actions.request import ActionRequest, ActionResult
from little_loops.fsm.actions.spec import ActionKindSpec
from little_loops.fsm.definition.graph.routing import StepOutcome
from little_loops.fsm.definition.model.typed import FSMLoop, RetryConfig, StateConfig
from little_loops.fsm.engine.config import ExecutorConfig
from little_loops.fsm.engine.kinds import action as kind_action
from little_loops.fsm.engine.kinds.action import run_state
from little_loops.fsm.engine.records import ExecutorSnapshot
from little_loops.fsm.facts.outcomes import Outcome

DONE = StateConfig(terminal=True)


def test_an_action_that_exits_0_routes_on_success_and_is_recorded() -> None:
    fsm = loop({"work": StateConfig(action="make", on_success="done", capture="m"), "done": DONE})
    run, emitted = parts(fsm)
    outcome = run_state(run, "work", fsm.states["work"], None)
    assert outcome == StepOutcome("done", "success", "on_success")
    assert emitted.names() == ["action_start", "action_complete", "evaluate"]
    assert run.memory.captured["m"]["output"] == "out of make"
    assert run.memory.prev_result is not None
    assert run.memory.prev_result["verdict"] == "success"


def test_a_retried_failure_runs_again_after_its_wait_until_it_passes() -> None:
    retry = RetryConfig(on=["failure"], max_attempts=3, interval=0)
    work = StateConfig(action="flaky", on_success="done", on_failure="done", retry=retry)
    runner = Exits({"flaky": [1, 1, 0]})
    run, emitted = parts(loop({"work": work, "done": DONE}), runner)
    outcome = run_state(run, "work", work, None)
    assert outcome.target == "done"
    assert outcome.verdict == "success"
    assert runner.calls == ["flaky"] * 3
    assert emitted.names().count("retry_wait") == 2


def test_a_reference_that_cannot_be_filled_in_is_the_verdict_error() -> None:
    work = StateConfig(action="echo ${captured.nope.output}", on_success="done", on_error="done")
    run, emitted = parts(loop({"work": work, "done": DONE}))
    outcome = run_state(run, "work", work, None)
    assert (outcome.target, outcome.verdict) == ("done", "error")
    assert emitted.names() == ["evaluate"]


def test_a_stop_during_the_action_ends_the_run() -> None:
    work = StateConfig(action="make", on_success="done")
    run, _ = parts(loop({"work": work, "done": DONE}))
    run.stopping.request(Outcome.STOPPED)
    assert run_state(run, "work", work, None) == StepOutcome(stop=Outcome.STOPPED)
    assert run.memory.acted is None  # cut short: a resume runs it again


def test_a_verdict_is_recorded_with_its_action_and_replayed_on_resume() -> None:
    """The verdict is kept with the finished action before its `evaluate` event (a judge's
    cost writes that at once); a run resumed after it routes it without judging again."""
    fsm = loop(
        {
            "work": StateConfig(action="make", on_success="done", on_failure="x"),
            "done": DONE,
            "x": DONE,
        }
    )
    run, _ = parts(fsm)
    run_state(run, "work", fsm.states["work"], None)
    assert run.memory.acted is not None
    assert run.memory.acted["verdict"] == {"verdict": "success", "details": {"exit_code": 0}}
    saved = ExecutorSnapshot(
        "work",
        1,
        action_result={**run.memory.acted, "verdict": {"verdict": "failure", "details": {}}},
    )
    again, emitted = parts(fsm)
    again.memory.restore(saved)
    done = again.memory.resumed_action
    outcome = run_state(again, "work", fsm.states["work"], done)
    assert (outcome.target, outcome.verdict) == ("x", "failure")
    assert emitted.names() == []  # not judged again: its `evaluate` is in the log
    again.memory.restore(saved)
    again.memory.left()
    assert again.memory.take_verdict() is None


DECLARED = kind_action.RULES


def _recording(seen: list[tuple[str, str]]) -> tuple[kind_action.ActionRule, ...]:
    """The action kind's rules, each hook noting (rule, point) before it acts."""

    def noted(rule: str, point: str, hook: kind_action.Hook) -> kind_action.Hook:
        def hooked(at: kind_action.Attempt) -> StepOutcome | None:
            seen.append((rule, point))
            return hook(at)

        return hooked

    return tuple(
        kind_action.ActionRule(r.name, {p: noted(r.name, p, h) for p, h in r.hooks.items()})
        for r in DECLARED
    )


def test_the_rules_act_at_each_point_in_their_one_declared_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The kind runs the declared list (RULES), not rules it names one by one: each point
    of an attempt runs the rules with a hook there, in the list's order."""
    seen: list[tuple[str, str]] = []
    monkeypatch.setattr(kind_action, "RULES", _recording(seen))
    retry = RetryConfig(on=["failure"], max_attempts=2, interval=0)
    work = StateConfig(action="make", on_success="done", on_failure="done", retry=retry)
    run, _ = parts(loop({"work": work, "done": DONE}))
    assert run_state(run, "work", work, None) == StepOutcome("done", "success", "on_success")
    assert seen == [
        ("agent_fallback", "before"),
        ("retry", "before"),
        ("guards", "before"),
        ("stop", "after"),
        ("agent_fallback", "after"),
        ("rate_limit", "after"),
        ("budget", "after"),
        ("handoff", "after"),
        ("guards", "after"),
        ("commit", "after"),
        ("rate_limit", "judged"),
        ("stall", "verdict"),
        ("abstention", "verdict"),
        ("retry", "routed"),
    ]
    # The order is the list's: reversed, the rules act in reverse at each point.
    seen.clear()
    monkeypatch.setattr(kind_action, "RULES", tuple(reversed(_recording(seen))))
    run, _ = parts(loop({"work": work, "done": DONE}))
    run_state(run, "work", work, None)
    by_point = [p for _, p in seen]
    assert [r for r, p in seen if p == "after"] == [
        "commit",
        "guards",
        "handoff",
        "budget",
        "rate_limit",
        "agent_fallback",
        "stop",
    ]
    assert by_point.index("before") < by_point.index("after") < by_point.index("routed")


def _worktree(tmp_path: Path) -> Path:
    """A linked worktree of a new repository with one test file committed."""
    main = tmp_path / "main"
    main.mkdir(parents=True)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q", "-b", "main"], cwd=main, check=True)
    (main / "tests").mkdir()
    (main / "tests" / "test_a.py").write_text("def test_a():\n    assert True\n")
    subprocess.run([*git, "add", "-A"], cwd=main, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "start"], cwd=main, check=True)
    tree = tmp_path / "tree"
    subprocess.run([*git, "worktree", "add", "-q", "-b", "run", str(tree)], cwd=main, check=True)
    return tree


class _Edits:
    """A runner whose action rewrites a test file of *tree* (the action a guard watches)."""

    def __init__(self, tree: Path) -> None:
        self.tree = tree

    def run(self, request: ActionRequest) -> ActionResult:
        (self.tree / "tests" / "test_a.py").write_text("def test_a():\n    pass\n")
        return ActionResult("edited", "", 0, 1)


def _guarded_run(tmp_path: Path) -> list[str]:
    """The events of one attempt of a state with a retry policy, the tamper guard and a
    commit after its action, in a worktree run."""
    tree = _worktree(tmp_path)
    retry = RetryConfig(on=["failure"], max_attempts=2, interval=0)
    work = StateConfig(
        action="edit", on_success="done", retry=retry, tamper_guard="allow", commit=True
    )
    config = ExecutorConfig(sleep=lambda _s: None, cwd=tree, worktree=tree)
    run, emitted = parts(loop({"work": work, "done": DONE}), _Edits(tree), config)
    assert run_state(run, "work", work, None).target == "done"
    return emitted.names()


def test_a_state_with_several_rules_emits_their_events_in_the_declared_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Retry (before the action), the guards, then the commit (after it), then the
    verdict: as RULES orders them; the same rules listed in reverse give the reverse."""
    assert _guarded_run(tmp_path / "a") == [
        "attempt",
        "action_start",
        "action_complete",
        "guards",
        "checkpoint",
        "evaluate",
    ]
    monkeypatch.setattr(kind_action, "RULES", tuple(reversed(DECLARED)))
    names = _guarded_run(tmp_path / "b")
    assert names.index("checkpoint") < names.index("guards")


@pytest.mark.parametrize(
    "work",
    [
        StateConfig(action="make", on_success="work", on_failure="work"),
        StateConfig(
            action="fix it",
            action_type="prompt",
            agent="${context.who}",
            on_success="work",
            on_failure="work",
        ),
    ],
    ids=["shell", "prompt-on-a-context-agent"],
)
def test_a_step_works_out_its_state_s_agents_once(
    work: StateConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agents of a state (its `agent:` filled in from the context) are worked out once
    per attempt, for its kind, the fallback rule, the run of its action and the judge
    alike: not again by each of them at every step."""
    calls: list[StateConfig] = []
    real = FSMLoop.agents_for

    def counted(self: FSMLoop, state: StateConfig) -> list[ActionKindSpec]:
        calls.append(state)
        return real(self, state)

    monkeypatch.setattr(FSMLoop, "agents_for", counted)
    fsm = loop({"work": work, "done": DONE}, context={"who": "claude"})
    run, emitted = parts(fsm)
    for _ in range(3):
        assert run_state(run, "work", work, None).target == "work"
    assert emitted.names().count("action_complete") == 3
    assert len(calls) == 3
