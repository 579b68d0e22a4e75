"""`flow:` and `state_defs:` made into states."""

from __future__ import annotations

import pytest

from little_loops.fsm.definition.reading.flow import expand_flow
from little_loops.fsm.definition.reading.loader import load_text
from little_loops.fsm.definition.reading.located import wrap
from little_loops.fsm.facts.errors import LoopFileError


def states_of(text: str) -> dict[str, object]:
    root = expand_flow(wrap(load_text(text, "f.yaml")), states_written_here=False)
    assert "flow" not in root.value
    assert "state_defs" not in root.value
    plain = root.plain()
    assert isinstance(plain, dict)
    return plain["states"]  # type: ignore[no-any-return]


def test_each_entry_goes_on_to_the_next_and_the_last_is_terminal() -> None:
    assert states_of("flow: [a, 'b?c:a', c]\nstate_defs:\n  a:\n    action: x\n") == {
        "a": {"next": "b", "action": "x"},
        "b": {"on_success": "c", "on_failure": "a"},
        "c": {"terminal": True},
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("flow: []\n", "f.yaml:1: flow: is a list of at least one state name"),
        ("flow: [a, a]\n", "f.yaml:1: flow: names state 'a' twice"),
        (
            "flow: ['a?:b']\n",
            "f.yaml:1: flow: entry 'a?:b' must be NAME?YES:NO, each part non-empty",
        ),
        ("flow: [a]\nstate_defs:\n  b: {}\n", "f.yaml:3: state_defs: 'b' is not in flow:"),
        (
            "flow: [a]\nstate_defs: [a]\n",
            "f.yaml:2: state_defs: is a mapping of state names to their settings",
        ),
    ],
)
def test_a_bad_flow_is_one_line(text: str, message: str) -> None:
    with pytest.raises(LoopFileError) as caught:
        states_of(text)
    assert str(caught.value) == message
