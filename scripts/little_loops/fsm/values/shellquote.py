"""Quote each `${...}` value in a shell action for the bash context it lands in."""

from __future__ import annotations

import re
from typing import Any

from little_loops.fsm.facts.errors import InterpolationError
from little_loops.fsm.values.interpolation import Expansion, InterpolationContext, to_text
from little_loops.fsm.values.references import ESCAPE, OPEN, RAW, reference_pattern
from little_loops.fsm.values.shellquote_commands import refine

# Where a reference sits in the action, as bash will read it. The first four are quoted;
# ARITH takes integers only, here-document bodies values without their delimiter line; a
# reference anywhere else is refused (see UNQUOTABLE).
WORD, DOUBLE, SINGLE, ANSI, ARITH = "word", "double", "single", "ansi-c", "arithmetic"
HEREDOC, HEREDOC_LITERAL = "heredoc", "heredoc-literal"
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
_WORDLIKE = ("top", "cmd", "group", "cond")
_COMMENT_AFTER = set(" \t\n;&|(<>")  # not `)`: `$(...)#` goes on with its word
# `<<` or `<<-`, then the delimiter word: 'quoted', "quoted" or plain (maybe \escaped).
# Compiled on first use, as in `references`.
_HEREDOC = r"<<(-?)[ \t]*(?:'([^'\n]*)'|\"([^\"\n$`\\]*)\"|\\?([^\s;&|()<>'\"`$\\]+))"


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
    scanner = _Scanner(template)
    found = scanner.run()
    refine(scanner, found)
    return {start: (kind, scanner.delimiters.get(start, "")) for start, kind in found.items()}


