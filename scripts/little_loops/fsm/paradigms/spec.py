"""Read a paradigm spec's fields with type checks; errors name paradigm > path > field."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from little_loops.fsm.definition.checks.key_tables import LOOP_SETTING_KEYS, RUN_ACTION_TYPE
from little_loops.fsm.definition.model.lint_flags import UNKNOWN_KEY
from little_loops.fsm.facts.errors import ParadigmSpecError
from little_loops.fsm.facts.suggest import did_you_mean
from little_loops.fsm.values.value_checks import (
    LARGEST_NUMBER,
    Check,
    describe,
    is_finite,
    quote_hint,
    type_name,
)
from little_loops.fsm.values.value_checks import is_number as any_number

# Loop settings a paradigm spec may carry: the FSM's own, checked by the definition's checks
# (one wording per mistake), plus `action_type`, which goes onto every generated action state.
SETTING_KEYS: dict[str, Check] = {
    **LOOP_SETTING_KEYS,
    "action_type": RUN_ACTION_TYPE,
}
LOOP_SETTINGS: tuple[str, ...] = tuple(SETTING_KEYS)


def is_number(value: Any) -> bool:
    """An int or float within LARGEST_NUMBER (so not inf or nan), but not a boolean."""
    return any_number(value) and is_finite(value)


class SpecReader:
    """One mapping of a spec, with the path that leads to it for error messages."""

    def __init__(self, label: str, data: Mapping[str, Any], path: tuple[str, ...] = ()) -> None:
        self.label = label
        self.data = data
        self.path = path

    def where(self, key: str | None = None) -> str:
        """`paradigm 'x' > a > b[1]`, plus ` > key` when *key* is given."""
        parts = [self.label, *self.path]
        if key is not None:
            parts.append(key)
        return " > ".join(parts)

    def error(
        self, message: str, key: str | None = None, check: str | None = None
    ) -> ParadigmSpecError:
        path: list[str | int] = []
        for part in (*self.path, *([key] if key is not None else [])):
            name, _, index = part.partition("[")
            path.append(name)
            if index.endswith("]") and index[:-1].isdigit():
                path.append(int(index[:-1]))
        return ParadigmSpecError(f"{self.where(key)}: {message}", message, tuple(path), check)

    def check_keys(self, allowed: Iterable[str]) -> None:
        """Reject the first key not in *allowed*, suggesting the closest allowed one."""
        choices = list(allowed)
        for key in self.data:
            if key not in choices:
                hint = did_you_mean(str(key), choices)
                # One of the loop's own keys is the stricter check little-loops lacks.
                unknown = UNKNOWN_KEY if not self.path else None
                raise self.error(f"unknown key{hint}", str(key), unknown)

    def require(self, key: str) -> Any:
        if key not in self.data:
            raise self.error(f"missing required field '{key}'")
        return self.data[key]

    def string(self, key: str) -> str:
        """A required non-empty string."""
        value = self.require(key)
        if not isinstance(value, str):
            raise self.error(f"expected a string, got {type_name(value)}{quote_hint(value)}", key)
        if not value.strip():
            raise self.error("must not be empty", key)
        return value

    def number(self, key: str, *, minimum: float | None = None) -> float | int:
        """A required finite number, optionally at least *minimum*."""
        value = self.require(key)
        if any_number(value) and not is_finite(value):  # .inf, .nan, 400 digits
            want = (
                "a finite number" if isinstance(value, float) else f"at most {LARGEST_NUMBER:.1e}"
            )
            raise self.error(f"expected {want}, got {describe(value)}", key)
        if not is_number(value):
            raise self.error(f"expected a number, got {type_name(value)}", key)
        if minimum is not None and value < minimum:
            raise self.error(f"must be at least {minimum:g}, got {value}", key)
        number: float | int = value
        return number

    def boolean(self, key: str) -> bool:
        value = self.require(key)
        if not isinstance(value, bool):
            raise self.error(f"expected true or false, got {type_name(value)}", key)
        return value

    def choice(self, key: str, choices: tuple[str, ...]) -> str:
        value = self.require(key)
        known = ", ".join(choices)
        if not isinstance(value, str):
            raise self.error(f"expected one of {known}, got {type_name(value)}", key)
        if value not in choices:
            hint = did_you_mean(value, choices)
            raise self.error(f"unknown value '{value}'{hint}; known: {known}", key)
        return value

    def items(self, key: str) -> list[Any]:
        """A required non-empty list."""
        value = self.require(key)
        if not isinstance(value, list):
            raise self.error(f"expected a list, got {type_name(value)}", key)
        if not value:
            raise self.error("must not be empty", key)
        return value

    def strings(self, key: str) -> list[str]:
        """A required non-empty list of non-empty strings."""
        out: list[str] = []
        for index, value in enumerate(self.items(key)):
            where = f"{key}[{index}]"
            if not isinstance(value, str):
                got = f"{type_name(value)}{quote_hint(value)}"
                raise self.error(f"expected a string, got {got}", where)
            if not value.strip():
                raise self.error("must not be empty", where)
            out.append(value)
        return out

    def mapping(self, key: str) -> SpecReader:
        """A reader for the required mapping at *key*."""
        value = self.require(key)
        return self.child(value, key)

    def item(self, key: str, index: int, value: Any) -> SpecReader:
        """A reader for the mapping at `key[index]`."""
        return self.child(value, f"{key}[{index}]")

    def child(self, value: Any, segment: str) -> SpecReader:
        """A reader for *value*, which must be a mapping, found at *segment*."""
        if not isinstance(value, dict):
            raise self.error(f"expected a mapping, got {type_name(value)}", segment)
        return SpecReader(self.label, value, (*self.path, segment))
