"""A fan-out state's keys (definition/model/fanout.py): checked, read into the model, written back,
and what `ll-loop validate` says of a bad one (one line naming the key, exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.llproc import ll_loop

from little_loops.fsm.definition.graph.verdicts import state_verdicts
from little_loops.fsm.definition.model.fanout import (
    FANOUT_STATE_KEYS,
    MapConfig,
    ParallelConfig,
    fan_out_of,
)
from little_loops.fsm.definition.model.typed import StateConfig
from little_loops.fsm.engine.kinds.names import FANOUT_KIND, kind_of


@pytest.mark.parametrize(
    ("key", "value", "problem"),
    [
        ("map", {"items": ["a", 1], "loop": "fix"}, None),
        ("map", {"items": "${captured.x.output}", "loop": "fix", "as": "test"}, None),
        ("map", {"loop": "fix"}, "needs items"),
        ("map", {"items": ["a"], "loop": "fix", "as": "a=b"}, "as: expected a context key"),
        ("map", {"items": ["a"], "loop": "fix", "with": {"item": "x"}}, "with: item is the key"),
        ("map", {"items": ["a"], "loop": "fix", "as": "t", "with": {"t": 1}}, "with: t is the key"),
        ("map", {"items": ["a"], "loop": "fix", "as": "t", "with": {"item": "x"}}, None),
        ("map", {"items": ["a"]}, "needs loop"),
        ("map", {"items": [{"a": 1}], "loop": "fix"}, "expected plain values in the list"),
        ("map", {"items": 3, "loop": "fix"}, "expected a list or ${...} text"),
        ("map", {"items": [], "loop": "fix", "join": "most"}, "join: expected one of"),
        ("map", {"items": [], "loop": "fix", "merge": "all"}, "merge: expected one of"),
        ("map", {"items": [], "loop": "fix", "max_concurrency": 0}, "max_concurrency"),
        ("map", {"items": [], "loop": "fix", "join": "best"}, "join: best needs score:"),
        ("map", {"items": [], "loop": "fix", "merge": "best"}, "merge: best needs join: best"),
        ("map", {"items": [], "loop": "fix", "itemz": []}, "unknown key itemz (did you mean items"),
        ("parallel", {"branches": [{"loop": "a", "with": {"x": 1}}]}, None),
        ("parallel", {"branches": []}, "expected a non-empty list of branches"),
        ("parallel", {"branches": [{"with": {}}]}, "branch 1 needs loop:"),
        ("parallel", {"branches": [{"loop": "a", "wth": {}}]}, "unknown key branch 1 > wth"),
        ("parallel", "fix", "expected a mapping"),
        # Prompt branches, and a map of agents given one prompt.
        # A child loop's name names its runs' files, worktree and branch: no path.
        ("map", {"items": ["a"], "loop": "../../etc/x"}, "expected a loop's name"),
        ("map", {"items": ["a"], "loop": "sub/x"}, "expected a loop's name"),
        ("parallel", {"branches": [{"loop": "--help"}]}, "expected a loop's name"),
        ("parallel", {"branches": [{"loop": "${context.which}"}]}, None),
        ("map", {"items": ["a"], "loop": "${context.which}"}, "expected a loop's name"),
        ("map", {"items": ["a"], "loop": "library:fix-tests"}, None),
        ("parallel", {"branches": [{"agent": "codex", "prompt": "p"}]}, None),
        ("parallel", {"branches": [{"agent": ["claude", "codex"], "prompt": "p"}]}, None),
        ("parallel", {"branches": [{"agent": "codex"}]}, "branch 1 needs prompt: beside agent:"),
        ("parallel", {"branches": [{"prompt": "p"}]}, "branch 1 needs agent: beside prompt:"),
        (
            "parallel",
            {"branches": [{"loop": "a"}, {"loop": "a", "prompt": "p"}]},
            "branch 2 has loop: or agent: and prompt:, not both (prompt:)",
        ),
        (
            "parallel",
            {"branches": [{"agent": "codex", "prompt": "p", "with": {}}]},
            "branch 1: with: goes with loop:, a prompt branch has none",
        ),
        ("parallel", {"branches": [{"agent": [], "prompt": "p"}]}, "at least one agent name"),
        ("map", {"items": ["claude", "codex"], "prompt": "p"}, None),
        ("map", {"items": ["a"], "loop": "fix", "prompt": "p"}, "needs loop: (the child loop)"),
        ("map", {"items": ["a"], "prompt": "p", "as": "x"}, "as: goes with loop:"),
        # join: best by the judge.
        ("map", {"items": [], "loop": "fix", "join": "best", "judge": True}, None),
        ("map", {"items": [], "loop": "fix", "join": "best", "judge": "Which?"}, None),
        ("map", {"items": [], "loop": "fix", "judge": True}, "judge: needs join: best"),
        ("map", {"items": [], "loop": "fix", "join": "best", "judge": False}, "judge: expected"),
        ("map", {"items": [], "loop": "fix", "join": "best", "judge": " "}, "judge: expected"),
        (
            "map",
            {"items": [], "loop": "fix", "join": "best", "judge": True, "score": "x"},
            "join: best takes score: or judge:, not both",
        ),
    ],
)
def test_the_blocks_are_checked(key: str, value: object, problem: str | None) -> None:
    found = FANOUT_STATE_KEYS[key](value)
    assert (found is None) if problem is None else (problem in str(found)), found


def test_read_into_the_model_written_back_and_a_kind_of_its_own() -> None:
    data = {"map": {"items": ["a"], "loop": "fix", "as": "t", "merge": "green"}, "on_yes": "d"}
    state = StateConfig.from_dict(data)
    assert state.map == MapConfig(items=["a"], loop="fix", as_="t", merge="green")
    assert fan_out_of(state) is state.map
    assert kind_of(state) == FANOUT_KIND
    assert state.to_dict()["map"] == {"items": ["a"], "loop": "fix", "as": "t", "merge": "green"}
    both = StateConfig.from_dict({"parallel": {"branches": [{"loop": "a"}], "join": "any"}})
    assert both.parallel == ParallelConfig(branches=[{"loop": "a"}], join="any")
    assert both.to_dict()["parallel"] == {"branches": [{"loop": "a"}], "join": "any"}


def test_its_verdicts_are_success_and_failure() -> None:
    from little_loops.fsm.definition.model.typed import FSMLoop

    state = StateConfig.from_dict({"map": {"items": ["a"], "loop": "fix"}})
    fsm = FSMLoop.from_dict({"name": "x", "initial": "s", "states": {"s": {"terminal": True}}})
    found = state_verdicts(fsm, state)
    assert found is not None
    assert found.verdicts == ("success", "failure")


BAD = """\
name: fan
initial: fan
states:
  fan:
    map:
      items: [a]
      loop: fix
      join: best
    action: echo hi
    on_success: done
  done:
    terminal: true
