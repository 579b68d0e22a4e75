"""The invariants paradigm: check each constraint in turn, fixing the one that fails."""

from __future__ import annotations

import re
from typing import Any

from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.paradigms.assemble import build, loop_settings
from little_loops.fsm.paradigms.spec import LOOP_SETTINGS, SpecReader

ALL_VALID = "all_valid"
INVARIANTS_KEYS = ("paradigm", "name", "constraints", *LOOP_SETTINGS)
CONSTRAINT_KEYS = ("name", "check", "fix")


def constraint_state_suffix(name: str) -> str:
    """The part of `check_<x>` / `fix_<x>` taken from a constraint name.

    Lowercased, every run of characters other than letters and digits becomes `_`:
    `tests-pass` -> `tests_pass`, `Lint clean` -> `lint_clean`.
    """
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def compile_invariants(spec: dict[str, Any]) -> FSMLoop:
    """`check_<a> -> (success: check_<b> | failure: fix_<a>)`, `fix_<a> -> check_<a>`, ...

    The last check succeeds into `all_valid`, which is terminal and, with `maintain: true`,
    restarts at the first check (`on_maintain`).
    """
    reader = SpecReader("paradigm 'invariants'", spec)
    reader.check_keys(INVARIANTS_KEYS)
    name = reader.string("name")
    suffixes: list[str] = []
    pairs: list[tuple[str, str]] = []
    seen: dict[str, str] = {}
    for index, item in enumerate(reader.items("constraints")):
        constraint = reader.item("constraints", index, item)
        constraint.check_keys(CONSTRAINT_KEYS)
        label = constraint.string("name")
        suffix = constraint_state_suffix(label)
        if not suffix:
            raise constraint.error(f"'{label}' has no letters or digits to name a state", "name")
        if suffix in seen:
            raise constraint.error(
                f"'{label}' gives the same state names as constraint '{seen[suffix]}'"
                f" (check_{suffix}, fix_{suffix})",
                "name",
            )
        seen[suffix] = label
        suffixes.append(suffix)
        pairs.append((constraint.string("check"), constraint.string("fix")))
    settings = loop_settings(reader, name)
    states: dict[str, dict[str, Any]] = {}
    for index, (suffix, (check, fix)) in enumerate(zip(suffixes, pairs, strict=True)):
        following = f"check_{suffixes[index + 1]}" if index + 1 < len(suffixes) else ALL_VALID
        states[f"check_{suffix}"] = {
            "action": check,
            "on_success": following,
            "on_failure": f"fix_{suffix}",
        }
        states[f"fix_{suffix}"] = {"action": fix, "next": f"check_{suffix}"}
    first = f"check_{suffixes[0]}"
    states[ALL_VALID] = {"terminal": True}
    if settings.get("maintain"):
        states[ALL_VALID]["on_maintain"] = first
    return build(reader, "invariants", name, first, states, settings)
