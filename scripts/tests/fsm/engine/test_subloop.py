"""A sub-loop state's child: its context, its verdict when it ends, its saved snapshot."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import pytest

from little_loops.fsm.definition.model.parameters import ParameterSpec
from little_loops.fsm.definition.model.typed import (
    OUTCOME_FAILURE,
    OUTCOME_SUCCESS,
    FSMLoop,
    StateConfig,
)
from little_loops.fsm.engine.records import ExecutionResult, ExecutorSnapshot
from little_loops.fsm.engine.subloop import (
    TREE_STOPS,
    Children,
    check_saved_children,
    child_context,
    end_verdict,
)
from little_loops.fsm.evaluators.spec import ERROR_VERDICT
from little_loops.fsm.facts.errors import LoopDefinitionError, LoopError
from little_loops.fsm.facts.outcomes import Outcome
from little_loops.fsm.facts.spend import Spend
from little_loops.fsm.values.interpolation import InterpolationContext, interpolate


def child_loop(**parameters: ParameterSpec) -> FSMLoop:
    return FSMLoop(
        name="child",
        initial="check",
        states={
            "check": StateConfig(action="true", on_success="done", on_failure="broke"),
            "done": StateConfig(terminal=True),
            "broke": StateConfig(terminal=True, outcome=OUTCOME_FAILURE),
        },
        context={"own": "kept"},
        parameters=dict(parameters),
    )


def parent_loop(child: FSMLoop) -> FSMLoop:
    parent = FSMLoop(
        name="parent",
        initial="build",
        states={
            "build": StateConfig(loop="child", on_success="end", on_failure="end"),
            "end": StateConfig(terminal=True),
        },
    )
    parent.children["build"] = child
    return parent


@dataclass
class FakeChild:
    """A ChildRun that hands out a fixed snapshot and records shutdown requests."""

    fsm: FSMLoop
    snap: ExecutorSnapshot
    shutdowns: list[str] = field(default_factory=list)

    def run(self) -> ExecutionResult:
        raise AssertionError("not run here")

    def request_shutdown(self, reason: str = "stopped") -> None:
        self.shutdowns.append(reason)

    def snapshot(self) -> ExecutorSnapshot:
        return self.snap

    def restore(self, snap: ExecutorSnapshot) -> None:
        self.snap = snap

    def share(self, spend: Spend, parent_remaining_s: float | None) -> None:
        pass


@pytest.mark.parametrize(
    ("terminated_by", "final", "verdict"),
    [
        (Outcome.TERMINAL, "done", OUTCOME_SUCCESS),
        (Outcome.TERMINAL, "broke", OUTCOME_FAILURE),  # `outcome: failure`
        (Outcome.TERMINAL_FAILURE, "done", OUTCOME_FAILURE),  # reached on the verdict error
        (Outcome.MAX_ITERATIONS, "check", ERROR_VERDICT),
        (Outcome.ERROR, "check", ERROR_VERDICT),
        (Outcome.TIMEOUT, "done", ERROR_VERDICT),
    ],
)
def test_the_verdict_of_a_child_that_ended(terminated_by: str, final: str, verdict: str) -> None:
    assert end_verdict(child_loop(), terminated_by, final) == verdict


def test_the_tree_stops_are_ends_that_are_no_verdict() -> None:
    assert {Outcome.STOPPED, Outcome.BUDGET, Outcome.INTERRUPTED} <= set(TREE_STOPS)
    assert not {Outcome.TERMINAL, Outcome.ERROR} & set(TREE_STOPS)


def test_the_child_context_fills_in_with_and_types_it() -> None:
    child = child_loop(
        n=ParameterSpec(type="integer"),
        items=ParameterSpec(type="list", default=["a"]),
        mode=ParameterSpec(default="fast", choices=("fast", "slow")),
    )
    ctx = InterpolationContext(context={"count": 3}, env={})
    out = child_context(child, "build", {"n": "${context.count}"}, ctx)
    assert out == {"own": "kept", "n": 3, "items": ["a"], "mode": "fast"}
    assert out["items"] is not child.parameters["items"].default  # a copy: the loop's unchanged


def test_filled_in_values_are_data_to_the_child() -> None:
    # A command's output may hold `${env.TOKEN}`: the child must not fill that in.
    ctx = InterpolationContext(captured={"x": {"output": "${env.TOKEN}"}}, env={"TOKEN": "s"})
    given = {"note": "${captured.x.output}", "many": ["${captured.x.output}"], "plain": 7}
    out = child_context(child_loop(), "build", given, ctx)
    assert out["plain"] == 7
    assert (out["note"], out["many"]) == ("$${env.TOKEN}", ["$${env.TOKEN}"])
    # Where the child fills the value in, the `${` stays text.
    child_ctx = InterpolationContext(context=out, env={"TOKEN": "secret"})
    assert interpolate(out["note"], child_ctx) == "${env.TOKEN}"


def test_a_wrong_or_missing_parameter_names_the_state_and_key() -> None:
    child = child_loop(n=ParameterSpec(type="integer"))
    ctx = InterpolationContext(env={})
    with pytest.raises(LoopDefinitionError, match=r"^state 'build' > with > n: parameter of loop"):
        child_context(child, "build", {"n": "many"}, ctx)
    with pytest.raises(LoopDefinitionError) as raised:
        child_context(child, "build", {}, ctx)
    assert str(raised.value) == "state 'build': missing parameter 'n' of loop 'child'"
    picky = child_loop(mode=ParameterSpec(default="fast", choices=("fast", "slow")))
    with pytest.raises(LoopDefinitionError, match="expected one of"):
        child_context(picky, "build", {"mode": "medium"}, ctx)


def test_children_dump_the_running_child_with_its_name() -> None:
    parent = parent_loop(child_loop())
    children = Children(parent)
    assert children.dump() == {"child": None}
    snap = ExecutorSnapshot(current_state="check", iteration=2)
    child = FakeChild(parent.children["build"], snap)
    children.child = child
    dumped = children.dump()
    assert dumped == {"child": {"loop": "child", **dataclasses.asdict(snap)}}
    children.stop("interrupted")
    assert child.shutdowns == ["interrupted"]


def test_a_saved_child_is_taken_once_and_only_by_its_loop() -> None:
    parent = parent_loop(child_loop())
    saved = {"loop": "child", **dataclasses.asdict(ExecutorSnapshot("check", 4)), "extra": 1}
    children = Children(parent)
    children.restore(ExecutorSnapshot("build", 1, child=saved))
    taken = children.take("child")
    assert taken == ExecutorSnapshot("check", 4)  # keys it does not know are dropped
    assert children.take("child") is None
    children.restore(ExecutorSnapshot("build", 1, child=saved))
    assert children.take("other") is None
    assert children.pending is None


def test_a_saved_child_is_kept_until_it_goes_on_even_when_its_state_is_entered_again() -> None:
    """A resume's own start saves the run as only arrived at the sub-loop state (it enters it
    again): the child saved before must be in that save too, and be gone on in after it."""
    parent = parent_loop(child_loop())
    saved: dict[str, Any] = {"loop": "child", "current_state": "check", "iteration": 1}
    children = Children(parent)
    children.restore(ExecutorSnapshot("build", 1, entered=False, child=saved))
    assert children.dump() == {"child": saved}
    assert children.take("child") == ExecutorSnapshot("check", 1)
    assert children.dump() == {"child": None}


def test_a_saved_child_the_file_no_longer_has_is_refused() -> None:
    parent = parent_loop(child_loop())
    check_saved_children(parent, "build", {"loop": "child", "current_state": "check"})
    check_saved_children(parent, "end", None)
    with pytest.raises(LoopError, match=r"state 'build' of loop 'parent' no longer runs loop 'x'"):
        check_saved_children(parent, "build", {"loop": "x", "current_state": "check"})
    with pytest.raises(LoopError, match=r"saved state 'gone' is not a state of loop 'child'"):
        check_saved_children(parent, "build", {"loop": "child", "current_state": "gone"})
    with pytest.raises(LoopError, match="no longer runs"):
        Children(parent).restore(
            ExecutorSnapshot("end", 1, child={"loop": "child", "current_state": "check"})
        )


def test_a_saved_grandchild_is_checked_too() -> None:
    grandchild = child_loop()
    middle = parent_loop(grandchild)
    middle.name = "middle"
    top = FSMLoop(
        name="top",
        initial="run",
        states={"run": StateConfig(loop="middle", on_success="x"), "x": StateConfig(terminal=True)},
    )
    top.children["run"] = middle
    good = {"loop": "middle", "current_state": "build", "child": {"loop": "child"}}
    good["child"]["current_state"] = "done"
    check_saved_children(top, "run", good)
    bad = {"loop": "middle", "current_state": "build", "child": {"loop": "child"}}
    bad["child"]["current_state"] = "missing"
    with pytest.raises(LoopError, match="saved state 'missing'"):
        check_saved_children(top, "run", bad)
