"""A run recorded in its events: the changes each event carries, and replaying them onto a snapshot.

The event log is the durable record of a run. Each event that changes the run carries the
changed fields of the state file under SAVED_KEY; the state file is only a snapshot that
says how far into the log it is (`events_segment`, `events_offset`). The run is that
snapshot with the changes of every later event applied, in order.

A change is the new value of a field, or, under the field's name plus APPEND_SUFFIX, what
was added to a list (appended items) or to an object (new or changed keys, and under a
key plus APPEND_SUFFIX the items appended to its list): a pass of 20,000 states then
records one name per step, not the whole list again, and a guard's record one record.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from operator import itemgetter
from typing import Any

SAVED_KEY = "saved"  # the key of an event that holds the changes of the run's state
APPEND_SUFFIX = "+"  # `pass_states+`: items appended to the list; `captured+`: keys set
# Fields of the state file that describe the file, not the run: never in a change.
FILE_FIELDS = frozenset({"updated_at", "events_segment", "events_offset"})

_ABSENT = object()
_FIRST = itemgetter(0)


class Journal:
    """What the events of a run already say about its state, to record only what changed.

    *fields*: the names of the fields `parts_changes` is given, in the order the state has
    them, each with its key in the state (where the two differ)."""

    def __init__(self, fields: Sequence[tuple[str, str]] = ()) -> None:
        self._recorded: dict[str, Any] = {}
        self._keys = dict(fields)
        self._order = {name: index for index, (name, _key) in enumerate(fields)}  # by name
        # Each part as `parts_changes` last recorded it, by its names: the recorded copies.
        self._parts: list[dict[str, Any]] = []

    def base(self, state: Mapping[str, Any]) -> dict[str, Any]:
        """Every field of *state*, recorded from scratch (the first event of a run or resume)."""
        self._recorded = {}
        return self.changes(state)

    def changes(self, state: Mapping[str, Any]) -> dict[str, Any]:
        """The fields of *state* that differ from what was recorded last; now recorded."""
        self._parts = []  # recorded here: the parts are compared field by field again
        delta: dict[str, Any] = {}
        for key, value in state.items():
            if key not in FILE_FIELDS:  # (a file field is never recorded)
                self._record(key, value, delta)
        return delta

    def parts_changes(
        self, parts: Sequence[Mapping[str, Any]]
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """`changes` of the fields given in *parts* (the same parts at every call, each a
        slice of the fields by name, as the executor's rules dump theirs): the delta, in
        the fields' order, and the changed fields as recorded, by key. A part equal to what
        was recorded of it is passed over in one comparison, not one per field."""
        seen = self._parts
        while len(seen) < len(parts):
            seen.append({})
        order = self._order
        changed: list[tuple[int, str, Any, dict[str, Any]]] = []
        for part, last in zip(parts, seen, strict=False):
            if part != last:
                for name, value in part.items():
                    if last.get(name, _ABSENT) != value:
                        changed.append((order.get(name, len(order)), name, value, last))
        changed.sort(key=_FIRST)  # the fields' order, as `changes` records them
        delta: dict[str, Any] = {}
        values: dict[str, Any] = {}
        keys = self._keys
        for _index, name, value, last in changed:
            key = keys.get(name, name)
            before = len(delta)
            last[name] = kept = self._record(key, value, delta)
            if len(delta) > before:
                values[key] = kept
        return delta, values

    def _record(self, key: str, value: Any, delta: dict[str, Any]) -> Any:
        """Record *value* of field *key* (its change into *delta*); what is recorded of it."""
        recorded = self._recorded
        old = recorded.get(key, _ABSENT)
        if old == value:
            return old
        added = _added(old, value)
        if added is not None:
            delta[key + APPEND_SUFFIX] = added
        else:
            delta[key] = value
        # A copy: the executor changes its lists and dicts in place.
        kept = recorded[key] = (
            list(value)
            if isinstance(value, list)
            else dict(value)
            if isinstance(value, dict)
            else value
        )
        return kept


def _added(old: Any, new: Any) -> list[Any] | dict[str, Any] | None:
    """What *new* adds to *old* when it only adds (a longer list, more or changed keys; a
    key whose list only grew, as a guard's records in the context, by its new items)."""
    if isinstance(old, list) and isinstance(new, list):
        if old and len(new) > len(old) and new[: len(old)] == old:
            return new[len(old) :]
        return None
    if isinstance(old, dict) and isinstance(new, dict) and old and old.keys() <= new.keys():
        nested: bool | None = None  # no key ends in APPEND_SUFFIX (else ambiguous): found once
        out: dict[str, Any] = {}
        for key, value in new.items():
            before = old.get(key, _ABSENT)
            if before == value:
                continue
            grown = None
            if isinstance(value, list):
                if nested is None:
                    nested = not any(str(k).endswith(APPEND_SUFFIX) for k in new)
                grown = _added(before, value) if nested else None
            if grown is not None:
                out[f"{key}{APPEND_SUFFIX}"] = grown
            else:
                out[key] = value
        return out
    return None


def apply(state: dict[str, Any], delta: dict[str, Any]) -> None:
    """Apply one event's changes to *state* (a parsed state file) in place."""
    for key, value in delta.items():
        if key.endswith(APPEND_SUFFIX):
            field = key[: -len(APPEND_SUFFIX)]
            current = state.get(field)
            if isinstance(current, list) and isinstance(value, list):
                state[field] = current + value
                continue
            if isinstance(current, dict) and isinstance(value, dict):
                state[field] = {**current, **value}
                for inner, items in value.items():  # `key+`: items appended to its list
                    name = inner[: -len(APPEND_SUFFIX)]
                    if inner.endswith(APPEND_SUFFIX) and isinstance(current.get(name), list):
                        del state[field][inner]
                        state[field][name] = [*current[name], *items]
                continue
            raise ValueError(f"'{key}' adds to {field!r}, which is not a list or an object")
        state[key] = value


def replay(state: dict[str, Any], events: Iterable[dict[str, Any]]) -> str | None:
    """Apply the changes of each of *events* to *state*, in order; the time of the last
    event that changed it (None when none did)."""
    last = None
    for event in events:
        delta = event.get(SAVED_KEY)
        if isinstance(delta, dict):
            apply(state, delta)
            ts = event.get("ts")
            last = ts if isinstance(ts, str) else last
        elif delta is not None:
            raise ValueError(f"'{SAVED_KEY}' of a {event.get('event')!r} event is not an object")
    return last


def without_changes(event: dict[str, Any]) -> dict[str, Any]:
    """*event* as users see it: the recorded changes are bookkeeping, not history."""
    if SAVED_KEY not in event:
        return event
    return {key: value for key, value in event.items() if key != SAVED_KEY}
