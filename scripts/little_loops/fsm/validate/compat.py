"""Our stricter checks, relaxed: each problem gets its fix; `*_ok` flags and `--compat` apply.

A problem of a stricter check (`lint_flags.STRICTER`) says how to fix it in the same line.
A loop's true `*_ok` flag drops the problems of the check it names (`lint_flags.CHECKS`);
`--compat` keeps them as warnings, so a loop written for little-loops runs as written.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping
from typing import Any

from little_loops.fsm.definition.model.lint_flags import CHECKS, FIX, STRICTER, silenced
from little_loops.fsm.facts.errors import ValidationError
from little_loops.fsm.values.references import OPEN

AGENT_KEY = "agent"
CLAUDE_KEY = "claude"


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
        check = problem.check  # the check that made it says so (ValidationError.check)
        if check is None:
            out.append(problem)
            continue
        if check in quiet:
            continue
        fix = STRICTER[check]
        message = problem.message + (FIX.format(fix=fix) if fix else "")
        severity = "warning" if compat else problem.severity
        out.append(dataclasses.replace(problem, message=message, severity=severity))
    return out


def as_claude_subagents(data: Mapping[str, Any], agents: Collection[str]) -> dict[str, Any]:
    """*data* with each state's `agent: NAME` that names none of *agents* read as little-loops
    reads it, Claude Code's subagent: `claude: {agent: NAME}` (for `--compat`)."""
    states = data.get("states")
    if not isinstance(states, Mapping):
        return dict(data)
    out: dict[str, Any] = {}
    for name, state in states.items():
        value = state.get(AGENT_KEY) if isinstance(state, Mapping) else None
        if not isinstance(value, str) or value in agents or OPEN in value:
            out[name] = state
            continue
        claude = state.get(CLAUDE_KEY)
        options = {**(claude if isinstance(claude, Mapping) else {}), AGENT_KEY: value}
        out[name] = {k: v for k, v in state.items() if k != AGENT_KEY} | {CLAUDE_KEY: options}
    return {**data, "states": out}
