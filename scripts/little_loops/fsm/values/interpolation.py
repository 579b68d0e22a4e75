"""Resolve `${namespace.path}` references in actions, evaluators and routes at run time.

Ours is exactly `${` + one of the seven namespaces + `.` + a path + `}`, where the path is
made of names and indices: `${captured.errors.output}`, `${result.details.items[0]}`,
`${context.files.0}`; a modifier may end it (`${context.x:default=1}`, modifiers.py).
`$${` is a literal `${`. A `${name.path}` whose name is not one of the namespaces is an
error (bash has no such form, so it is a typo). Everything else passes through untouched,
so bash keeps its own forms: `$VAR`, `$(cmd)`, `${VAR}`, `${VAR:-default}`, `${#VAR}`,
`${VAR/a/b}`. Interpolation only looks values up; it never evaluates code.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from little_loops.fsm.facts.errors import InterpolationError
from little_loops.fsm.facts.suggest import did_you_mean
from little_loops.fsm.facts.timefmt import format_duration
from little_loops.fsm.values.modifiers import modified
from little_loops.fsm.values.modifiers import to_text as to_text
from little_loops.fsm.values.references import (
    ESCAPE,
    NAMESPACES,
    OPEN,
    found,
    parse_path,
    whole,
)

# Context values may refer to other context values. With its references filled in, one may
# be at most MAX_CONTEXT_SIZE characters, through at most MAX_CONTEXT_DEPTH nested context
# values; past either, or round a cycle, is an error (`validate` reports it too).
MAX_CONTEXT_SIZE = 1024 * 1024
MAX_CONTEXT_DEPTH = 32


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
    # little-loops' reading (`--compat`, an action's text): `${prev.*}` before any previous
    # result is an error there, not empty.
    prev_required: bool = False

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

    def resolve(self, namespace: str, path: str) -> Any:
        """Look up `${namespace.path}`; raises InterpolationError naming the variable."""
        return Expansion(self).resolve(namespace, path)

    def lookup(self, namespace: str, path: str) -> Any:
        """The value `${namespace.path}` names, as it is (context references not filled in)."""
        ref = f"${{{namespace}.{path}}}"
        if namespace not in NAMESPACES:
            hint = did_you_mean(namespace, NAMESPACES) or f" (known: {', '.join(NAMESPACES)})"
            raise InterpolationError(f"{ref}: unknown namespace '{namespace}'{hint}")
        root = self.namespace(namespace)
        segments = parse_path(path, ref)
        if namespace == "prev" and root is None:
            if self.prev_required:
                raise InterpolationError(f"{ref}: no previous state result yet")
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
        return value


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


class Expansion:
    """One interpolation: each context value it meets is filled in once, within the limits."""

    def __init__(self, ctx: InterpolationContext) -> None:
        self.ctx = ctx
        self.done: dict[str, str] = {}  # a context value's text -> filled in
        self.open: dict[str, int] = {}  # texts being filled in -> their place in `paths`
        self.paths: list[str] = []  # the context paths being filled in, outermost first

    def resolve(self, namespace: str, path: str) -> Any:
        value = self.ctx.lookup(namespace, path)
        if namespace == "context" and isinstance(value, str) and OPEN in value:
            return self.context_value(path, value)
        if namespace == "context" and isinstance(value, list | Mapping) and _escapes(value):
            return _unescaped(value)  # (else the value itself: a lone reference keeps it)
        return value

    def modified(self, match: re.Match[str], *, quote: bool = True) -> Any:
        """The value of the reference *match*, its modifier (if any) applied."""
        return modified(
            match, lambda: self.resolve(match.group("ns"), match.group("path")), quote=quote
        )

    def context_value(self, path: str, text: str) -> str:
        done = self.done.get(text)
        if done is not None:
            return done
        if text in self.open:
            raise InterpolationError(_cycle_message([*self.paths[self.open[text] :], path]))
        if len(self.paths) >= MAX_CONTEXT_DEPTH:
            # Too deep, unless the values go on round a cycle: then say so.
            failure = _Measure(self.ctx.context).failure(path, text)
            cycle = failure is not None and failure[1] == _CYCLE
            message = failure[2] if failure is not None and cycle else None
            raise InterpolationError(message or _depth_message(self.paths[0]))
        self.open[text] = len(self.paths)
        self.paths.append(path)
        try:
            filled = self.substitute(text, path)
        finally:
            del self.open[text]
            self.paths.pop()
        self.done[text] = filled
        return filled

    def substitute(
        self,
        text: str,
        context_path: str | None = None,
        render: Callable[[re.Match[str], Any], str] | None = None,
    ) -> str:
        """*text* with its references filled in, each value written by *render* (default:
        `to_text`); a context value's must stay in the limit."""
        parts: list[str] = []
        size = pos = 0
        for match in found(text):
            if match.group(0) == ESCAPE:
                piece = OPEN
            else:
                value = self.modified(match)
                piece = to_text(value) if render is None else render(match, value)
            parts += (text[pos : match.start()], piece)
            size += match.start() - pos + len(piece)
            pos = match.end()
        parts.append(text[pos:])
        # Checked before the join: until then the pieces are only referred to.
        if context_path is not None and size + len(text) - pos > MAX_CONTEXT_SIZE:
            raise InterpolationError(_size_message(context_path))
        return "".join(parts)


