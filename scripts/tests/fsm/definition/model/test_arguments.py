"""Binding a run's values: precedence, plain context keys, and the one-line refusals."""

from __future__ import annotations

import pytest

from little_loops.fsm.definition.model.arguments import Arguments, bind
from little_loops.fsm.definition.model.parameters import ParameterSpec
from little_loops.fsm.facts.errors import LoopDefinitionError

PARAMS = {
    "issue": ParameterSpec(type="integer"),
    "mode": ParameterSpec(default="quick", choices=("quick", "deep")),
}
CONTEXT = {"greeting": "hi"}


def test_defaults_then_file_then_positional_then_set() -> None:
    assert bind("x", PARAMS, CONTEXT, Arguments(("1",))) == {
        "greeting": "hi",
        "issue": 1,
        "mode": "quick",
    }
    args = Arguments(
        positional=("2",),
        sets=("issue=3",),
        file_values={"issue": 9, "mode": "deep", "greeting": ["a"]},
        file_name="v.json",
    )
    assert bind("x", PARAMS, CONTEXT, args) == {"greeting": ["a"], "issue": 3, "mode": "deep"}
    assert bind("x", PARAMS, CONTEXT, Arguments(file_values={"issue": 4})) == {
        "greeting": "hi",
        "issue": 4,
        "mode": "quick",
    }


def test_the_last_set_of_a_key_wins_and_a_value_may_hold_equals_signs() -> None:
    args = Arguments(("1",), ("greeting=a=b", "greeting=c=d"))
    assert bind("x", PARAMS, CONTEXT, args)["greeting"] == "c=d"


def test_a_dry_run_may_leave_a_required_value_out() -> None:
    assert bind("x", PARAMS, CONTEXT, Arguments(), missing_ok=True) == {
        "greeting": "hi",
        "mode": "quick",
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            Arguments(),
            "loop 'x': missing required parameter 'issue' (give it as value 1 after the loop "
            "name, or --set issue=VALUE)",
        ),
        (
            Arguments(("1", "deep", "3")),
            "loop 'x' takes 2 values (issue, mode), got 3: extra 3",
        ),
        (
            Arguments(("1",), ("mood=deep",)),
            "loop 'x': unknown key 'mood' in --set (did you mean mode?)",
        ),
        (
            Arguments(("1",), ("zzz=1",)),
            "loop 'x': unknown key 'zzz' in --set (it has: issue, mode, greeting)",
        ),
        (
            Arguments(file_values={"issue": "1"}, file_name="v.json"),
            "loop 'x': parameter 'issue' (context file v.json): expected a whole number, got '1'",
        ),
        (Arguments(("1",), ("=3",)), "--set =3: expected KEY=VALUE"),
    ],
)
def test_refusals_are_one_line(args: Arguments, message: str) -> None:
    with pytest.raises(LoopDefinitionError) as caught:
        bind("x", PARAMS, CONTEXT, args)
    assert str(caught.value) == message


def test_a_loop_without_parameters_takes_no_values() -> None:
    with pytest.raises(LoopDefinitionError) as caught:
        bind("x", {}, {}, Arguments(("a",)))
    assert str(caught.value) == (
        "loop 'x' takes no values (it declares no parameters), got 1: extra a"
    )
    with pytest.raises(LoopDefinitionError) as unknown:
        bind("x", {}, {}, Arguments(sets=("a=1",)))
    assert str(unknown.value) == (
        "loop 'x': unknown key 'a' in --set (it declares no parameters or context)"
    )
