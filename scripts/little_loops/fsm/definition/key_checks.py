"""Check a raw loop definition (plain YAML data): keys, types, enums and required fields."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard

from little_loops.fsm.definition.model import (
    ACTION_TYPES,
    CURRENT_STATE_TOKEN,
    DIRECTIONS,
    OPERATORS,
)
from little_loops.fsm.errors import Severity, ValidationError
from little_loops.fsm.evaluators.registry import EVALUATOR_TYPES, SPECS
from little_loops.fsm.evaluators.spec import COMMON_KEYS
from little_loops.fsm.suggest import did_you_mean

KeyPath = tuple[str | int, ...]
# A mapping read from YAML: keys are usually strings, but a file may have any scalar there.
YAMLMapping = Mapping[Any, object]


@dataclass(frozen=True)
class Check:
    """A key's value check: what is wrong with a value (None when it is fine), and the
    JSON Schema fragment that says the same, for the generated fsm-loop-schema.json."""

    find: Callable[[object], str | None]
    json: Mapping[str, Any]

    def __call__(self, value: object) -> str | None:
        return self.find(value)


def _checks(json: Mapping[str, Any]) -> Callable[[Callable[[object], str | None]], Check]:
    """Make the decorated function a Check standing for the JSON Schema *json*."""

    def wrap(find: Callable[[object], str | None]) -> Check:
        return Check(find, json)

    return wrap


# The loop name names files under .loops/.running/, so it must be a plain file name.
# It names files under .loops/.running/, whose names must fit in 255 bytes.
_LOOP_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")
# A capture name is read back as ${captured.NAME}, so it must be one path segment.
_CAPTURE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


def describe(value: object) -> str:
    """How a wrong value reads in a message: `'ten'`, `1.5`, `true`, `null`, `a list`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    return f"a {type(value).__name__}"


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


# --- value checks -------------------------------------------------------------------


@_checks({"type": "string", "minLength": 1})
def _string(value: object) -> str | None:
    if isinstance(value, str) and value.strip():
        return None
    if isinstance(value, str):
        return "expected a non-empty string, got ''"
    if isinstance(value, int | float) and not isinstance(value, bool):
        # `next: 02` reads as the number 2: quoting keeps the text as written.
        return f"expected a string, got the number {describe(value)} (quote it as written)"
    return f"expected a string, got {describe(value)}"


@_checks({"type": "string"})
def _text(value: object) -> str | None:
    """A string that may be empty (an action or prompt of '' is odd but well-formed)."""
    return None if isinstance(value, str) else f"expected a string, got {describe(value)}"


@_checks({"type": "boolean"})
def _boolean(value: object) -> str | None:
    return None if isinstance(value, bool) else f"expected true or false, got {describe(value)}"


@_checks({"type": "object"})
def _mapping(value: object) -> str | None:
    return None if isinstance(value, Mapping) else f"expected a mapping, got {describe(value)}"


@_checks({"type": "object", "required": ["type"], "properties": {"type": {"const": "object"}}})
def _judge_schema(value: object) -> str | None:
    """An llm_structured schema: a mapping whose verdict enum, if any, lists names."""
    if not isinstance(value, Mapping):
        return _mapping(value)
    if value.get("type") != "object":
        return (
            f"expected type: object (the judge answers with an object holding its verdict), "
            f"got type: {describe(value.get('type'))}"
        )
    props = value.get("properties")
    spec = props.get("verdict") if isinstance(props, Mapping) else None
    enum = spec.get("enum") if isinstance(spec, Mapping) else None
    if isinstance(enum, list):
        if not enum:
            return "the verdict enum is empty: list the verdicts the judge may give"
        for item in enum:
            if not isinstance(item, str):
                quote = " (quote it)" if not isinstance(item, list | Mapping) else ""
                return (
                    f"the verdict enum must list names (strings), got {describe(item)}"
                    f"{quote}: the judge's verdict is text, routed by name"
                )
    return None


@_checks({"type": "array", "items": {"type": "string", "minLength": 1}})
def _string_list(value: object) -> str | None:
    if not isinstance(value, list):
        return f"expected a list of strings, got {describe(value)}"
    for item in value:
        if _string(item) is not None:
            return f"expected a list of strings, got {describe(item)} in it"
    return None


def _integer(minimum: int) -> Check:
    def check(value: object) -> str | None:
        if isinstance(value, float) and value.is_integer() and value >= minimum:
            return f"expected a whole number >= {minimum}, got {value!r} (write it as {int(value)})"
        if not isinstance(value, int) or isinstance(value, bool):
            return f"expected a whole number >= {minimum}, got {describe(value)}"
        if value < minimum:
            return f"expected a whole number >= {minimum}, got {value}"
        return None

    return Check(check, {"type": "integer", "minimum": minimum})