def interpolate(text: str, ctx: InterpolationContext) -> str:
    """Replace every `${namespace.path}` in *text*; `$${` becomes a literal `${`."""
    if "${" not in text:
        return text
    return Expansion(ctx).substitute(text)


def literal(value: Any) -> Any:
    """*value* as data: each `${` in its text (also inside lists and mappings, whose items
    `${context.KEY.0}` fills in) written `$${`, which interpolation reads as a literal `${`."""
    if isinstance(value, str):
        return value.replace(OPEN, ESCAPE)
    if isinstance(value, list):
        return [literal(item) for item in value]
    if isinstance(value, Mapping):
        return {key: literal(item) for key, item in value.items()}
    return value


def _escapes(value: Any) -> bool:
    """True when a text in *value* (a list or mapping, at any depth) holds a `$${`."""
    if isinstance(value, str):
        return ESCAPE in value
    items = value.values() if isinstance(value, Mapping) else value
    return isinstance(value, list | Mapping) and any(_escapes(item) for item in items)


def _unescaped(value: Any) -> Any:
    """A whole list or mapping from the context as it reads: each `$${` a literal `${`
    (its items' other references are not filled in: only `${context.KEY.0}` fills one)."""
    if isinstance(value, str):
        return value.replace(ESCAPE, OPEN)
    if isinstance(value, list):
        return [_unescaped(item) for item in value]
    if isinstance(value, Mapping):
        return {key: _unescaped(item) for key, item in value.items()}
    return value


def interpolate_value(value: Any, ctx: InterpolationContext) -> Any:
    """Interpolate strings inside *value* (recursing into dicts and lists).

    A string that is exactly one reference keeps the referenced value's type, so
    `target: ${context.target}` stays a number.
    """
    if isinstance(value, str):
        match = whole(value)
        if match is not None:
            return Expansion(ctx).modified(match)
        return interpolate(value, ctx)
    if isinstance(value, Mapping):
        return {k: interpolate_value(v, ctx) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate_value(v, ctx) for v in value]
    return value


def interpolate_dict(data: Mapping[str, Any], ctx: InterpolationContext) -> dict[str, Any]:
    """Interpolate every string value of *data*, recursively."""
    return {k: interpolate_value(v, ctx) for k, v in data.items()}


# -- limits on context values -----------------------------------------------------------------

_CYCLE, _DEEP, _BIG = "cycle", "deep", "big"
# Why a context value cannot be filled in: where it starts, the kind, the message.
Failure = tuple[str, str, str]


def _cycle_message(paths: list[str]) -> str:
    cycle = " → ".join(paths)
    return f"${{context.{paths[0]}}}: context values refer to each other in a cycle ({cycle})"


