"""Event names (facts/events.py): one enum whose members are the names written on disk."""

from __future__ import annotations

import json

from little_loops.fsm.facts.events import Event


def test_a_member_is_the_name_on_disk() -> None:
    assert Event.LOOP_COMPLETE == "loop_complete"
    assert json.dumps({"event": Event.STATE_ENTER}) == '{"event": "state_enter"}'
    assert Event("route") is Event.ROUTE
    assert f"{Event.ACTION_START}" == "action_start"


def test_every_name_is_its_member_in_lower_case_and_unique() -> None:
    assert all(member.value == member.name.lower() for member in Event)
    assert len({member.value for member in Event}) == len(Event)
    assert list(Event)[0] is Event.LOOP_START
    assert list(Event)[-1] is Event.LOOP_COMPLETE
