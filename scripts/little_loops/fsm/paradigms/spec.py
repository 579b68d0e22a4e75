"""Read a paradigm spec's fields with type checks; errors name paradigm > path > field."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from little_loops.fsm.definition.model import ACTION_TYPES
from little_loops.fsm.errors import ParadigmSpecError
from little_loops.fsm.suggest import did_you_mean

# Loop-level settings a paradigm spec may carry; they pass into the compiled FSM unchanged
# (`action_type` goes onto every generated action state instead).
LOOP_SETTINGS: tuple[str, ...] = (
    "max_iterations",
    "backoff",
    "timeout",
    "idle_timeout",
    "max_cost_usd",
    "maintain",
    "llm",
    "scope",
    "context",
    "action_type",
)
LLM_KEYS: tuple[str, ...] = ("enabled", "model", "max_tokens", "timeout")


def type_name(value: Any) -> str:
    """The YAML word for the type of *value*, as users see it in their file."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "mapping"
    return type(value).__name__


def is_number(value: Any) -> bool:
    """An int or a finite float, but not a boolean."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return math.isfinite(value)


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

    def error(self, message: str, key: str | None = None) -> ParadigmSpecError:
        path: list[str | int] = []
        for part in (*self.path, *([key] if key is not None else [])):
            name, _, index = part.partition("[")
            path.append(name)
            if index.endswith("]") and index[:-1].isdigit():
                path.append(int(index[:-1]))
        return ParadigmSpecError(f"{self.where(key)}: {message}", message, tuple(path))

    def check_keys(self, allowed: Iterable[str]) -> None:
        """Reject the first key not in *allowed*, suggesting the closest allowed one."""
        choices = list(allowed)
        for key in self.data:
            if key not in choices:
                hint = did_you_mean(str(key), choices)
                raise self.error(f"unknown key{hint}", str(key))

    def require(self, key: str) -> Any:
        if key not in self.data:
            raise self.error(f"missing required field '{key}'")
        return self.data[key]

    def string(self, key: str) -> str:
        """A required non-empty string."""
        value = self.require(key)
        if not isinstance(value, str):
            raise self.error(f"expected a string, got {type_name(value)}", key)
        if not value.strip():
            raise self.error("must not be empty", key)
        return value

    def number(self, key: str, *, minimum: float | None = None) -> float | int:
        """A required finite number, optionally at least *minimum*."""
        value = self.require(key)
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
                raise self.error(f"expected a string, got {type_name(value)}", where)
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


def read_loop_settings(reader: SpecReader) -> dict[str, Any]:
    """The loop-level settings present in the spec, type-checked, ready for the FSM dict.

    `action_type` is included too; the caller moves it onto the action states.
    """
    out: dict[str, Any] = {}
    data = reader.data
    if "max_iterations" in data:
        value = data["max_iterations"]
        if isinstance(value, bool) or not isinstance(value, int):
            raise reader.error(f"expected an integer, got {type_name(value)}", "max_iterations")
        if value < 1:
            raise reader.error(f"must be at least 1, got {value}", "max_iterations")
        out["max_iterations"] = value
    if "backoff" in data:
        out["backoff"] = reader.number("backoff", minimum=0)
    for key, unit in (
        ("timeout", "seconds"),
        ("idle_timeout", "seconds"),
        ("max_cost_usd", "dollars"),
    ):
        if key in data:
            value = reader.number(key, minimum=0)
            if value == 0:
                raise reader.error(f"must be more than 0 {unit}", key)
            out[key] = value
    if "maintain" in data:
        out["maintain"] = reader.boolean("maintain")
    if "llm" in data:
        out["llm"] = _read_llm(reader.mapping("llm"))
    if "scope" in data:
        scope = data["scope"]
        if not isinstance(scope, list):
            raise reader.error(f"expected a list of paths, got {type_name(scope)}", "scope")
        for index, path in enumerate(scope):
            if not isinstance(path, str) or not path.strip():
                raise reader.error(
                    f"expected a non-empty path string, got {type_name(path)}", f"scope[{index}]"
                )
        out["scope"] = list(scope)
    if "context" in data:
        context = reader.mapping("context").data
        for key in context:
            if not isinstance(key, str):
                raise reader.error(f"keys must be strings, got {type_name(key)}", "context")
        out["context"] = dict(context)
    if "action_type" in data:
        out["action_type"] = reader.choice("action_type", ACTION_TYPES)
    return out


def _read_llm(reader: SpecReader) -> dict[str, Any]:
    reader.check_keys(LLM_KEYS)
    out: dict[str, Any] = {}
    if "enabled" in reader.data:
        out["enabled"] = reader.boolean("enabled")
    if "model" in reader.data:
        out["model"] = reader.string("model")
    if "max_tokens" in reader.data:
        value = reader.data["max_tokens"]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise reader.error(f"expected a positive integer, got {value!r}", "max_tokens")
        out["max_tokens"] = value
    if "timeout" in reader.data:
        timeout = reader.number("timeout", minimum=0)
        if timeout == 0:
            raise reader.error("must be more than 0 seconds", "timeout")
        out["timeout"] = timeout
    return out
