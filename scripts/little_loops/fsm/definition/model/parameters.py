"""A loop's `parameters:`: typed, declared context keys, their checks and their values' types."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast, get_args

from little_loops.fsm.definition.model.key_row import LOOP, Key
from little_loops.fsm.values.value_checks import Check, describe, optional

ParameterType = Literal["string", "integer", "number", "boolean", "path", "list"]
PARAMETER_TYPES: tuple[str, ...] = get_args(ParameterType)
# The keys of a parameter written as a mapping (its long form).
PARAMETER_KEYS: tuple[str, ...] = (
    "type",
    "default",
    "required",
    "description",
    "choices",
    "values",  # little-loops' spelling of choices
)
# Keys that are another spelling of one above.
PARAMETER_ALIASES: dict[str, str] = {"values": "choices"}
# A parameter is read as ${context.NAME}, so its name is one path segment of a reference.
PARAMETER_NAME = r"^[A-Za-z_][A-Za-z0-9_-]*$"
PARAMETER_NAME_RULE = "letters, digits, '_' and '-', not starting with a digit or '-'"

_TRUE = ("true", "yes", "1")
_FALSE = ("false", "no", "0")
# Compiled on first use (importing this is on every command's path). ASCII digits only (int()
# and float() also take `１２` and `1_000`), and at most 4000 of them (int() refuses 4300+).
_WHOLE = r"^[+-]?[0-9]{1,4000}$"
_NUMBER = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"
# What each type expects, as a message says it.
_EXPECTED: dict[str, str] = {
    "string": "a string",
    "path": "a path (a non-empty string)",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false (yes/no, 1/0)",
    "list": "a list (on the command line: items separated by commas)",
}

ParamPath = tuple[str | int, ...]


@dataclass(frozen=True)
class ParameterSpec:
    """One declared parameter: its type, its default (None: it must be given, unless it is
    optional), and help."""

    type: ParameterType = "string"
    default: Any = None
    description: str | None = None
    choices: tuple[Any, ...] | None = None
    optional: bool = False  # `required: false` and no default: a run may leave it out

    @property
    def required(self) -> bool:
        """A parameter without a default must be given on every run, unless optional."""
        return self.default is None and not self.optional

    def run_default(self) -> Any:
        """The default a run starts with: a copy of a list, so a run never changes the loop's."""
        return list(self.default) if isinstance(self.default, list) else self.default

    @classmethod
    def from_raw(cls, raw: object, context_value: Any = None) -> ParameterSpec:
        """The spec a (checked) `parameters:` entry stands for: `integer`, or a mapping. A
        value of the same name under `context:` is its default when it has none."""
        data: Mapping[Any, Any] = raw if isinstance(raw, Mapping) else {"type": raw}
        kind = _type(data.get("type", "string"))
        if isinstance(context_value, str):  # as if typed on the command line: `yes`, `3`
            context_value = _from_text(kind, context_value)
        choices = data.get("choices", data.get("values"))
        default = data.get("default")
        return cls(
            type=kind,
            default=context_value if default is None else default,
            description=data.get("description"),
            choices=tuple(choices) if isinstance(choices, list) else None,
            optional=data.get("required") is False,
        )

    def to_dict(self) -> dict[str, Any]:
        """The long form, without the keys left at their defaults."""
        out: dict[str, Any] = {"type": self.type}
        if self.default is not None:
            out["default"] = self.default
        if self.description is not None:
            out["description"] = self.description
        if self.choices is not None:
            out["choices"] = list(self.choices)
        if self.optional and self.default is None:
            out["required"] = False
        return out

    def summary(self) -> str:
        """`integer, required` or `list, default a,b; one of: x, y, z` (help and plan)."""
        given = "optional" if self.default is None else f"default {show(self.default)}"
        parts = [self.type, "required" if self.required else given]
        text = ", ".join(parts)
        if self.choices:
            text += "; one of: " + ", ".join(show(choice) for choice in self.choices)
        return text


def _type(raw: object) -> ParameterType:
    return cast(ParameterType, raw) if raw in PARAMETER_TYPES else "string"


