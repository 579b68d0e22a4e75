"""Journal: each event records only what changed, and replaying the changes rebuilds the run."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from little_loops.fsm.runs.journal import SAVED_KEY, Journal, apply, replay, without_changes


def test_first_record_holds_every_field_but_the_file_fields() -> None:
    state = {"iteration": 0, "captured": {}, "updated_at": "t", "events_offset": 3}
    assert Journal().base(state) == {"iteration": 0, "captured": {}}


def test_only_changed_fields_are_recorded_and_lists_and_objects_record_what_was_added() -> None:
    journal = Journal()
    state: dict[str, Any] = {"iteration": 1, "pass_states": ["a"], "captured": {"x": 1}}
    journal.base(state)
    assert journal.changes(state) == {}
    state["pass_states"].append("b")  # changed in place, as the executor does
    state["captured"]["y"] = 2
    assert journal.changes(state) == {"pass_states+": ["b"], "captured+": {"y": 2}}
    state["captured"]["x"] = 5
    assert journal.changes(state) == {"captured+": {"x": 5}}
    state["pass_states"] = ["c"]  # a new pass: not an append
    assert journal.changes(state) == {"pass_states": ["c"]}
    state["captured"] = {}  # a key removed: the whole object
    assert journal.changes(state) == {"captured": {}}


def test_replaying_the_changes_rebuilds_each_state() -> None:
    journal = Journal()
    states: list[dict[str, Any]] = [
        {"iteration": 0, "pass_states": [], "captured": {}, "prev_result": None},
        {"iteration": 1, "pass_states": ["a"], "captured": {}, "prev_result": None},
        {
            "iteration": 1,
            "pass_states": ["a", "b"],
            "captured": {"n": {"output": "1"}},
            "prev_result": {"v": 1},
        },
        {
            "iteration": 2,
            "pass_states": ["a"],
            "captured": {"n": {"output": "2"}},
            "prev_result": {"v": 2},
        },
    ]
    events = [
        {"event": "x", "ts": f"t{i}", SAVED_KEY: journal.changes(s)} for i, s in enumerate(states)
    ]
    rebuilt: dict[str, Any] = {}
    assert replay(rebuilt, events) == "t3"
    assert rebuilt == states[-1]
    middle: dict[str, Any] = {}
    replay(middle, events[:3])
    assert middle == states[2]


def test_replay_without_changes_returns_none_and_bad_changes_are_errors() -> None:
    assert replay({}, [{"event": "x", "ts": "t"}]) is None
    with pytest.raises(ValueError, match="not an object"):
        replay({}, [{"event": "x", SAVED_KEY: [1]}])
    with pytest.raises(ValueError, match="not a list or an object"):
        apply({"iteration": 1}, {"iteration+": [1]})


def test_users_never_see_the_changes() -> None:
    event = {"event": "route", "to": "b", SAVED_KEY: {"current_state": "b"}}
    assert without_changes(event) == {"event": "route", "to": "b"}
    plain = {"event": "route"}
    assert without_changes(plain) is plain


def test_a_list_in_an_object_that_only_grew_records_its_new_items_and_replays() -> None:
    """A guard appends a record to a list in the context at every step: recording the whole
    list each time made the log grow with the square of the steps."""
    journal = Journal()
    state: dict[str, Any] = {"context": {"goal": "x", "_tamper_guard": [{"n": 0}]}}
    # Each event hands the journal a copy of the context, as the run does (changed in place).
    events = [{"event": "start", SAVED_KEY: journal.base(copy.deepcopy(state))}]
    for n in range(1, 4):
        state["context"]["_tamper_guard"].append({"n": n})
        events.append({"event": "step", SAVED_KEY: journal.changes(copy.deepcopy(state))})
    assert events[-1][SAVED_KEY] == {"context+": {"_tamper_guard+": [{"n": 3}]}}
    rebuilt: dict[str, Any] = {}
    replay(rebuilt, events)
    assert rebuilt == state
    state["context"]["a+"] = [1]  # a key that ends like a change: whole values, as before
    state["context"]["_tamper_guard"].append({"n": 4})
    change = journal.changes(copy.deepcopy(state))
    assert change == {"context+": {"_tamper_guard": state["context"]["_tamper_guard"], "a+": [1]}}
    replay(rebuilt, [{"event": "step", SAVED_KEY: change}])
    assert rebuilt == state


FIELDS = (("iteration", "iteration"), ("note", "note_prompt"), ("pass_states", "pass_states"))


def test_the_changes_of_parts_are_the_changes_of_the_whole_state_in_the_fields_order() -> None:
    """A run hands the journal its fields in the slices its rules dump (FSMExecutor.dumps):
    each change is the one `changes` finds in the whole state, in the state's order, under
    the field's key in the state (`note` is saved as `note_prompt`)."""
    parts: list[dict[str, Any]] = [{"pass_states": ["a"], "iteration": 1}, {"note": None}]
    whole = Journal(FIELDS)
    sliced = Journal(FIELDS)

    def state() -> dict[str, Any]:
        merged = {name: value for part in parts for name, value in part.items()}
        return {key: copy.deepcopy(merged[name]) for name, key in FIELDS}

    whole.base(state())
    sliced.base(state())
    assert sliced.parts_changes(copy.deepcopy(parts)) == ({}, {})
    steps = [
        ("iteration", 2),
        ("pass_states", ["a", "b"]),  # grown: the new item only
        ("note", "n"),
        ("pass_states", ["c"]),  # a new pass: the whole list
    ]
    for name, value in steps:
        part = next(p for p in parts if name in p)
        part[name] = value
        if name == "note":  # two slices changed at once: the state's order, not the slices'
            parts[0]["iteration"] += 1
        delta, kept = sliced.parts_changes(copy.deepcopy(parts))
        expected = whole.changes(state())
        assert list(delta.items()) == list(expected.items())
        assert kept == {key: state()[key] for key in (k.removesuffix("+") for k in delta)}
    assert list(delta) == ["pass_states"]
    # A part changed in place after it was handed over: compared with what was recorded.
    parts[0]["pass_states"].append("d")
    assert sliced.parts_changes(parts)[0] == {"pass_states+": ["d"]}
    parts[0]["pass_states"].append("e")
    assert sliced.parts_changes(parts)[0] == {"pass_states+": ["e"]}
    # `changes` of the whole state again (the run's end): the parts are compared anew after.
    assert sliced.changes({"iteration": 9}) == {"iteration": 9}
    parts[0]["iteration"] = 9
    assert sliced.parts_changes(parts)[0] == {}
