"""Our stricter checks, relaxed: each problem gets its fix; `*_ok` flags and `--compat` apply.

A problem of a stricter check (`lint_flags.STRICTER`) says how to fix it in the same line.
A loop's true `*_ok` flag drops the problems of the check it names (`lint_flags.CHECKS`);
`--compat` keeps them as warnings, so a loop written for little-loops runs as written.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from little_loops.fsm.definition.lint_flags import (
    CHECKS,
    FIX,
    STRICTER,
    UNKNOWN_EVALUATE_KEY,
    silenced,
)
from little_loops.fsm.facts.errors import ValidationError

_UNKNOWN_KEY = "unknown key"


def check_of(problem: ValidationError) -> str | None:
    """The stricter check *problem* comes from (an unknown key of an `evaluate:` mapping is
    one: key_checks reports it as any unknown key)."""
    path = problem.path
    if problem.check is None and len(path) == 4 and path[0] == "states" and path[2] == "evaluate":
        return UNKNOWN_EVALUATE_KEY if problem.message.startswith(_UNKNOWN_KEY) else None
    return problem.check


def flags_of(data: Mapping[str, Any]) -> dict[str, bool]:
    """The `*_ok` flags a raw loop definition sets (a wrong value is key_checks' to name)."""
    return {flag: data[flag] for flag in CHECKS if isinstance(data.get(flag), bool)}


def relaxed(
    problems: list[ValidationError], flags: Mapping[str, bool], compat: bool = False
) -> list[ValidationError]:
    """*problems* with each stricter check's fix added, those a flag silences dropped, and
    (with *compat*) the rest of them warnings."""
    quiet = silenced(dict(flags))
    out: list[ValidationError] = []
    for problem in problems:
        check = check_of(problem)
        if check is None:
            out.append(problem)
            continue
        if check in quiet:
            continue
        message = problem.message + FIX.format(fix=STRICTER[check])
        severity = "warning" if compat else problem.severity
        out.append(dataclasses.replace(problem, message=message, severity=severity, check=check))
    return out
