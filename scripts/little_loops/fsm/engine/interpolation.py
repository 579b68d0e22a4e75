"""Resolve `${namespace.path}` references in actions, evaluators and routes at run time.

Ours is exactly `${` + one of the seven namespaces + `.` + a path + `}`, where the path is
made of names and indices: `${captured.errors.output}`, `${result.details.items[0]}`,
`${context.files.0}`. `$${` is a literal `${`. A `${name.path}` whose name is not one of
the namespaces is an error (bash has no such form, so it is a typo). Everything else
passes through untouched, so bash keeps its own forms: `$VAR`, `$(cmd)`, `${VAR}`,
`${VAR:-default}`, `${#VAR}`, `${VAR/a/b}`. Interpolation only looks values up; it never
evaluates code.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from little_loops.fsm.errors import InterpolationError
from little_loops.fsm.suggest import did_you_mean
from little_loops.fsm.timefmt import format_duration

NAMESPACES: tuple[str, ...] = ("context", "captured", "prev", "result", "state", "loop", "env")

OPEN = "${"
CLOSE = "}"
ESCAPE = "$${"

# The patterns are compiled on first use, not at import: importing this module is on the
# path of every command, and most of them never interpolate.


@cache
def _reference() -> re.Pattern[str]:
    """`$${` (escape) or `${identifier.path}`; the path allows names, dots, [N] and dashes."""
    return re.compile(
        r"\$\$\{|\$\{(?P<ns>[A-Za-z_][A-Za-z0-9_]*)\.(?P<path>[A-Za-z0-9_\-.\[\]]+)\}"
    )


@cache
def _segment() -> re.Pattern[str]:
    """One step of a reference path: a name, or an index `[N]`."""
    return re.compile(r"([^.\[\]]+)|\[(\d+)\]")


# Context values may refer to other context values; this bounds the chain (and cycles).
_MAX_CONTEXT_DEPTH = 10


@dataclass
class InterpolationContext:
    """Everything a `${...}` reference can see while a state runs."""

    context: Mapping[str, Any] = field(default_factory=dict)
    captured: Mapping[str, Any] = field(default_factory=dict)
    prev: Mapping[str, Any] | None = None
    result: Mapping[str, Any] | None = None
    state_name: str = ""
    iteration: int = 0
    loop_name: str = ""
    started_at: str = ""
    elapsed_ms: int = 0
    env: Mapping[str, str] = field(default_factory=lambda: os.environ)

    def namespace(self, name: str) -> Any:
        """The root value of namespace *name*."""
        if name == "context":
            return self.context
        if name == "captured":
            return self.captured
        if name == "prev":
            return self.prev
        if name == "result":
            return self.result
        if name == "state":
            return {"name": self.state_name, "iteration": self.iteration}
        if name == "loop":
            return {
                "name": self.loop_name,
                "started_at": self.started_at,
                "elapsed_ms": self.elapsed_ms,
                "elapsed": format_duration(self.elapsed_ms),
            }
        if name == "env":
            return self.env
        raise InterpolationError(
            f"${{{name}...}}: unknown namespace '{name}' (known: {', '.join(NAMESPACES)})"
        )

    def resolve(self, namespace: str, path: str, _depth: int = 0) -> Any:
        """Look up `${namespace.path}`; raises InterpolationError naming the variable."""
        ref = f"${{{namespace}.{path}}}"
        if namespace not in NAMESPACES:
            hint = did_you_mean(namespace, NAMESPACES) or f" (known: {', '.join(NAMESPACES)})"
            raise InterpolationError(f"{ref}: unknown namespace '{namespace}'{hint}")
        root = self.namespace(namespace)
        segments = parse_path(path, ref)
        if namespace == "prev" and root is None:
            # Before any state has finished there is no previous result: every
            # `${prev.*}` is empty (the convergence evaluator treats that as "first run").
            return ""
        if namespace == "result" and root is None:
            raise InterpolationError(f"{ref}: no evaluation result yet in this state")
        value: Any = root
        walked: list[str] = [namespace]
        for seg in segments:
            value = _step(value, seg, ref, ".".join(walked))
            walked.append(str(seg))
        if namespace == "captured" and len(segments) == 1 and isinstance(value, Mapping):
            # `${captured.X}` is shorthand for `${captured.X.output}`.
            value = value.get("output", "")
        if namespace == "context" and isinstance(value, str) and OPEN in value:
            if _depth >= _MAX_CONTEXT_DEPTH:
                raise InterpolationError(f"{ref}: context values refer to each other in a cycle")
            value = _substitute(value, self, _depth + 1)
        return value


def parse_path(path: str, ref: str) -> list[str | int]:
    """Split `a.b[0].c` into ['a', 'b', 0, 'c']; all-digit names become indices too
    (`items.0`), unless they have a leading zero (`context.010` names the key `010`)."""
    segments: list[str | int] = []
    pos = 0
    for match in _segment().finditer(path):
        between = path[pos : match.start()]
        if between not in ("", "."):
            raise InterpolationError(f"{ref}: malformed path")
        name, index = match.group(1), match.group(2)
        if index is not None:
            segments.append(int(index))
        elif name.isdigit() and str(int(name)) == name:
            segments.append(int(name))  # `010` stays a name: keys are text (`010:`)
        else:
            segments.append(name)
        pos = match.end()
    if not segments or path[pos:] not in ("",) or path.endswith("."):
        raise InterpolationError(f"{ref}: malformed path")
    return segments


def _step(value: Any, seg: str | int, ref: str, where: str) -> Any:
    if isinstance(value, Mapping):
        if seg in value:
            return value[seg]
        if isinstance(seg, int) and str(seg) in value:
            return value[str(seg)]
        raise InterpolationError(f"{ref}: undefined variable ('{seg}' not found in {where})")
    if isinstance(value, list | tuple) and isinstance(seg, int):
        if 0 <= seg < len(value):
            return value[seg]
        raise InterpolationError(
            f"{ref}: undefined variable (index {seg} out of range in {where}, "
            f"which has {len(value)} items)"
        )
    kind = "nothing" if value is None else type(value).__name__
    raise InterpolationError(f"{ref}: undefined variable ({where} is {kind}, not a mapping)")


def to_text(value: Any) -> str:
    """How a resolved value reads inside a string."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, Mapping | list | tuple):
        import json  # only here: `validate` reads no values, and starts faster without it

        return json.dumps(value, default=str)
    return str(value)


