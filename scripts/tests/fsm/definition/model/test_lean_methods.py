"""The loop model's `==`, `repr` and hash are those `@dataclass` makes (lean_methods.py),
checked against a dataclass made the usual way from the same fields."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from little_loops.fsm.definition.model.typed import EvaluateConfig, FSMLoop, StateConfig
from little_loops.fsm.definition.reading.loader import load_text


def _usual(cls: type) -> Any:
    """*cls*'s fields in a dataclass made by `@dataclass` (eq, repr and hash generated)."""
    return dataclasses.make_dataclass(
        cls.__name__,
        [
            (
                f.name,
                f.type,
                dataclasses.field(
                    default=f.default,
                    default_factory=f.default_factory,
                    repr=f.repr,
                    compare=f.compare,
                    metadata=f.metadata,
                ),
            )
            for f in dataclasses.fields(cls)
        ],
    )


def _as_usual(obj: Any) -> Any:
    fields = dataclasses.fields(obj)
    return _usual(type(obj))(**{f.name: getattr(obj, f.name) for f in fields if f.init})


LOOP = """\
name: l
initial: a
context: {x: 1}
states:
  a:
    action: echo hi
    evaluate: {type: output_contains, pattern: hi}
    stall: {max_visits: 3}
    on_success: b
    on_failure: a
  b:
    terminal: true
retry: {max_attempts: 2}
"""


def _loop() -> FSMLoop:
    return FSMLoop.from_dict(load_text(LOOP, "l.yaml").data)


def test_repr_is_the_dataclass_repr() -> None:
    fsm = _loop()
    assert repr(fsm) == repr(_as_usual(fsm))
    state = fsm.states["a"]
    assert repr(state) == repr(_as_usual(state))
    assert repr(StateConfig()) == repr(_usual(StateConfig)())


def test_a_recursive_repr_is_cut_as_the_dataclass_cuts_it() -> None:
    fsm = _loop()
    fsm.context["me"] = fsm
    usual = _as_usual(fsm)
    usual.context = {"x": 1, "me": usual}
    assert "..." in repr(fsm)
    assert repr(fsm) == repr(usual)


def test_equality_reads_the_compared_fields_only() -> None:
    one, two = _loop(), _loop()
    assert one == two
    assert (one != two) is False
    two.theirs = True  # compare=False, as the children and the source
    two.source = "elsewhere.yaml"
    assert one == two
    two.max_iterations = 7
    assert one != two
    assert one.states["a"] == two.states["a"]
    two.states["a"].evaluate = EvaluateConfig(type="exit_code")
    assert one.states["a"] != two.states["a"]
    assert (one == "l") is False
    assert one.__eq__("l") is NotImplemented


@pytest.mark.parametrize("obj", [StateConfig(), _loop()], ids=["state", "loop"])
def test_the_model_is_unhashable_as_an_eq_dataclass(obj: object) -> None:
    with pytest.raises(TypeError, match="unhashable"):
        hash(obj)
    with pytest.raises(TypeError, match="unhashable"):
        hash(_as_usual(obj))
