"""The syntax of `${namespace.path}` references: finding them, their paths, near misses."""

from __future__ import annotations

import re
from functools import cache, lru_cache

from little_loops.fsm.facts.errors import InterpolationError
from little_loops.fsm.values.modifiers import MODIFIER, has_fallback

NAMESPACES: tuple[str, ...] = ("context", "captured", "prev", "result", "state", "loop", "env")

OPEN = "${"
CLOSE = "}"
ESCAPE = "$${"
# `${raw:captured.x}`: the value pasted into a shell action as it is, not quoted.
RAW = "raw:"
# `${words:context.files}`: in a shell action, one bash word per item of a list value.
WORDS = "words:"

# The patterns are compiled on first use, not at import: importing this module is on the
# path of every command, and most of them never interpolate.


@cache
def reference_pattern() -> re.Pattern[str]:
    """`$${` (escape) or `${identifier.path}`, maybe `${raw:...}` or `${words:...}`; the
    path allows names, dots, [N] and dashes; a modifier may follow it (modifiers.py)."""
    return re.compile(
        r"\$\$\{|\$\{(?:(?P<raw>"
        + re.escape(RAW)
        + r")|(?P<words>"
        + re.escape(WORDS)
        + r"))?(?P<ns>[A-Za-z_][A-Za-z0-9_]*)\.(?P<path>[A-Za-z0-9_\-.\[\]]+)"
        + MODIFIER
        + r"\}"
    )


@cache
def _segment() -> re.Pattern[str]:
    """One step of a reference path: a name, or an index `[N]`."""
    return re.compile(r"([^.\[\]]+)|\[(\d+)\]")


# A run fills the same few texts in at every step: each is scanned once (up to this size;
# a longer one, say a context value that holds a file, is scanned each time, not kept).
# At most _KEPT_TEXTS are kept (16 Mi characters of text at most), the least recently used
# dropped. A match object costs hundreds of bytes: a text with more than _KEPT_MATCHES
# references and escapes (each has a `${`) is scanned each time too, not kept with them.
_KEPT_CHARS = 64 * 1024
_KEPT_TEXTS = 256
_KEPT_MATCHES = 256
_KEPT_PATH = 1024  # characters of a reference's path parsed once and kept


def found(text: str) -> tuple[re.Match[str], ...]:
    """Each reference and `$${` escape in *text*, in order."""
    if len(text) > _KEPT_CHARS or text.count(OPEN) > _KEPT_MATCHES:
        return tuple(reference_pattern().finditer(text))
    return _found(text)


@lru_cache(maxsize=_KEPT_TEXTS)
def _found(text: str) -> tuple[re.Match[str], ...]:
    return tuple(reference_pattern().finditer(text))


def whole(text: str) -> re.Match[str] | None:
    """*text* when it is exactly one reference (an escape is not one), else None."""
    match = _whole(text) if len(text) <= _KEPT_CHARS else reference_pattern().fullmatch(text)
    return None if match is None or match.group(0) == ESCAPE else match


@lru_cache(maxsize=_KEPT_TEXTS)
def _whole(text: str) -> re.Match[str] | None:
    return reference_pattern().fullmatch(text)


def parse_path(path: str, ref: str) -> list[str | int]:
    """Split `a.b[0].c` into ['a', 'b', 0, 'c']; all-digit names become indices too
    (`items.0`), unless they have a leading zero (`context.010` names the key `010`)."""
    segments = _segments(path) if len(path) <= _KEPT_PATH else _segments.__wrapped__(path)
    if segments is None:
        raise InterpolationError(f"{ref}: malformed path")
    return list(segments)


@lru_cache(maxsize=4096)
def _segments(path: str) -> tuple[str | int, ...] | None:
    """The segments of *path* (parsed once per path), or None when it is malformed."""
    segments: list[str | int] = []
    pos = 0
    for match in _segment().finditer(path):
        between = path[pos : match.start()]
        if between not in ("", "."):
            return None
        name, index = match.group(1), match.group(2)
        if index is not None:
            number = _number(index)
            if number is None:  # more digits than int() reads: not an index
                return None
            segments.append(number)
        elif name.isdigit() and (number := _number(name)) is not None and str(number) == name:
            segments.append(number)  # `010` stays a name: keys are text (`010:`)
        else:
            segments.append(name)  # (a name of more digits than int() reads, too)
        pos = match.end()
    if not segments or path[pos:] not in ("",) or path.endswith("."):
        return None
    return tuple(segments)


def _number(digits: str) -> int | None:
    """The number *digits* write, or None past int()'s limit (sys.get_int_max_str_digits)."""
    try:
        return int(digits)
    except ValueError:
        return None


def checked_references(text: str) -> list[tuple[str, str, bool]]:
    """(namespace, path, has a fallback) for each reference in *text*: one with a
    `:default=` or `?` may name what is missing."""
    return [
        (m.group("ns"), m.group("path"), has_fallback(m))
        for m in reference_pattern().finditer(text)
        if m.group(0) != ESCAPE
    ]


def references(text: str) -> list[tuple[str, str]]:
    """The (namespace, path) pairs *text* refers to, in order; escapes are skipped."""
    return [(ns, path) for ns, path, _ in raw_references(text)]


def raw_references(text: str) -> list[tuple[str, str, bool]]:
    """(namespace, path, written as `${raw:...}`) for each reference in *text*, in order."""
    matches = reference_pattern().finditer(text)
    return [
        (m.group("ns"), m.group("path"), m.group("raw") is not None)
        for m in matches
        if m.group(0) != ESCAPE
    ]


# `${` + a namespace name used the way no reference is written: `${captured.}`,
# `${ context.x }`, `${prev.output }`. Bash would get them unchanged. (`${state}` alone
# is left alone: it may well be a bash variable.)
@cache
def _near_miss() -> re.Pattern[str]:
    ns = "(?:" + "|".join(NAMESPACES) + ")"
    return re.compile(
        r"\$\{(?:\s*(?:raw|words)\s*:)?(?:\s+" + ns + r"\b[^}\n]*|\s*" + ns + r"\s*\.[^}\n]*)\}"
    )


def near_misses(text: str) -> list[str]:
    """`${...}` spans that name one of our namespaces but are not a valid reference."""
    valid = {m.span() for m in reference_pattern().finditer(text)}
    escaped = {m.start() + 1 for m in reference_pattern().finditer(text) if m.group(0) == ESCAPE}
    return [
        m.group(0)
        for m in _near_miss().finditer(text)
        if m.span() not in valid and m.start() not in escaped
    ]