def parse_parameters(raw: object, context: object = None) -> dict[str, ParameterSpec]:
    """The specs of a checked `parameters:` mapping, in declared order; a parameter also
    under *context* (the loop's `context:`) has that value as its default when it has none."""
    if not isinstance(raw, Mapping):
        return {}
    values = context if isinstance(context, Mapping) else {}
    return {str(name): ParameterSpec.from_raw(spec, values.get(name)) for name, spec in raw.items()}


def show(value: Any) -> str:
    """A value as a person types it: `123`, `true`, `a,b` for a list."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(show(item) for item in value)
    return str(value)


# --- the type of a value ------------------------------------------------------------


def coerce(kind: str, value: object, *, text: bool = False) -> Any:
    """*value* as a value of type *kind*; raises ValueError saying what was expected.

    With *text* (a value typed on the command line) it is converted first: `123` to an
    integer, `yes` to true, `a,b` to a list. Other values (from a context file, a saved run
    or the loop file) must have the type already: `"12"` in a JSON file is no integer.
    """
    converted = _from_text(kind, value) if text and isinstance(value, str) else value
    if _fits(kind, converted):
        return converted
    raise ValueError(f"expected {_EXPECTED.get(kind, kind)}, got {describe(value)}")


def _from_text(kind: str, text: str) -> Any:
    if kind == "integer":
        return int(text) if re.match(_WHOLE, text.strip()) else text
    if kind == "number":
        if re.match(_WHOLE, text.strip()):
            return int(text)
        return float(text) if re.match(_NUMBER, text.strip()) else text
    if kind == "boolean":
        word = text.strip().lower()
        return True if word in _TRUE else False if word in _FALSE else text
    if kind == "list":
        return [item.strip() for item in text.split(",") if item.strip()]
    return text


def _fits(kind: str, value: object) -> bool:
    if kind in ("string", "path"):
        return isinstance(value, str) and (kind == "string" or bool(value.strip()))
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and (isinstance(value, int) or math.isfinite(value))
        )
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "list":
        return isinstance(value, list) and all(_scalar(item) for item in value)
    return False


def _scalar(value: object) -> bool:
    return isinstance(value, str | int | float) and not (
        isinstance(value, float) and not math.isfinite(value)
    )


def check_value(spec: ParameterSpec, value: object, *, text: bool = False) -> Any:
    """*value* typed for *spec* (converted from *text*, see coerce), and one of its choices;
    raises ValueError saying why not."""
    typed = coerce(spec.type, value, text=text)
    if spec.choices is not None:
        items = typed if isinstance(typed, list) else [typed]
        for item in items:
            if item not in spec.choices:
                allowed = ", ".join(show(choice) for choice in spec.choices)
                raise ValueError(f"expected one of {allowed}, got {describe(item)}")
    return typed


# --- checks of the `parameters:` key (validate) ---------------------------------------


def _shape(value: object) -> str | None:
    if isinstance(value, Mapping):
        return None
    return f"expected a mapping of parameter names to types or settings, got {describe(value)}"


_ENTRY_JSON: dict[str, Any] = {
    "oneOf": [
        # The short form: a type (`ll-loop validate` names a wrong one with did-you-mean).
        {"type": "string", "description": "The type: " + ", ".join(PARAMETER_TYPES) + "."},
        {"type": "null", "description": "Nothing: a required string."},
        {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "type": {"enum": list(PARAMETER_TYPES), "description": "The value's type."},
                "default": {"description": "The value when none is given; not required then."},
                "required": {
                    "type": "boolean",
                    "description": "true when it must be given (the default without `default`).",
                },
                "description": {
                    "type": "string",
                    "description": "What it is, for `ll-loop run NAME --help` and --dry-run.",
                },
                "choices": {
                    "type": "array",
                    "minItems": 1,
                    "description": "The values it may take.",
                },
                "values": {
                    "type": "array",
                    "minItems": 1,
                    "description": "Another spelling of choices.",
                },
            },
        },
    ]
}
PARAMETERS_CHECK = Check(
    _shape,
    {
        "type": "object",
        "propertyNames": {"pattern": PARAMETER_NAME},
        "additionalProperties": _ENTRY_JSON,
    },
)
# The loop's `parameters:`, one row (FSMLoop.parameters holds each one's ParameterSpec).
KEYS: tuple[Key, ...] = (
    Key(
        "parameters",
        (LOOP,),
        optional(PARAMETERS_CHECK),
        "Typed context keys a run gives values to (`ll-loop run NAME VALUE... --set "
        "KEY=VALUE`), read as ${context.NAME}: each a type, or a mapping of type, default, "
        "required, description and choices.",
        default={},
    ),
)


def parameter_problems(
    raw: Mapping[Any, object], context: object
) -> Iterator[tuple[ParamPath, str]]:
    """Each problem of a `parameters:` mapping, as (path under `parameters`, message)."""
    from little_loops.fsm.facts.suggest import did_you_mean

    for name, entry in raw.items():
        if not isinstance(name, str) or not re.match(PARAMETER_NAME, name):
            yield (str(name),), f"a parameter name must be {PARAMETER_NAME_RULE}"
            continue
        if isinstance(entry, str):
            if entry not in PARAMETER_TYPES:
                hint = (
                    did_you_mean(entry, PARAMETER_TYPES)
                    or f" (types: {', '.join(PARAMETER_TYPES)})"
                )
                yield (name,), f"unknown type {entry!r}{hint}"
            continue
        if entry is None:
            continue  # `name:` alone: a required string
        if not isinstance(entry, Mapping):
            yield (name,), f"expected a type or a mapping of settings, got {describe(entry)}"
            continue
        yield from _entry_problems(name, entry)


def _entry_problems(name: str, entry: Mapping[Any, object]) -> Iterator[tuple[ParamPath, str]]:
    from little_loops.fsm.facts.suggest import did_you_mean

    for key in entry:
        if key not in PARAMETER_KEYS:
            hint = (
                did_you_mean(str(key), PARAMETER_KEYS) or f" (allowed: {', '.join(PARAMETER_KEYS)})"
            )
            yield (name, str(key)), f"unknown key{hint}"
    kind = entry.get("type", "string")
    if kind not in PARAMETER_TYPES:
        word = str(kind) if isinstance(kind, str) else ""
        yield (name, "type"), f"unknown type {describe(kind)}{_type_hint(word)}"
        return
    required = entry.get("required")
    default = entry.get("default")
    if required is not None and not isinstance(required, bool):
        yield (name, "required"), f"expected true or false, got {describe(required)}"
    elif required is True and default is not None:
        yield (name, "required"), "a parameter with a default is not required: drop one of them"
    if "choices" in entry and "values" in entry:
        yield (name, "values"), "values is another spelling of choices: give one of them"
    description = entry.get("description")
    if description is not None and not isinstance(description, str):
        yield (name, "description"), f"expected a string, got {describe(description)}"
    spelled = "choices" if "choices" in entry else "values"
    choices = entry.get(spelled)
    if choices is not None:
        problem = _choices_problem(str(kind), choices)
        if problem is not None:
            yield (name, spelled, *problem[0]), problem[1]
            choices = None
    if default is None:
        return
    spec = ParameterSpec(
        type=_type(kind), choices=tuple(choices) if isinstance(choices, list) else None
    )
    try:
        check_value(spec, default)
    except ValueError as exc:
        yield (name, "default"), str(exc)


def _type_hint(word: str) -> str:
    from little_loops.fsm.facts.suggest import did_you_mean

    return did_you_mean(word, PARAMETER_TYPES) or f" (types: {', '.join(PARAMETER_TYPES)})"


def _choices_problem(kind: str, choices: object) -> tuple[ParamPath, str] | None:
    """What is wrong with `choices:` of a *kind* parameter: each must be a value of it (a
    string, for a list: its items come from the command line as text)."""
    if choices == []:
        return (), "expected at least one value"
    if not isinstance(choices, list):
        return (), f"expected a list of values, got {describe(choices)}"
    item_kind = "string" if kind == "list" else kind
    for index, choice in enumerate(choices):
        try:
            coerce(item_kind, choice)
        except ValueError as exc:
            return (index,), str(exc)
    return None