def _number(low: float, high: float | None = None, *, above: bool = False) -> Check:
    """A finite int or float, >= low (or > low when *above*), <= high when given."""
    if high is not None:
        want = f"a number from {low:g} to {high:g}"
    else:
        want = f"a number {'>' if above else '>='} {low:g}"

    def check(value: object) -> str | None:
        if _is_number(value) and not math.isfinite(value):
            return f"expected {want} (a finite one), got {value}"
        if not _is_number(value):
            return f"expected {want}, got {describe(value)}"
        too_low = value <= low if above else value < low
        if too_low or (high is not None and value > high):
            return f"expected {want}, got {value}"
        return None

    json: dict[str, Any] = {"type": "number", "exclusiveMinimum" if above else "minimum": low}
    if high is not None:
        json["maximum"] = high
    return Check(check, json)


def _number_or_reference(low: float | None = None) -> Check:
    """A number, a numeric string, or a string with a `${...}` reference resolved at run time."""

    def check(value: object) -> str | None:
        if isinstance(value, str):
            if "${" in value:
                return None
            try:
                value = float(value)
            except ValueError:
                return f"expected a number or a ${{...}} reference, got {describe(value)}"
        if not _is_number(value) or not math.isfinite(value):
            return f"expected a number or a ${{...}} reference, got {describe(value)}"
        if low is not None and value < low:
            return f"expected a number >= {low:g}, got {value}"
        return None

    number: dict[str, Any] = (
        {"type": "number"} if low is None else {"type": "number", "minimum": low}
    )
    return Check(check, {"anyOf": [number, {"type": "string"}]})


@_checks({"type": ["string", "number", "boolean"]})
def _scalar(value: object) -> str | None:
    if isinstance(value, str | int | float | bool):
        return None
    return f"expected a string, number or true/false, got {describe(value)}"


def _one_of(choices: tuple[str, ...]) -> Check:
    def check(value: object) -> str | None:
        if isinstance(value, str) and value in choices:
            return None
        hint = did_you_mean(value, choices) if isinstance(value, str) else ""
        return f"expected one of {', '.join(choices)}, got {describe(value)}{hint}"

    return Check(check, {"enum": list(choices)})


def _pattern(rx: re.Pattern[str], why: str) -> Check:
    def check(value: object) -> str | None:
        problem = _string(value)
        if problem is not None or not isinstance(value, str):
            return problem
        return None if rx.match(value) else f"expected {why}, got {describe(value)}"

    return Check(check, {"type": "string", "pattern": rx.pattern})


def _optional(check: Check) -> Check:
    """null is the same as leaving the key out (for fields whose default is unset)."""

    def optional(value: object) -> str | None:
        return None if value is None else check(value)

    return Check(optional, _nullable(check.json))


