"""The sub-loop state kind: the child's end is the verdict; a stop ends the whole tree."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from support.engine_parts import loop, parts
from support.gitrepo import git, make_repo
from support.llproc import ll_loop

from little_loops.fsm.definition.model.typed import FSMLoop, StateConfig
from little_loops.fsm.engine.kinds.subloop import attach, detach, run_state
from little_loops.fsm.engine.records import ExecutionResult, ExecutorSnapshot
from little_loops.fsm.facts.errors import LoopRuntimeError
from little_loops.fsm.facts.outcomes import Outcome
from little_loops.fsm.facts.spend import Spend

CHILD = loop({"fin": StateConfig(terminal=True)}, initial="fin")
CALL = StateConfig(loop="child", on_success="done", on_failure="done", on_error="done")


@dataclass
class FakeChild:
    """A child that ends as told, at its terminal state `fin`."""

    fsm: FSMLoop
    ends: Outcome
    stopped: list[str] = field(default_factory=list)
    shared: list[Spend] = field(default_factory=list)

    def run(self) -> ExecutionResult:
        return ExecutionResult("fin", 1, self.ends, 1, {})

    def request_shutdown(self, reason: str = "interrupted") -> None:
        self.stopped.append(reason)

    def snapshot(self) -> ExecutorSnapshot:
        return ExecutorSnapshot(current_state="fin", iteration=1)

    def restore(self, snap: ExecutorSnapshot) -> None:
        raise AssertionError("nothing saved to restore")

    def share(self, spend: Spend, parent_remaining_s: float | None) -> None:
        self.shared.append(spend)


def _parent(ends: Outcome) -> tuple[FSMLoop, list[FakeChild], Callable[[FSMLoop], FakeChild]]:
    fsm = loop({"call": CALL, "done": StateConfig(terminal=True)}, initial="call")
    fsm.children["call"] = CHILD
    made: list[FakeChild] = []

    def new_child(child_fsm: FSMLoop) -> FakeChild:
        made.append(FakeChild(child_fsm, ends))
        return made[-1]

    return fsm, made, new_child


def test_a_child_ending_at_its_terminal_state_is_the_verdict_success() -> None:
    fsm, made, new_child = _parent(Outcome.TERMINAL)
    run, emitted = parts(fsm, new_child=new_child)
    outcome = run_state(run, "call", CALL, None)
    assert (outcome.target, outcome.verdict) == ("done", "success")
    assert made[0].shared == [run.budget.spend]  # one budget for the tree
    assert emitted.seen[-1][1]["final_state"] == "fin"
    assert run.children.child is None


def test_a_child_stopped_stops_the_tree_and_stays_saved_for_a_resume() -> None:
    fsm, _, new_child = _parent(Outcome.STOPPED)
    run, _ = parts(fsm, new_child=new_child)
    outcome = run_state(run, "call", CALL, None)
    assert outcome.stop == Outcome.STOPPED
    assert run.children.dump()["child"]["loop"] == "t"


SELF_CALLING = """\
name: again
initial: call
context:
  child: again
states:
  call:
    loop: "${context.child}"
    on_success: done
    on_failure: done
  done:
    terminal: true
"""


def test_a_dynamic_sub_loop_that_runs_itself_stops_at_the_depth_limit(tmp_path: Path) -> None:
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "again.yaml").write_text(SELF_CALLING)
    result = ll_loop(tmp_path, "run", "again", timeout=120)
    out = result.stdout + result.stderr
    assert result.returncode == 1, out[-2000:]
    assert "RecursionError" not in out
    assert "internal error" not in out
    assert "sub-loops nested more than 32 deep (does a loop run itself?)" in out
    assert out.count("↳ loop again\n") <= 32


NO_ROUTE = "no valid transition from '{}' for verdict 'error': "
DEPTH_ERROR = (
    "sub-loop '${context.child}' of state 'call': sub-loops nested more than 32 deep "
    "(does a loop run itself?)"
)
HOPPING = SELF_CALLING.replace("name: again", "name: other").replace("call", "hop")


@pytest.mark.parametrize(
    ("files", "error"),
    [
        # directly: each of the 32 levels wrapped its child's message in its own "no valid
        # transition from 'call' ...", 16 times over on the last line
        ({"again": SELF_CALLING}, NO_ROUTE.format("call") + DEPTH_ERROR),
        # through another loop (the 32nd level is again's): each state's words once
        (
            {"again": SELF_CALLING.replace("child: again", "child: other"), "other": HOPPING},
            NO_ROUTE.format("hop") + NO_ROUTE.format("call") + DEPTH_ERROR,
        ),
    ],
    ids=["directly", "through-another"],
)
def test_a_loop_that_runs_itself_says_why_it_failed_once(
    tmp_path: Path, files: dict[str, str], error: str
) -> None:
    (tmp_path / ".loops").mkdir()
    for name, text in files.items():
        (tmp_path / ".loops" / f"{name}.yaml").write_text(text)
    result = ll_loop(tmp_path, "run", "again", "--json", timeout=120)
    assert result.returncode == 1, result.stderr[-2000:]
    assert json.loads(result.stdout)["error"] == error
    last = result.stderr.splitlines()[-1]
    assert last.startswith(f"Loop failed in call: {error} (1 iteration, "), last
    for line in result.stderr.splitlines():  # no level's line says a word of it twice
        assert line.count(NO_ROUTE.format("call")) <= 1, line
        assert line.count("nested more than") <= 1, line


def test_attach_and_detach(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_repo(root, {"a.txt": "a\n"})
    git(root, "branch", "topic/x")
    tree = attach(root, "topic/x")
    assert git(tree, "rev-parse", "--abbrev-ref", "HEAD").strip() == "topic/x"
    assert "topic-x" in tree.name
    (tree / "scratch.txt").write_text("left behind\n")
    detach(root, tree)
    assert not tree.exists()
    assert git(root, "branch", "--list", "topic/x").strip() == "topic/x"


def test_a_missing_branch_is_one_line(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_repo(root, {"a.txt": "a\n"})
    with pytest.raises(LoopRuntimeError, match="worktree: no branch 'gone'"):
        attach(root, "gone")
