"""A mapping-valued key checked as one value: its keys known, each value checked."""

from __future__ import annotations

from collections.abc import Mapping

from little_loops.fsm.facts.suggest import did_you_mean
from little_loops.fsm.values.value_checks import Check, UnknownKey, describe


def block_problem(value: object, allowed: Mapping[str, Check], where: str = "") -> str | None:
    """The first problem of the mapping *value* whose keys must be in *allowed* (*where*: the
    path shown before a key, such as `repeated_failure > `)."""
    if not isinstance(value, Mapping):
        return f"{where}expected a mapping, got {describe(value)}"
    for key, item in value.items():
        if not isinstance(key, str) or key not in allowed:
            hint = did_you_mean(str(key), tuple(allowed)) or f" (allowed: {', '.join(allowed)})"
            return UnknownKey(f"unknown key {where}{key}{hint}")
        problem = allowed[key](item)
        if problem is not None:
            return f"{where}{key}: {problem}"
    return None


def keyed_block(allowed: Mapping[str, Check]) -> Check:
    """A check of a mapping with the keys of *allowed* (null: left out)."""
    properties = {key: check.json for key, check in allowed.items()}
    schema = {"type": ["object", "null"], "properties": properties, "additionalProperties": False}
    return Check(lambda value: None if value is None else block_problem(value, allowed), schema)
