"""A key as one row: where it stands, its check and doc at each place, its model field."""

from __future__ import annotations

from little_loops.fsm.definition.model.key_row import (
    EVALUATE,
    LOOP,
    STATE,
    Key,
    checks_at,
    docs_at,
)
from little_loops.fsm.values.value_checks import boolean, string

_ROWS = (
    Key("a", (LOOP, STATE), boolean, "A.", docs={LOOP: "Every state's A."}),
    Key("b", (STATE,), string, "B.", field="b_"),
    Key("c", (EVALUATE,), string, "C."),
)


def test_each_place_gets_the_keys_that_stand_there_in_row_order() -> None:
    assert list(checks_at(STATE, _ROWS)) == ["a", "b"]
    assert list(checks_at(LOOP, _ROWS)) == ["a"]
    assert list(checks_at(EVALUATE, _ROWS)) == ["c"]
    assert checks_at(STATE, _ROWS)["a"] is boolean


def test_a_doc_can_read_otherwise_at_one_place() -> None:
    assert docs_at(LOOP, _ROWS) == {"a": "Every state's A."}
    assert docs_at(STATE, _ROWS) == {"a": "A.", "b": "B."}


def test_the_field_is_the_key_unless_the_row_names_one() -> None:
    assert _ROWS[0].field_name == "a"
    assert _ROWS[1].field_name == "b_"