class _Scanner:
    """Reads a bash command far enough to know what quotes each reference is in.

    It follows '...', "...", $'...', backslashes and line continuations, $(...), (...),
    $((...)), $[...], ((...)), [[...]], `...`, bash's own ${...}, comments and here-documents.
    Not followed: `case` patterns (an unmatched `)` is ignored). Where it may have lost track
    (something left open at the end, a here-document delimiter with `$`) it classifies the
    references as unquotable, so they are refused, never misquoted.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.matches = {m.start(): m for m in reference_pattern().finditer(text)}
        self.stack: list[list[Any]] = [["top", 0]]  # [kind, paren depth or parent kind]
        self.found: dict[int, str] = {}
        self.heredocs: list[tuple[str, bool, bool, int]] = []  # delimiter, -, quoted, at
        self.delimiters: dict[int, str] = {}
        self.fed: dict[int, int] = {}  # a here-document reference: the offset of its `<<`
        self.lost = False  # past something it cannot follow: the rest is "unknown"
        self.boundary = 0  # where the last `(...)` or `((...))` command ended
        # The words after `>&` being read: [stack depth, whether the word has begun].
        self.dups: list[list[Any]] = []
        # The stack at each offset; the blanks and operators that split words and commands.
        self.chains: list[tuple[list[Any], ...]] = []
        self.seps: set[int] = set()

    def where(self, pos: int) -> str:
        kind: str = self.stack[-1][0]
        if self.escaped(pos):
            return "backslash"
        if kind in _WORDLIKE:
            return WORD
        return {"dq": DOUBLE, "ansi": ANSI, "arith": ARITH}.get(kind, kind)

    def word_starts(self, i: int) -> bool:
        """Whether a word starts at *i* (after an unescaped blank or operator; a
        backslash-newline before it is a line continuation, which bash removes)."""
        text = self.text
        while i not in (0, self.boundary) and text[i - 2 : i] == "\\\n":
            if self.escaped(i - 2):
                break
            i -= 2
        if i == 0 or i == self.boundary:
            return True
        return text[i - 1] in _COMMENT_AFTER and not self.escaped(i - 1)

    def escaped(self, pos: int) -> bool:
        count = 0
        while pos - count - 1 >= 0 and self.text[pos - count - 1] == "\\":
            count += 1
        return count % 2 == 1

    def run(self) -> dict[int, str]:
        text = self.text
        i = 0
        while i < len(text):
            match = self.matches.get(i)
            kind, chain = self.stack[-1][0], tuple(self.stack)
            if match is not None and kind not in ("sq", "ansi", "comment"):
                if match.group(0) == ESCAPE:  # bash will read `${`
                    self.stack.append(["parameter", kind])
                else:
                    self.found[i] = "unknown" if self.lost else self.where(i)
                    if self.dups:
                        self.found[i] = "redirect"
                        self.dups[-1][1] = True
                i = match.end()
            elif match is not None and match.group(0) != ESCAPE:
                self.found[i] = "comment" if kind == "comment" else SINGLE
                if kind == "ansi":
                    self.found[i] = "backslash" if self.escaped(i) else ANSI
                if self.lost:
                    self.found[i] = "unknown"
                elif self.dups and kind != "comment":
                    self.found[i] = "redirect"
                i = match.end()
            else:
                i = self.step(i, kind)
            self.chains += [chain] * (min(i, len(text)) - len(self.chains))
        # A quote, bracket or substitution left open: bash runs the lines before its syntax
        # error, and read them some way this scanner did not. Nothing is quoted then.
        unclosed = [frame[0] for frame in self.stack[1:] if frame[0] != "comment"]
        for start, match in self.matches.items():
            if match.group(0) != ESCAPE:
                self.found.setdefault(start, "unknown")
                if unclosed:
                    self.found[start] = "unclosed"
        return self.found

    def step(self, i: int, kind: str) -> int:
        """Read the character at *i* in a *kind* context; the offset to read next."""
        text, stack = self.text, self.stack
        c, two = text[i], text[i : i + 2]
        if kind == "sq":
            if c == "'":
                stack.pop()
            return i + 1
        if kind == "comment":
            if c == "\n":
                stack.pop()
                # A word starts after it: a backslash before the newline was in the comment.
                self.boundary = self.newline(i)
                return self.boundary
            return i + 1
        if c == "\\":
            if two == "\\\n" and kind != "ansi" and text[i - 1 : i] in tuple("$<>&|;("):
                # A line continuation that joins an operator or `$` to what follows
                # (`$\<newline>'` is `$'`): bash reads a token this scanner did not.
                self.lost = True
            # A reference right after it is read next (and refused: see `where`).
            after = self.matches.get(i + 1)
            if after is None:
                return i + 2
            return i + 1 if after.group(0) != ESCAPE else after.end()
        if kind == "ansi":
            if c == "'":
                stack.pop()
            return i + 1
        if kind == "backtick":
            if c == "`":
                stack.pop()
            return i + 1
        if kind == "dq":
            if c == '"':
                stack.pop()
            else:
                return self.dollar(i, kind)
            return i + 1
        if kind == "parameter":
            if c == "}":
                stack.pop()
            elif c == '"' or (c == "'" and stack[-1][1] != "dq"):
                stack.append(["dq" if c == '"' else "sq", 0])
            else:
                return self.dollar(i, kind)
            return i + 1
        if kind == "arith":
            style = stack[-1][2]
            if stack[-1][1] == 0 and (c == "]" if style == "$[" else two == "))"):
                if stack.pop()[2] == "((":  # `((...))`, a command: a word may start after it
                    self.boundary = i + 2
                    self.seps.update((i, i + 1))
                return i + (1 if style == "$[" else 2)
            # Bash reads to the matching `))` (or `]` of `$[`) counting brackets; a reference
            # in it can only be an integer, so nothing inside needs following, but quotes would.
            stack[-1][1] += ({"[": 1, "]": -1} if style == "$[" else {"(": 1, ")": -1}).get(c, 0)
            self.lost = self.lost or c in "'\"`"
            return i + 1
        # word context: top level, $(...), (...), [[ ... ]]
        process = two in ("<(", ">(")  # a process substitution: part of a word
        if not process and c in " \t\n;&|()<>":
            self.seps.add(i)  # (then `>&`, `<<<` and `((` mark their other characters)
        alone = self.word_starts(i) and text[i + 2 : i + 3] in ("", *" \t\n;&|()<>")
        if kind == "cond" and two == "]]" and alone:  # `[[ ... ]]`: a command of its own
            stack.pop()
            self.seps.update((i, i + 1))
            return i + 2
        while self.dups and self.dups[-1][0] > len(stack):
            self.dups.pop()  # its $(...) has closed
        if self.dups and self.dups[-1][0] == len(stack):
            if process or c not in " \t\n;&|()<>":
                self.dups[-1][1] = True
            elif c in "\n;&|()<>" or self.dups[-1][1]:
                self.dups.pop()  # the word after `>&` has ended
        if process:
            stack.append(["cmd", 0])
            return i + 2
        if two in (">&", "<&"):
            # Bash expands the word after `>&` a second time, quotes or not: no
            # reference may be in it (this holds for `N>&`, and `&>` is a plain redirect).
            self.dups.append([len(stack), False])
            self.seps.add(i + 1)
            return i + 2
        if two == "$$":
            return i + 2  # the process id, here (inside "..." bash reads `$$(` as `$` `$(`)
        if c == "'":
            stack.append(["sq", 0])
        elif c == '"':
            stack.append(["dq", 0])
        elif two == "$'":
            stack.append(["ansi", 0])
            return i + 2
        elif two == '$"':
            stack.append(["dq", 0])
            return i + 2
        elif c == "#" and self.word_starts(i):
            stack.append(["comment", 0])
        elif two == "((" and self.word_starts(i):
            stack.append(["arith", 0, "(("])
            self.seps.update((i, i + 1))
            return i + 2
        elif two == "[[" and alone:
            stack.append(["cond", 0])
            self.seps.update((i, i + 1))
            return i + 2
        elif c == "(":
            stack.append(["group", 0])
        elif c == ")":
            if kind in ("cmd", "group") and stack.pop()[0] == "group":
                self.boundary = i + 1
        elif text.startswith("<<<", i):
            self.seps.update((i + 1, i + 2))
            return i + 3  # a here-string: an ordinary word follows
        elif two == "<<":
            heredoc = re.compile(_HEREDOC).match(text, i)
            end = heredoc.end() if heredoc is not None else i
            if heredoc is None or (end < len(text) and text[end] not in " \t\n;&|()<>"):
                self.lost = True  # a delimiter word this scanner does not read
                return i + 2
            word = next(g for g in heredoc.groups()[1:] if g is not None)
            # Any quoting of the delimiter word turns expansion off in the body.
            literal = heredoc.group(4) is None or heredoc.group(0).endswith("\\" + word)
            self.heredocs.append((word, heredoc.group(1) == "-", literal, i))
            self.seps.add(i + 1)
            return end
        elif c == "\n":
            end = self.newline(i)
            self.seps.update(range(i, end))  # the here-document bodies too
            return end
        else:
            return self.dollar(i, kind)
        return i + 1

    def dollar(self, i: int, kind: str) -> int:
        """`$(`, `$((`, `${` and `` ` ``, which open a context in word and "..." contexts."""
        text, stack = self.text, self.stack
        if text.startswith("$((", i):
            stack.append(["arith", 0, "$(("])
            return i + 3
        if text.startswith("$[", i):  # bash's old spelling of $((...))
            stack.append(["arith", 0, "$["])
            return i + 2
        if text.startswith("$(", i):
            stack.append(["cmd", 0])
            return i + 2
        if text.startswith(OPEN, i):
            stack.append(["parameter", kind])
            return i + 2
        if text[i] == "`":
            stack.append(["backtick", 0])
        return i + 1

    def newline(self, i: int) -> int:
        """After the newline at *i*: skip the bodies of the here-documents it starts."""
        i += 1
        for delimiter, strip, literal, operator in self.heredocs:
            continued = False  # the line before ended in `\` (a continuation, unquoted)
            while i < len(self.text):
                end = self.text.find("\n", i)
                end = len(self.text) if end < 0 else end
                line = self.text[i:end]
                for start in self.matches:
                    if i <= start < end and self.matches[start].group(0) != ESCAPE:
                        kind = HEREDOC_LITERAL if literal else HEREDOC
                        if not literal and self.escaped(start):
                            kind = "backslash"
                        if self.dups:
                            kind = "redirect"
                        self.found[start] = "unknown" if self.lost else kind
                        self.delimiters[start] = ("\t" if strip else "") + delimiter
                        self.fed[start] = operator
                i = end + 1
                if not continued and (line.lstrip("\t") if strip else line) == delimiter:
                    break
                continued = not literal and self.escaped(end)
        self.heredocs = []
        return i


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
