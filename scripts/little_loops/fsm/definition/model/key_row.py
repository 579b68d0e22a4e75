"""A loop-file key as one row: where it stands, its check, default, doc, field and spellings.

A feature module declares its keys as a tuple of rows (`KEYS`), the way `RunFlags` declares
run flags; the key tables, the key docs, the JSON Schema, the model, the loop graph,
`migrate` (spellings.py), `--dry-run` and the lint flags read the rows (key_rows.py
gathers them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from little_loops.fsm.values.value_checks import Check

# Where a key may stand: the loop's top level, a state, or a state's `evaluate:` block.
LOOP: Final = "loop"
STATE: Final = "state"
EVALUATE: Final = "evaluate"
PLACES: tuple[str, ...] = (LOOP, STATE, EVALUATE)


# Not frozen and compared by identity: a row is made once and only read, and a frozen
# dataclass (object.__setattr__ for each field, a dict for each mapping) cost every `validate`
# about 8 M instructions (1.5%) over its ~150 rows.
@dataclass(eq=False, slots=True)
class Key:
    """One loop-file key, everything about it in one place.

    - *where*: the places it may stand (LOOP, STATE, EVALUATE);
    - *check*: what is wrong with a value (and the JSON Schema saying the same);
    - *doc*: one sentence for the schema and editors (*docs*: another at a place);
    - *checks*: another check at a place (the loop's `commit:` takes a word, a state's a
      boolean);
    - *default*: the model's value when the file leaves it out (*required*: it may not;
      *defaults*: another at a place, as the loop's `commit:` is false, a state's unset);
    - *field*: the model field it fills (None: the key itself; a key with no field of the
      model's is kept in the model's `more` mapping, by key);
    - *block*: the dataclass a mapping value is read into (its `from_dict`/`to_dict`);
    - *theirs*: little-loops' other spellings, which `migrate` rewrites to this key;
    - *lint_flag*: the `*_ok` flag of little-loops' lint of its values (we have none);
    - *route*: a state name the run goes to, and the label the loop graph gives the
      route (`stall`, `error` ...): the graph, checks and diagram follow it;
    - *env*: what the key adds to the environment of the state's action (agents only
      when *agents_only*), from its value as the model holds it;
    - *shown*: how `--dry-run` shows its value on a state (None: not shown).

    What `--compat` does with a key little-loops reads otherwise is its row of
    validate/meanings.py (`Meaning`), which names the key's place and name: the note
    `validate` prints, the rewrite and docs/little-loops.md's row of it are said there.
    """

    name: str
    where: tuple[str, ...]
    check: Check
    doc: str
    docs: Mapping[str, str] | None = None
    checks: Mapping[str, Check] | None = None
    default: Any = None
    defaults: Mapping[str, Any] | None = None
    field: str | None = None
    block: Any = None
    theirs: tuple[str, ...] = ()
    lint_flag: str | None = None
    route: str | None = None
    env: Callable[[Any], Mapping[str, str]] | None = None
    agents_only: bool = False
    shown: Callable[[Any], str] | None = None
    required: bool = False

    @property
    def field_name(self) -> str:
        """The model field the key fills."""
        return self.field or self.name

    def check_at(self, place: str) -> Check:
        """The key's check where it stands at *place*."""
        return self.check if self.checks is None else self.checks.get(place, self.check)

    def doc_at(self, place: str) -> str:
        """The key's doc where it stands at *place*."""
        return self.doc if self.docs is None else self.docs.get(place, self.doc)

    def default_at(self, place: str) -> Any:
        """The key's default where it stands at *place*."""
        return self.default if self.defaults is None else self.defaults.get(place, self.default)


def checks_at(place: str, rows: Iterable[Key]) -> dict[str, Check]:
    """The check of each key of *rows* that may stand at *place*, in row order."""
    return {row.name: row.check_at(place) for row in rows if place in row.where}


def docs_at(place: str, rows: Iterable[Key]) -> dict[str, str]:
    """The doc of each key of *rows* that may stand at *place*, in row order."""
    return {row.name: row.doc_at(place) for row in rows if place in row.where}


__all__ = ["EVALUATE", "LOOP", "PLACES", "STATE", "Key", "checks_at", "docs_at"]