def _depth_message(path: str) -> str:
    deep = f"more than {MAX_CONTEXT_DEPTH} deep (the limit)"
    return f"${{context.{path}}}: context values refer to context values {deep}"


def _size_message(path: str) -> str:
    long = f"longer than {MAX_CONTEXT_SIZE:,} characters (the limit)"
    return f"${{context.{path}}}: filled in, this context value is {long}"


class _Measure:
    """The size and depth of context values filled in, worked out without filling them in.

    References to other namespaces count as empty (they are only known at run time), so
    a size is the least the value can have. Each value is measured once.
    """

    def __init__(self, context: Mapping[str, Any]) -> None:
        self.context = context
        self.sized: dict[str, tuple[int, int]] = {}  # text -> (size, depth)
        self.failed: dict[str, Failure] = {}

    def lookup(self, path: str) -> Any:
        try:
            return InterpolationContext(context=self.context).lookup("context", path)
        except InterpolationError:
            return None  # graph_checks names a missing key

    def parts(self, text: str) -> tuple[int, list[tuple[str, str]]]:
        """The characters *text* has of its own, and the context values it refers to."""
        own = len(text)
        inner: list[tuple[str, str]] = []
        for match in found(text):
            own -= len(match.group(0))
            if match.group(0) == ESCAPE:
                own += len(OPEN)
            elif match.group("ns") == "context":
                value = self.lookup(match.group("path"))
                if isinstance(value, str) and OPEN in value:
                    inner.append((match.group("path"), value))
                elif value is not None:
                    own += len(to_text(value))
        return own, inner

    def failure(self, path: str, text: str) -> Failure | None:
        """Why the context value *text* (at *path*) cannot be filled in, or None."""
        # Depth first without recursion: a frame is [path, text, own size, inner, next].
        stack: list[list[Any]] = []
        on_stack: dict[str, int] = {}

        def enter(path: str, text: str) -> None:
            on_stack[text] = len(stack)
            stack.append([path, text, *self.parts(text), 0])

        if text not in self.sized and text not in self.failed:
            enter(path, text)
        while stack:
            frame = stack[-1]
            inner = frame[3]
            if frame[4] < len(inner):
                kid_path, kid = inner[frame[4]]
                frame[4] += 1
                if kid in on_stack:
                    members = stack[on_stack[kid] :]
                    found = (
                        members[0][0],
                        _CYCLE,
                        _cycle_message([*(m[0] for m in members), kid_path]),
                    )
                    for member in members:
                        self.failed.setdefault(member[1], found)
                elif kid not in self.sized and kid not in self.failed:
                    enter(kid_path, kid)
                continue
            stack.pop()
            del on_stack[frame[1]]
            if frame[1] not in self.failed:
                self.finish(*frame[:4])
        return self.failed.get(text)

    def finish(self, path: str, text: str, own: int, inner: list[tuple[str, str]]) -> None:
        size, depth = own, 0
        for _, kid in inner:
            if kid in self.failed:
                self.failed[text] = self.failed[kid]
                return
            kid_size, kid_depth = self.sized[kid]
            size += kid_size
            depth = max(depth, kid_depth)
        depth += 1
        if depth > MAX_CONTEXT_DEPTH:
            self.failed[text] = (path, _DEEP, _depth_message(path))
        elif size > MAX_CONTEXT_SIZE:
            self.failed[text] = (path, _BIG, _size_message(path))
        else:
            self.sized[text] = (size, depth)


def context_problems(context: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The context values that cannot be filled in, as (path, one-line message): past
    MAX_CONTEXT_SIZE or MAX_CONTEXT_DEPTH, or round a cycle; each cause once, where it starts."""
    measure = _Measure(context)
    found: dict[str, str] = {}
    for key, value in context.items():
        if isinstance(value, str) and OPEN in value:
            failure = measure.failure(str(key), value)
            if failure is not None:
                found.setdefault(failure[0], failure[2])
    return list(found.items())
