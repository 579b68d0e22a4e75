"""A state's `fragment:`: merged under the state's keys, `${param.NAME}` filled in."""

from __future__ import annotations

import pytest

from little_loops.fsm.definition.reading.fragments import expand_state
from little_loops.fsm.definition.reading.loader import load_text
from little_loops.fsm.definition.reading.located import Node, wrap
from little_loops.fsm.facts.errors import LoopFileError

LIB = """\
fragments:
  f:
    description: not merged
    parameters:
      who: {type: string, required: true}
      n: {type: integer, default: 2}
      opt: {type: string}
    action: "hi ${param.who} x${param.n} [${param.opt?}] ${param.opt:default=d} $${param.who}"
    timeout: "${param.n}"
"""


def fragments() -> dict[str, Node]:
    lib = wrap(load_text(LIB, "lib.yaml")).value["fragments"].value
    assert isinstance(lib, dict)
    return lib


def expand(state: str) -> object:
    node = wrap(load_text(state, "loop.yaml"))
    return expand_state("s", node, fragments()).plain()


def test_parameters_are_filled_in_as_text_or_as_the_whole_value() -> None:
    assert expand("fragment: f\nwith:\n  who: bob\n") == {
        "action": "hi bob x2 [] d $${param.who}",
        "timeout": 2,
    }


def test_a_with_value_that_is_a_reference_is_kept_for_the_run() -> None:
    state = expand("fragment: f\nwith:\n  who: ${context.name}\n  opt: o\n")
    assert state == {"action": "hi ${context.name} x2 [o] o $${param.who}", "timeout": 2}


@pytest.mark.parametrize(
    ("state", "message"),
    [
        (
            "fragment: g\n",
            "loop.yaml:1: states > s > fragment: no fragment named 'g' (fragments: f)",
        ),
        (
            "fragment: f\nwith: [who]\n",
            "loop.yaml:2: states > s > with: expected a mapping of parameter names to values",
        ),
        (
            "fragment: f\nwith:\n  who: 1\n",
            "loop.yaml:3: states > s > with > who: expected string, got 1",
        ),
        (
            "fragment: f\nwith:\n  who: b\n  n: true\n",
            "loop.yaml:4: states > s > with > n: expected integer, got True",
        ),
    ],
)
def test_a_bad_use_is_one_line(state: str, message: str) -> None:
    with pytest.raises(LoopFileError) as caught:
        expand(state)
    assert str(caught.value) == message


def test_a_used_parameter_without_a_value_is_an_error() -> None:
    lib = {"g": wrap(load_text("action: ${param.x}\n", "lib.yaml"))}
    node = wrap(load_text("fragment: g\n", "loop.yaml"))
    with pytest.raises(LoopFileError, match=r"lib.yaml:1: \$\{param.x\} has no value"):
        expand_state("s", node, lib)
