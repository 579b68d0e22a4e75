"""The table of other spellings: each key's level, its recommended key and value."""

from __future__ import annotations

from little_loops.fsm.definition.model.spellings import (
    ROUTE,
    SPELLINGS,
    STATE,
    our_key,
    spellings_at,
)


def test_verdict_shorthands_and_route_keys() -> None:
    assert our_key(STATE, "on_yes") == "on_success"
    assert our_key(STATE, "on_no") == "on_failure"
    assert our_key(ROUTE, "yes") == "success"
    assert our_key(ROUTE, "no") == "failure"
    assert our_key(STATE, "on_success") == "on_success"
    assert our_key(ROUTE, "on_yes") == "on_yes"  # a level's own table only


def test_failure_flag_becomes_outcome() -> None:
    failure = spellings_at(STATE)["failure"]
    assert failure.ours == "outcome"
    assert failure.our_value(True) == "failure"
    assert failure.our_value(False) == "success"
    assert failure.our_value("odd") == "odd"


def test_each_spelling_once_per_level() -> None:
    seen = [(each.level, each.theirs) for each in SPELLINGS]
    assert len(seen) == len(set(seen))
    assert all(each.theirs != each.ours for each in SPELLINGS)


def test_in_our_spelling_keeps_order_and_ours() -> None:
    from little_loops.fsm.definition.model.spellings import in_our_spelling

    state = {"action": "x", "on_yes": "a", "on_failure": "b", "failure": True}
    assert in_our_spelling(STATE, state) == {
        "action": "x",
        "on_success": "a",
        "on_failure": "b",
        "outcome": "failure",
    }
    assert in_our_spelling(STATE, {"on_yes": "a", "on_success": "b"}) == {"on_success": "b"}
    assert in_our_spelling(ROUTE, {"yes": "a", "no": "b", "_": "c"}) == {
        "success": "a",
        "failure": "b",
        "_": "c",
    }
