"""A fan-out state's scripted branch verdicts, checked and joined (fsm/engine/simulate_branches)."""

from __future__ import annotations

from textwrap import dedent

import pytest

from little_loops.fsm.definition.model.fanout import MapConfig, ParallelConfig
from little_loops.fsm.definition.reading.loader import load_text
from little_loops.fsm.engine.simulate_branches import branch_labels, check_branch_script, joined
from little_loops.fsm.facts.errors import LoopDefinitionError
from little_loops.fsm.validate.loopfile import check_document

LOOP = """\
name: fans
initial: fan
states:
  fan:
    map:
      items: [a, b]
      loop: fix
    on_success: done
    on_failure: done
  done:
    terminal: true
"""


def test_a_branch_is_named_by_its_item_or_loop_and_a_text_map_is_unknown() -> None:
    assert branch_labels(MapConfig(items=["a", 2], loop="fix")) == ["a", "2"]
    assert branch_labels(MapConfig(items="${captured.x.output}", loop="fix")) is None
    assert branch_labels(ParallelConfig(branches=[{"loop": "x"}, {"loop": "y"}])) == ["x", "y"]


@pytest.mark.parametrize(
    ("join", "verdicts", "verdict"),
    [
        ("all", ["success", "success"], "success"),
        ("all", ["success", "stopped"], "failure"),
        ("all", [], "success"),  # a map of no items has nothing left to do
        ("any", ["failure", "success"], "success"),
        ("any", ["failure", "stopped"], "failure"),
        ("best", ["failure", "success"], "success"),
        ("best", ["failure"], "failure"),
    ],
)
def test_the_verdicts_join_as_a_run_joins_them(
    join: str, verdicts: list[str], verdict: str
) -> None:
    assert joined(MapConfig(items=[], loop="fix", join=join), verdicts) == verdict


def test_a_script_is_checked_and_its_words_made_ours() -> None:
    fsm = check_document(load_text(dedent(LOOP), "fans.yaml")).fsm
    assert fsm is not None
    assert check_branch_script(fsm, {"fan": ["yes", "no"]}) == {"fan": ["success", "failure"]}
    for script, said in [
        ({"fan": ["success"]}, "state 'fan' has 2 branches (a, b), given 1 verdicts"),
        ({"done": ["success"]}, "'done' is not a fan-out state of loop 'fans'"),
        ({"nope": ["success"]}, "'nope' is not a fan-out state"),
        ({"fan": ["success", "partial"]}, "'partial' is not how a branch ends"),
    ]:
        with pytest.raises(LoopDefinitionError, match="--branch-verdicts: ") as caught:
            check_branch_script(fsm, script)
        assert said in str(caught.value)
