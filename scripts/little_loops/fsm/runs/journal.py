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

from collections.abc import Iterable, Mapping
from typing import Any

SAVED_KEY = "saved"  # the key of an event that holds the changes of the run's state
APPEND_SUFFIX = "+"  # `pass_states+`: items appended to the list; `captured+`: keys set
# Fields of the state file that describe the file, not the run: never in a change.
FILE_FIELDS = frozenset({"updated_at", "events_segment", "events_offset"})

_ABSENT = object()


class Journal:
    """What the events of a run already say about its state, to record only what changed."""

    def __init__(self) -> None:
        self._recorded: dict[str, Any] = {}

    def base(self, state: Mapping[str, Any]) -> dict[str, Any]:
        """Every field of *state*, recorded from scratch (the first event of a run or resume)."""
        self._recorded = {}
        return self.changes(state)

    def changes(self, state: Mapping[str, Any]) -> dict[str, Any]:
        """The fields of *state* that differ from what was recorded last; now recorded."""
        recorded = self._recorded
        delta: dict[str, Any] = {}
        for key, value in state.items():
            old = recorded.get(key, _ABSENT)
            if old == value or key in FILE_FIELDS:  # (a file field is never recorded)
                continue
            added = _added(old, value)
            if added is not None:
                delta[key + APPEND_SUFFIX] = added
            else:
                delta[key] = value
            # A copy: the executor changes its lists and dicts in place.
            recorded[key] = (
                list(value)
                if isinstance(value, list)
                else dict(value)
                if isinstance(value, dict)
                else value
            )
        return delta


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