def _nullable(json: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON Schema *json* that also accepts null."""
    if "enum" in json:
        return {**json, "enum": [*json["enum"], None]}
    if "anyOf" in json:
        return {**json, "anyOf": [*json["anyOf"], {"type": "null"}]}
    kinds = json["type"] if isinstance(json["type"], list) else [json["type"]]
    return {**json, "type": [*kinds, "null"]}


# --- the keys of each level; tests hold them equal to the dataclass fields -------------

# The paradigm of a loop written directly as states (and of a file with no `paradigm:`).
FSM_PARADIGM = "fsm"

# Loop settings: the one check of each, for FSM files and paradigm specs alike.
LOOP_SETTING_KEYS: dict[str, Check] = {
    "context": _optional(_mapping),
    "scope": _optional(_string_list),
    "max_iterations": _integer(1),
    "backoff": _optional(_number(0)),
    "timeout": _optional(_number(0, above=True)),
    "idle_timeout": _optional(_number(0, above=True)),
    "max_cost_usd": _optional(_number(0, above=True)),
    "maintain": _boolean,
    "llm": _mapping,
}
LOOP_KEYS: dict[str, Check] = {
    "name": _pattern(_LOOP_NAME, "a name of at most 200 letters, digits, '.', '_' and '-'"),
    "initial": _string,
    "states": _mapping,
    "paradigm": _optional(_string),
    **LOOP_SETTING_KEYS,
}
STATE_KEYS: dict[str, Check] = {
    "action": _optional(_text),
    "action_type": _optional(_one_of(ACTION_TYPES)),
    "capture": _optional(_pattern(_CAPTURE_NAME, "a name of letters, digits, '_' and '-'")),
    "timeout": _optional(_number(0, above=True)),
    "idle_timeout": _optional(_number(0, above=True)),
    "evaluate": _optional(_mapping),
    "route": _optional(_mapping),
    "on_success": _optional(_string),
    "on_failure": _optional(_string),
    "on_error": _optional(_string),
    "next": _optional(_string),
    "terminal": _boolean,
    "on_maintain": _optional(_string),
}
EVALUATE_KEYS: dict[str, Check] = {
    "type": _one_of(EVALUATOR_TYPES),
    "operator": _optional(_one_of(OPERATORS)),
    "target": _optional(_scalar),
    "tolerance": _optional(_number_or_reference(0)),
    "pattern": _optional(_string),
    "negate": _boolean,
    "path": _optional(_string),
    "previous": _optional(_text),
    "direction": _one_of(DIRECTIONS),
    "prompt": _optional(_text),
    "schema": _optional(_judge_schema),
    "min_confidence": _number(0, 1),
    "uncertain_suffix": _boolean,
    "source": _optional(_text),
}
LLM_KEYS: dict[str, Check] = {
    "enabled": _boolean,
    "model": _string,
    "max_tokens": _integer(1),
    "timeout": _number(0, above=True),
}

REQUIRED_LOOP_KEYS: tuple[str, ...] = ("name", "initial", "states")
# What the target of an evaluator that compares numbers must be.
NUMERIC_TARGET = _number_or_reference()


class _Checker:
    """Walks one definition, collecting problems with their key paths."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        name = data.get("name")
        self.loop = name if isinstance(name, str) and name else None
        self.problems: list[ValidationError] = []

    def add(
        self, path: KeyPath, message: str, severity: Severity = "error", key: str | None = None
    ) -> None:
        self.problems.append(ValidationError.at(self.loop, path, message, severity, key))

    def keys(self, data: YAMLMapping, path: KeyPath, allowed: dict[str, Check]) -> None:
        """Unknown keys and the type of each known one."""
        for key, value in data.items():
            if not isinstance(key, str) or key not in allowed:
                word = str(key)
                hint = did_you_mean(word, allowed) or f" (allowed: {', '.join(allowed)})"
                self.add((*path, word), f"unknown key{hint}")
                continue
            problem = allowed[key](value)
            if problem is not None:
                self.add((*path, key), problem)

    def required(self, data: YAMLMapping, path: KeyPath, keys: tuple[str, ...]) -> None:
        for key in keys:
            if data.get(key) is None:
                self.add(path, f"missing required key '{key}'", key=key)

    def loop_level(self, data: YAMLMapping) -> None:
        self.keys(data, (), LOOP_KEYS)
        self.required(data, (), REQUIRED_LOOP_KEYS)
        states = data.get("states")
        if isinstance(states, Mapping):
            self.states(states)
        self.llm(data)

    def llm(self, data: YAMLMapping) -> None:
        llm = data.get("llm")
        if isinstance(llm, Mapping):
            self.keys(llm, ("llm",), LLM_KEYS)

    def states(self, states: YAMLMapping) -> None:
        if not states:
            self.add(("states",), "expected at least one state")
        for name, state in states.items():
            path: KeyPath = ("states", str(name))
            if not isinstance(name, str):
                self.add(path, f"a state name must be a string, got {describe(name)} (quote it)")
                continue
            if name == CURRENT_STATE_TOKEN:
                self.add(path, f"'{name}' means 'this state again' and cannot name a state")
            if not isinstance(state, Mapping):
                self.add(path, f"expected a mapping of state settings, got {describe(state)}")
                continue
            self.keys(state, path, STATE_KEYS)
            if isinstance(state.get("evaluate"), Mapping):
                self.evaluate(state["evaluate"], (*path, "evaluate"))
            if isinstance(state.get("route"), Mapping):
                self.route(state["route"], (*path, "route"))

    def evaluate(self, data: YAMLMapping, path: KeyPath) -> None:
        self.keys(data, path, EVALUATE_KEYS)
        self.required(data, path, ("type",))
        kind = data.get("type")
        if not isinstance(kind, str) or kind not in SPECS:
            return  # a wrong type was reported by keys(); a list or map is not even hashable
        spec = SPECS[kind]
        needed = spec.required
        for key in needed:
            if data.get(key) is None:
                others = " and ".join(needed)
                self.add(
                    path,
                    f"missing required key '{key}' (the {kind} evaluator needs {others})",
                    key=key,
                )
        for unused in data:
            if unused in EVALUATE_KEYS and unused not in (*spec.keys, *COMMON_KEYS):
                self.add((*path, str(unused)), f"not used by the {kind} evaluator", "warning")
        target = data.get("target")
        if spec.numeric_target and target is not None:
            problem = NUMERIC_TARGET(target)
            if problem is not None and _scalar(target) is None:
                self.add((*path, "target"), problem)

    def route(self, data: YAMLMapping, path: KeyPath) -> None:
        if not data:
            self.add(path, "expected at least one 'verdict: state' entry")
        for verdict, target in data.items():
            if not isinstance(verdict, str):
                self.add(
                    (*path, str(verdict)),
                    f"a verdict must be a string, got {describe(verdict)} (quote it)",
                )
                continue
            if not verdict:
                self.add((*path, verdict), "a verdict must be a non-empty string")
            problem = _string(target)
            if problem is not None:
                self.add((*path, verdict), problem.replace("a string", "a state name", 1))


def check_definition(data: Mapping[str, Any]) -> list[ValidationError]:
    """Every problem in the raw definition *data*, in document order."""
    checker = _Checker(data)
    checker.loop_level(data)
    return checker.problems


def check_loop_settings(
    data: Mapping[str, Any], checks: Mapping[str, Check] = LOOP_SETTING_KEYS
) -> list[ValidationError]:
    """Problems in the loop settings of *data* (`checks` names them); other keys are skipped.

    Paradigm specs use this, so a wrong setting reads the same in a spec as in an FSM file.
    """
    checker = _Checker(data)
    checker.keys({key: value for key, value in data.items() if key in checks}, (), dict(checks))
    checker.llm(data)
    return checker.problems
