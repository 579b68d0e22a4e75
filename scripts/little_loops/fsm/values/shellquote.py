"""Quote each `${...}` value in a shell action for the bash context it lands in."""

from __future__ import annotations

import re
from typing import Any

from little_loops.fsm.facts.errors import InterpolationError
from little_loops.fsm.values.interpolation import Expansion, InterpolationContext, to_text
from little_loops.fsm.values.references import OPEN, RAW, reference_pattern
from little_loops.fsm.values.shellquote_commands import refine
from little_loops.fsm.values.shellscan import (
    ANSI,
    DOUBLE,
    HEREDOC,
    HEREDOC_LITERAL,
    SINGLE,
    WORD,
    Scanner,
)

# How each context the scanner finds is quoted: the first four contexts are quoted; ARITH
# takes integers only, here-document bodies values without their delimiter line; a
# reference anywhere else is refused (see UNQUOTABLE).
UNQUOTABLE = {
    "backtick": "inside `...` (bash parses its text again, so no quoting survives): "
    "use $(...) instead",
    "parameter": "inside a bash ${...} expansion, where quotes mean something else: "
    "assign the value to a variable first (X=${...}; ${X:-...})",
    "comment": "in a bash comment, which a newline in the value would end: "
    "take it out of the comment",
    "backslash": "right after a backslash, which would escape the value's first character",
    "redirect": "in the word after >& or <&, which bash expands twice: redirect to a "
    "file with > instead",
    "evaluated": "in the arguments of a command that runs them as code (eval, trap, "
    "bash -c, ssh ...), where the value would run",
    "unknown": "where ll-loop cannot tell how bash reads it",
    "unclosed": "in a command with a quote, bracket or substitution left open",
}
# Words bash reads as syntax at the start of a command: always quoted.
_RESERVED = {"if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while"}
_RESERVED |= {"until", "do", "done", "in", "function", "time"}


def quote_word(text: str) -> str:
    """*text* as one bash word: as it is when that is safe, else in single quotes."""
    if text not in _RESERVED and re.fullmatch(r"[\w@%+:,./-]+", text, re.ASCII):
        return text
    return "'" + text.replace("'", "'\\''") + "'"


def _words(value: Any) -> list[str]:
    """The texts a value stands for: one per item of a list, else one."""
    if isinstance(value, list | tuple):
        return [to_text(item) for item in value]
    return [to_text(value)]


def quoted(value: Any, where: str, ref: str, delimiter: str = "") -> str:
    """*value* written for context *where* (WORD, DOUBLE, ...); *ref* names it in errors;
    *delimiter* is a here-document's (with a leading tab if `<<-` strips tabs)."""
    if where in UNQUOTABLE:
        raise InterpolationError(refusal(ref, where))
    words = _words(value)
    if where == WORD:
        return " ".join(quote_word(w) for w in words)
    text = " ".join(words)
    if where == DOUBLE:
        return re.sub(r'([\\$`"])', r"\\\1", text)
    if where == SINGLE:
        return text.replace("'", "'\\''")
    if where == ANSI:
        return text.replace("\\", "\\\\").replace("'", "\\'")
    if where in (HEREDOC, HEREDOC_LITERAL):
        strip = delimiter.startswith("\t")
        ends = delimiter.lstrip("\t")
        if any((line.lstrip("\t") if strip else line) == ends for line in text.split("\n")):
            raise InterpolationError(
                f"{ref}: its value has a line '{ends}', which would end the here-document"
            )
        return text if where == HEREDOC_LITERAL else re.sub(r"([\\$`])", r"\\\1", text)
    if re.fullmatch(r"-?[0-9]+", text.strip()):
        return text.strip()
    raise InterpolationError(f"{ref}: {text[:40]!r} is not an integer, in bash arithmetic")


def refusal(ref: str, where: str) -> str:
    """Why *ref* cannot be quoted in context *where* (one of UNQUOTABLE)."""
    raw = ref.replace(OPEN, OPEN + RAW, 1)
    hint = f"or paste it unquoted with {raw}"
    if where == "evaluated":  # the value reaches the code as data in a variable
        hint = f"pass it in a variable: V={ref} bash -c 'echo \"$V\"'; or as code: {raw}"
    return f"{ref}: cannot be quoted {UNQUOTABLE[where]} ({hint})"


def contexts(template: str) -> dict[int, tuple[str, str]]:
    """The bash context of each reference in *template*, by the offset where it starts,
    with the here-document's delimiter for one in a here-document body (else "")."""
    scanner = Scanner(template)
    found = scanner.run()
    refine(scanner, found)
    return {start: (kind, scanner.delimiters.get(start, "")) for start, kind in found.items()}


def interpolate_shell(text: str, ctx: InterpolationContext) -> str:
    """*text* (a shell action) with each reference's value quoted for its bash context;
    `${raw:...}` is pasted as it is."""
    if OPEN not in text:
        return text
    where = contexts(text)

    def render(match: re.Match[str], value: Any) -> str:
        if match.group("raw"):
            return to_text(value)
        kind, delimiter = where[match.start()]
        return quoted(value, kind, match.group(0), delimiter)

    return Expansion(ctx).substitute(text, render=render)


def unquotable(text: str) -> list[str]:
    """What is wrong with each reference in a shell action that cannot be quoted where it
    is (`${raw:...}` is never refused)."""
    if OPEN not in text:
        return []
    where = contexts(text)
    found = []
    for match in reference_pattern().finditer(text):
        kind = where[match.start()][0] if match.start() in where else ""
        if kind in UNQUOTABLE and not match.group("raw"):
            found.append(refusal(match.group(0), kind))
    return found