"""


def test_validate_names_each_problem_in_one_line(tmp_path: Path) -> None:
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "fan.yaml").write_text(BAD)
    done = ll_loop(tmp_path, "validate", "fan")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    said = done.stdout + done.stderr
    assert "fan > map: join: best needs score:" in said
    assert "fan > action: a fan-out state (map:) runs its branches: it cannot have action" in said


def test_validate_names_a_prompt_branch_s_unknown_agent_in_one_line(tmp_path: Path) -> None:
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "fan.yaml").write_text(
        "name: fan\ninitial: fan\nstates:\n  fan:\n    parallel:\n      branches:\n"
        "        - {agent: codex, prompt: a}\n        - {agent: [claude, codx], prompt: b}\n"
        "    on_success: done\n  done:\n    terminal: true\n"
    )
    done = ll_loop(tmp_path, "validate", "fan")
    assert done.returncode == 2
    (line,) = (done.stdout + done.stderr).splitlines()
    assert line.endswith(
        "error: loop 'fan' > states > fan > parallel > branch 2 > agent: unknown agent 'codx'"
        " (did you mean codex?)"
    )


CHILD = "name: fix\ncontext:\n  item: ''\ninitial: done\nstates:\n  done:\n    terminal: true\n"


@pytest.mark.parametrize(
    ("loop", "problem"),
    [
        ("nosuch", "fan > map > loop: no loop named 'nosuch'"),
        ("fan", "fan > map > loop: recursion: fan.yaml fans out to itself (state fan)"),
    ],
)
def test_validate_refuses_a_child_loop_that_is_missing_or_the_loop_itself(
    tmp_path: Path, loop: str, problem: str
) -> None:
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "fix.yaml").write_text(CHILD)
    text = BAD.replace("      join: best\n", "").replace("    action: echo hi\n", "")
    (tmp_path / ".loops" / "fan.yaml").write_text(text.replace("loop: fix", f"loop: {loop}"))
    done = ll_loop(tmp_path, "validate", "fan")
    assert done.returncode == 2
    (line,) = (done.stdout + done.stderr).splitlines()
    assert problem in line
    assert ll_loop(tmp_path, "run", "fan").returncode != 0
    assert not (tmp_path / ".loops" / ".worktrees").exists()


def test_a_later_state_may_read_its_results(tmp_path: Path) -> None:
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "fix.yaml").write_text(CHILD)
    text = BAD.replace("      join: best\n", "").replace("    action: echo hi\n", "")
    text = text.replace(
        "    on_success: done\n",
        "    on_success: say\n  say:\n    action: echo ${captured.fan.merged}\n    next: done\n",
    )
    (tmp_path / ".loops" / "fan.yaml").write_text(text)
    done = ll_loop(tmp_path, "validate", "fan")
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_fan_out_in_one_line() -> None:
    from little_loops.fsm.definition.model.fanout import fan_out_text

    mapped = MapConfig(items="${captured.x.output}", loop="fix", max_cost_usd=2.5)
    assert fan_out_text(mapped) == (
        "map the items of ${captured.x.output} over loop fix (as item);"
        " 8 (the default) at once, join all, merge none, max_cost_usd 2.5"
    )
    listed = ParallelConfig(branches=[{"loop": "a"}, {"loop": "b"}], join="best", merge="best")
    assert fan_out_text(listed) == (
        "parallel 2 branches: a, b; 8 (the default) at once, join best, merge best"
    )
