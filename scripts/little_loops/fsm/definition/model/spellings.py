"""Keys a loop file may spell two ways: little-loops' spelling and the one our docs recommend."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from little_loops.fsm.definition.model.key_row import LOOP, STATE
from little_loops.fsm.definition.model.key_rows import ROWS
from little_loops.fsm.facts.verdict_words import FAILURE, SUCCESS, VERDICT_SYNONYMS

# Where a key sits: a loop's top level, one state's mapping, or a state's `route:` table.
Level = Literal["loop", "state", "route"]
ROUTE: Level = "route"


@dataclass(frozen=True)
class Spelling:
    """One key written *theirs* at *level* that means our key *ours*.

    *values* rewrites the value when the two keys take different ones (`failure: true` is
    `outcome: failure`); a value it does not list is kept as written. Both spellings are
    accepted keys; `ll-loop migrate` writes *ours*.
    """

    level: Level
    theirs: str
    ours: str
    values: Mapping[object, object] = field(default_factory=dict)

    def our_value(self, value: object) -> object:
        """*value* as our key takes it."""
        if isinstance(value, bool | str) and value in self.values:
            return self.values[value]
        return value


# The verdict shorthands of a state: `on_<word>` for each synonym (`on_yes` -> `on_success`).
_VERDICT_KEYS = tuple(
    Spelling(STATE, f"on_{word}", f"on_{ours}") for word, ours in VERDICT_SYNONYMS.items()
)
# A route table's keys are verdicts: `yes:` -> `success:`.
_ROUTE_KEYS = tuple(Spelling(ROUTE, word, ours) for word, ours in VERDICT_SYNONYMS.items())

SPELLINGS: tuple[Spelling, ...] = (
    *_VERDICT_KEYS,
    # A terminal's `failure: true` (and `false`) says how the run ends, as `outcome:` does.
    Spelling(STATE, "failure", "outcome", {True: FAILURE, False: SUCCESS}),
    *_ROUTE_KEYS,
    # Each key's other spellings, from its row (key_row.Key.theirs), wherever it stands.
    *(
        Spelling(place, theirs, row.name)
        for row in ROWS
        for place in (LOOP, STATE)
        if place in row.where
        for theirs in row.theirs
    ),
)


def spellings_at(level: Level) -> dict[str, Spelling]:
    """The other spellings of keys at *level*, by their key (worked out once per level:
    every state of every file read asks; not to be changed by the caller)."""
    found = _AT_LEVEL.get(level)
    if found is None:
        found = _AT_LEVEL[level] = {each.theirs: each for each in SPELLINGS if each.level == level}
    return found


_AT_LEVEL: dict[Level, dict[str, Spelling]] = {}


def our_key(level: Level, key: str) -> str:
    """The key our docs recommend for *key* at *level* (itself when it has no other)."""
    found = spellings_at(level).get(key)
    return key if found is None else found.ours


def in_our_spelling(level: Level, data: Mapping[Any, Any]) -> dict[Any, Any]:
    """*data* (one mapping at *level*) with each other spelling's key and value written as
    ours, in place; where a file writes both, ours is kept (validation says so)."""
    table = spellings_at(level)
    if table.keys().isdisjoint(data):
        return dict(data)  # (most mappings have no other spelling: copied at once)
    out: dict[Any, Any] = {}
    for key, value in data.items():
        found = table.get(key) if isinstance(key, str) else None
        if found is None:
            out[key] = value
        elif found.ours not in data:
            out[found.ours] = found.our_value(value)
    return out


def _twice(data: Mapping[Any, Any], level: Level) -> Iterator[tuple[str, str]]:
    """Each key written in two spellings in *data* (a mapping at *level*): (theirs, ours)."""
    table = spellings_at(level)
    if table.keys().isdisjoint(data):
        return  # (most mappings have no other spelling: passed over at once)
    for theirs, spelling in table.items():
        if theirs in data and spelling.ours in data:
            yield theirs, spelling.ours


def written_twice(state: Mapping[Any, Any]) -> Iterator[tuple[tuple[str, ...], str]]:
    """A key written twice in two spellings in *state* (or its route table), each with its
    key path in the state."""
    for theirs, ours in _twice(state, STATE):
        yield (theirs,), f"{theirs} and {ours} are one key written twice: keep one ({ours})"
    route = state.get("route")
    if route is not None and isinstance(route, Mapping):  # (None first: cheaper)
        for theirs, ours in _twice(route, ROUTE):
            yield ("route", theirs), f"{theirs} and {ours} are one verdict: keep one ({ours})"


__all__ = [
    "LOOP",
    "ROUTE",
    "SPELLINGS",
    "STATE",
    "Level",
    "Spelling",
    "in_our_spelling",
    "our_key",
    "spellings_at",
    "written_twice",
]
