"""The journal finds an event's changes without work a step does not need (issue 42): an
object whose values changed is scanned for `key+` names only when one of its lists grew."""

from __future__ import annotations

from little_loops.fsm.runs.journal import Journal, apply


class Key(str):
    """A key that counts how often it is turned into a string (the scan for `key+`)."""

    scans = 0

    def __str__(self) -> str:
        Key.scans += 1
        return str.__str__(self)


def test_an_object_whose_scalars_changed_is_not_scanned_for_appended_lists() -> None:
    journal = Journal()
    counter = Key("steps")
    journal.base({"caps": {counter: 1, "repeats": 0}})
    Key.scans = 0
    for step in range(2, 12):
        delta = journal.changes({"caps": {counter: step, "repeats": 0}})
        assert delta == {"caps+": {"steps": step}}
    assert Key.scans == 0


def test_an_object_whose_list_grew_records_only_the_new_items_as_before() -> None:
    journal = Journal()
    state = {"context": {"records": [1], "name": "x"}}
    journal.base(state)
    grown = {"context": {"records": [1, 2, 3], "name": "x"}}
    delta = journal.changes(grown)
    assert delta == {"context+": {"records+": [2, 3]}}
    replayed = {"context": {"records": [1], "name": "x"}}
    apply(replayed, delta)
    assert replayed == grown
    # A key that already ends in `+` makes the nested form ambiguous: the whole list.
    journal.base({"context": {"a+": [1], "records": [1]}})
    assert journal.changes({"context": {"a+": [1], "records": [1, 2]}}) == {
        "context+": {"records": [1, 2]}
    }