def _substitute(text: str, ctx: InterpolationContext, depth: int) -> str:
    def replace(match: re.Match[str]) -> str:
        if match.group(0) == ESCAPE:
            return OPEN
        return to_text(ctx.resolve(match.group("ns"), match.group("path"), depth))

    return _reference().sub(replace, text)


def interpolate(text: str, ctx: InterpolationContext) -> str:
    """Replace every `${namespace.path}` in *text*; `$${` becomes a literal `${`."""
    if "${" not in text:
        return text
    return _substitute(text, ctx, 0)


def interpolate_value(value: Any, ctx: InterpolationContext) -> Any:
    """Interpolate strings inside *value* (recursing into dicts and lists).

    A string that is exactly one reference keeps the referenced value's type, so
    `target: ${context.target}` stays a number.
    """
    if isinstance(value, str):
        match = _reference().fullmatch(value)
        if match is not None and match.group(0) != ESCAPE:
            return ctx.resolve(match.group("ns"), match.group("path"))
        return interpolate(value, ctx)
    if isinstance(value, Mapping):
        return {k: interpolate_value(v, ctx) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate_value(v, ctx) for v in value]
    return value


def interpolate_dict(data: Mapping[str, Any], ctx: InterpolationContext) -> dict[str, Any]:
    """Interpolate every string value of *data*, recursively."""
    return {k: interpolate_value(v, ctx) for k, v in data.items()}


def references(text: str) -> list[tuple[str, str]]:
    """The (namespace, path) pairs *text* refers to, in order; escapes are skipped."""
    matches = _reference().finditer(text)
    return [(m.group("ns"), m.group("path")) for m in matches if m.group(0) != ESCAPE]


# `${` + a namespace name used the way no reference is written: `${captured.}`,
# `${ context.x }`, `${prev.output }`. Bash would get them unchanged. (`${state}` alone
# is left alone: it may well be a bash variable.)
@cache
def _near_miss() -> re.Pattern[str]:
    ns = "(?:" + "|".join(NAMESPACES) + ")"
    return re.compile(r"\$\{(?:\s+" + ns + r"\b[^}\n]*|\s*" + ns + r"\s*\.[^}\n]*)\}")


def near_misses(text: str) -> list[str]:
    """`${...}` spans that name one of our namespaces but are not a valid reference."""
    valid = {m.span() for m in _reference().finditer(text)}
    escaped = {m.start() + 1 for m in _reference().finditer(text) if m.group(0) == ESCAPE}
    return [
        m.group(0)
        for m in _near_miss().finditer(text)
        if m.span() not in valid and m.start() not in escaped
    ]
