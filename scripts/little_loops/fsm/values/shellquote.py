"""Hand each `${...}` value of a shell action to bash as an environment variable, never as text.

A reference becomes a parameter expansion of `LL_V_n`, quoted for where it lands
(shellparse finds that with a bash parser); the value itself travels in the environment,
so bash expands it as data and a misread of the template can garble text but never run
the value. `${raw:...}` is pasted as it is; `${words:...}` makes one word per list item.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from little_loops.fsm.facts.errors import InterpolationError
from little_loops.fsm.values.interpolation import Expansion, InterpolationContext, to_text
from little_loops.fsm.values.references import ESCAPE, OPEN, RAW, WORDS, reference_pattern
from little_loops.fsm.values.shellparse import (
    ANSI,
    ARITH,
    COMMENT,
    DOUBLE,
    HEREDOC,
    HEREDOC_QUOTED,
    SINGLE,
    WORD,
    Placement,
    placements,
    unreadable,
)

PREFIX = "LL_V_"
# How a reference to variable NAME is written where it lands.
FORMS = {
    WORD: '"${{{name}}}"',
    DOUBLE: "${{{name}}}",
    SINGLE: "'\"${{{name}}}\"'",  # close the quote, expand in "...", open it again
    ANSI: "'\"${{{name}}}\"$'",
    HEREDOC: "${{{name}}}",
    HEREDOC_QUOTED: "${{{name}}}",  # its here-document is made unquoted (see _unquote)
    COMMENT: "${{{name}}}",
}
# A value *lookup* does not know (a dry run's output, time ...): written as the reference.
UNKNOWN_VALUE = object()
# One environment string holds at most this many bytes (Linux MAX_ARG_STRLEN), name too.
MAX_VALUE_BYTES = 131072 - 64


@dataclass
class Rendered:
    """A shell action ready to run: its script and the variables its references read."""

    script: str
    env: dict[str, str] = field(default_factory=dict)
    # The script as a person reads it, each value in place (as the run's progress shows
    # it; never run): empty when it is the script itself.
    shown: str = ""

    @property
    def readable(self) -> str:
        """The script with its values in place, for people."""
        return self.shown or self.script


def _hint(ref: str) -> str:
    return ref.replace(OPEN, OPEN + RAW, 1)


def refusal(ref: str, why: str) -> str:
    """The one line that says *ref* cannot be used where it is, and the way out."""
    return f"{ref}: not allowed {why} (paste it as code with {_hint(ref)} if you mean that)"


# How text becomes the bytes the parser reads and back: every surrogate passes through as
# it came (an undecodable byte of the command line, or a lone one the runner then names).
_BYTES = "surrogatepass"
# The placeholders' salt: random, so no text written before the process started can hold
# one, and the same for the whole process, so two actions that differ only in what their
# references name (and one action on each step of a run) are parsed once.
_SALT = os.urandom(4).hex().upper()  # as secrets.token_hex, without importing it
# Only the loop file's own text is remembered, and only this much of it: a script with a
# value pasted in (`${raw:...}`, a refused reference under --compat) changes at each step.
_REMEMBERED_BYTES = 16384


@lru_cache(maxsize=4096)
def _placed(script: bytes, spans: tuple[tuple[int, int], ...]) -> tuple[Placement, ...]:
    """`placements` of a placeholder script, remembered: it depends on nothing else."""
    return tuple(placements(script, list(spans)))


class _Template:
    """A shell action with each reference replaced by a placeholder word, parsed."""

    def __init__(self, text: str, raw_text: Any = None, pasted: Collection[int] = ()) -> None:
        self.salt = _SALT
        self.matches = list(reference_pattern().finditer(text))
        parts: list[str] = []
        self.spans: list[tuple[int, int]] = []  # placeholder byte spans, by reference
        size = pos = 0
        values = False  # a value pasted in the script
        for index, match in enumerate(self.matches):
            parts.append(text[pos : match.start()])
            size += len(text[pos : match.start()].encode(errors=_BYTES))
            pos = match.end()
            if match.group(0) == ESCAPE:
                piece = OPEN
            elif (match.group("raw") or index in pasted) and raw_text is not None:
                piece, values = raw_text(match), True
            else:
                piece = f"LLREF{index}X{self.salt}"
            parts.append(piece)
            encoded = len(piece.encode(errors=_BYTES))
            self.spans.append((size, size + encoded))
            size += encoded
        parts.append(text[pos:])
        self.script = "".join(parts).encode(errors=_BYTES)
        wanted = [i for i, m in enumerate(self.matches) if _quoted(m, raw_text) and i not in pasted]
        spans = tuple(self.spans[i] for i in wanted)
        if values or len(self.script) > _REMEMBERED_BYTES:
            found = tuple(placements(self.script, list(spans)))
        else:
            found = _placed(self.script, spans)
        self.where: dict[int, Placement] = dict(zip(wanted, found, strict=True))


@lru_cache(maxsize=1024)
def _plain(text: str) -> _Template:
    """The template of *text* with every reference a placeholder (as validation reads it),
    made once per text: nothing changes a template once made."""
    return _Template(text)


def _template(text: str) -> _Template:
    """`_plain(text)`, remembered unless the text is long."""
    return _plain(text) if len(text) <= _REMEMBERED_BYTES else _Template(text)


def _quoted(match: re.Match[str], raw_text: Any) -> bool:
    return match.group(0) != ESCAPE and not (match.group("raw") and raw_text is not None)


def problem(match: re.Match[str], where: Placement) -> str:
    """Why the reference *match* cannot stand at *where* ("" when it can)."""
    ref = match.group(0)
    if match.group("raw"):
        return ""
    if where.refused:
        return refusal(ref, where.refused)
    if match.group("words") and not where.words:
        return (
            f"{ref}: one word per item is only possible as a whole argument of a command "
            f"(not in quotes, an assignment or part of a word); write ${{{match.group('ns')}."
            f"{match.group('path')}}} for one word"
        )
    return ""


# What bash expands in `${...}` (a name, a position, a special parameter, then its operator);
# `$${NAME}` gives bash `${NAME}`, and anything else stops it with "bad substitution".
_BASH_EXPANSION = re.compile(
    r"[!#]?([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])([^A-Za-z0-9_.].*)?", re.S
)


def _unexpandable(text: str) -> list[tuple[int, int]]:
    """Where the `$${...}` escapes of *text* are that give bash a `${...}` it cannot expand."""
    found = []
    for match in reference_pattern().finditer(text):
        close = text.find("}", match.end())
        inside = text[match.end() : close]
        if match.group(0) == ESCAPE and close >= 0 and not _BASH_EXPANSION.fullmatch(inside):
            found.append((match.start(), close + 1))
    return found


def _replaced(text: str, spans: list[tuple[int, int]]) -> bytes:
    """The script of *text* with each of *spans* made a plain word."""
    for start, end in reversed(spans):
        text = text[:start] + "LLESC" + text[end:]
    return _Template(text).script


def escape_problems(text: str) -> list[str]:
    """A line for each `$${...}` of a shell action that makes bash fail to read it: it gives
    bash a `${...}` bash cannot expand, where bash would expand it (not in single quotes)."""
    escapes = _unexpandable(text) if ESCAPE in text else []
    if not escapes or not unreadable(_template(text).script):
        return []
    if unreadable(_replaced(text, escapes)):
        return []  # something else makes the action unreadable
    lines = []
    for span in escapes:
        if not unreadable(_replaced(text, [e for e in escapes if e != span])):
            continue  # this one is read as written (in single quotes, a comment ...)
        literal = text[span[0] : span[1]]
        lines.append(
            f"{literal}: gives bash {literal[1:]}, which bash cannot expand (it stops with "
            f"'bad substitution'); in single quotes ('{literal}') bash prints it as written"
        )
    return lines


def unquotable(text: str) -> list[str]:
    """What is wrong with each reference in a shell action that cannot stand where it is
    (`${raw:...}` is never refused); an integer-only place is checked at run time. When a
    `$${...}` is what bash cannot read, none: escape_problems names it."""
    if OPEN not in text:
        return []
    if escape_problems(text):
        return []  # the escapes are named instead (escape_problems)
    template = _template(text)
    found = []
    for index, where in template.where.items():
        message = problem(template.matches[index], where)
        if message:
            found.append(message)
    return found


def one_word_lists(text: str, lists: Collection[str]) -> list[str]:
    """A note for each `${context.NAME}` of a list (NAME in *lists*) that bash gets as one
    word where it reads words: a list once made a word per item there."""
    if OPEN not in text:
        return []
    template = _template(text)
    found: list[str] = []
    for index, where in template.where.items():
        match = template.matches[index]
        whole = match.group("ns") == "context" and match.group("path") in lists
        if whole and where.words and not match.group("words"):
            words = f"${{{WORDS}context.{match.group('path')}}}"
            found += (
                []
                if any(match.group(0) in f for f in found)
                else [
                    f"{match.group(0)} is a list: bash gets it as one word, its items joined "
                    f"by spaces; write {words} for one word per item"
                ]
            )
    return found


def _values(value: Any, words: bool) -> list[str]:
    if words and isinstance(value, list | tuple):
        return [to_text(item) for item in value]
    if isinstance(value, list | tuple):
        return [" ".join(to_text(item) for item in value)]
    return [to_text(value)]


def _checked(ref: str, text: str) -> str:
    if "\0" in text:
        raise InterpolationError(f"{ref}: its value has a NUL byte, which bash cannot hold")
    # At most this many bytes (a lone surrogate is counted and left to the runner to name).
    size = len(text.encode(errors=_BYTES))
    if size > MAX_VALUE_BYTES:
        raise InterpolationError(
            f"{ref}: its value is {size:,} bytes, "
            f"more than the {MAX_VALUE_BYTES:,} one environment variable can hold "
            "(write it to a file and pass the file's name)"
        )
    return text


def render(
    text: str,
    ctx: InterpolationContext,
    lookup: Callable[[re.Match[str]], Any] | None = None,
    *,
    paste_refused: bool = False,
) -> Rendered:
    """*text* (a shell action) with each reference replaced by a reference to an
    environment variable that holds its value (looked up in *ctx*, or by *lookup*);
    raises InterpolationError for a reference that cannot stand where it is, unless
    *paste_refused* (`unsafe_context_interpolation_ok`, `--compat`): then it is pasted as
    its text, as `${raw:...}` is and as little-loops pastes every value."""
    if OPEN not in text:
        return Rendered(text)
    expansion = Expansion(ctx)

    def value_of(match: re.Match[str]) -> Any:
        if lookup is not None:
            return lookup(match)
        # Pasted as code, `${raw:x:shell}` is quoted; any other value reaches bash as data.
        return expansion.modified(match, quote=bool(match.group("raw")))

    template = _template(text)  # the same template unless a `${raw:...}` is pasted in it
    if any(match.group("raw") for match in template.matches):
        template = _Template(text, raw_text=lambda m: to_text(value_of(m)))
    refused = [i for i, where in template.where.items() if problem(template.matches[i], where)]
    if refused and paste_refused:
        template = _Template(text, lambda m: to_text(value_of(m)), refused)
    env: dict[str, str] = {}
    edits: list[tuple[int, int, str]] = []
    shown: list[tuple[int, int, str]] = []  # the same places, with the values in them
    for index, where in template.where.items():
        match = template.matches[index]
        message = problem(match, where)
        if message:
            raise InterpolationError(message)
        start, end = template.spans[index]
        number = len({name.split("_")[2] for name in env}) + 1  # LL_V_1, LL_V_2 ... in order
        written, seen = _written(match, where, value_of(match), number, env)
        edits.append((start, end, written))
        shown.append((start, end, seen))
        if where.heredoc is not None:
            edits += _unquote(template.script, where.heredoc)
    return Rendered(_apply(template.script, edits), env, _apply(template.script, shown))


def _written(
    match: re.Match[str], where: Placement, value: Any, number: int, env: dict[str, str]
) -> tuple[str, str]:
    """The text a reference becomes, and how a person reads it; its values go into *env*."""
    ref = match.group(0)
    if value is UNKNOWN_VALUE:
        return ref, ref
    if where.form == ARITH:
        digits = to_text(value).strip()
        if re.fullmatch(r"-?[0-9]+", digits):
            return digits, digits
        shown = to_text(value)[:40]
        raise InterpolationError(f"{ref}: {shown!r} is not an integer, in bash arithmetic")
    texts = _values(value, bool(match.group("words")))
    if match.group("words"):
        names = [f"{PREFIX}{number}_{i}" for i in range(1, len(texts) + 1)]
    else:
        names = [f"{PREFIX}{number}"]
    for name, text in zip(names, texts, strict=True):
        env[name] = _checked(ref, text)
    seen = " ".join(shell_word(text) if where.form == WORD else text for text in texts)
    return " ".join(FORMS[where.form].format(name=name) for name in names), seen


def _unquote(script: bytes, heredoc: tuple[int, int, int, int]) -> list[tuple[int, int, str]]:
    """Edits that make a quoted here-document unquoted with the same meaning: its
    delimiter without quotes, each `\\`, `$` and backtick of its own text escaped."""
    start, end, body_start, body_end = heredoc
    delimiter = re.sub(r"""['"\\]""", "", script[start:end].decode(errors=_BYTES))
    edits = [(start, end, delimiter)]
    for found in re.finditer(rb"[\\$`]", script[body_start:body_end]):
        at = body_start + found.start()
        edits.append((at, at + 1, "\\" + found.group(0).decode()))
    return edits


def _apply(script: bytes, edits: list[tuple[int, int, str]]) -> str:
    out: list[bytes] = []
    pos = 0
    for start, end, text in sorted(set(edits)):
        if start < pos:
            continue  # the same here-document, already rewritten for another reference
        out += (script[pos:start], text.encode(errors=_BYTES))
        pos = end
    out.append(script[pos:])
    return b"".join(out).decode(errors=_BYTES)


def env_lines(env: dict[str, str]) -> list[str]:
    """The values a script reads, as bash assignments a person can read (and paste)."""
    return [f"{name}={shell_word(value)}" for name, value in env.items()]


def shell_word(text: str) -> str:
    """*text* as one bash word a person can read: as it is when that is safe, else in
    single quotes."""
    if re.fullmatch(r"[\w@%+:,./-]+", text, re.ASCII):
        return text
    return "'" + text.replace("'", "'\\''") + "'"
