"""Read a bash command far enough to know the quoting context of each `${...}` in it."""

from __future__ import annotations

import re
from typing import Any

from little_loops.fsm.values.references import ESCAPE, OPEN, reference_pattern

# Where a reference sits in the action, as bash will read it (shellquote quotes each).
WORD, DOUBLE, SINGLE, ANSI, ARITH = "word", "double", "single", "ansi-c", "arithmetic"
HEREDOC, HEREDOC_LITERAL = "heredoc", "heredoc-literal"
_WORDLIKE = ("top", "cmd", "group", "cond")
_COMMENT_AFTER = set(" \t\n;&|(<>")  # not `)`: `$(...)#` goes on with its word
# `<<` or `<<-`, then the delimiter word: 'quoted', "quoted" or plain (maybe \escaped).
# Compiled on first use, as in `references`.
_HEREDOC = r"<<(-?)[ \t]*(?:'([^'\n]*)'|\"([^\"\n$`\\]*)\"|\\?([^\s;&|()<>'\"`$\\]+))"


class Scanner:
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
        if kind in ("sq", "comment"):
            return self.unescaped(i, kind)
        if self.text[i] == "\\":
            return self.backslash(i, kind)
        if kind in ("ansi", "backtick", "dq", "parameter"):
            return self.inside(i, kind)
        if kind == "arith":
            return self.arith(i)
        return self.word(i, kind)

    def unescaped(self, i: int, kind: str) -> int:
        """In '...' or a comment, where a backslash is an ordinary character."""
        c = self.text[i]
        if kind == "sq":
            if c == "'":
                self.stack.pop()
            return i + 1
        if c == "\n":
            self.stack.pop()
            # A word starts after it: a backslash before the newline was in the comment.
            self.boundary = self.newline(i)
            return self.boundary
        return i + 1

    def backslash(self, i: int, kind: str) -> int:
        """A backslash outside '...' and comments: it escapes the next character."""
        text, two = self.text, self.text[i : i + 2]
        if two == "\\\n" and kind != "ansi" and text[i - 1 : i] in tuple("$<>&|;("):
            # A line continuation that joins an operator or `$` to what follows
            # (`$\<newline>'` is `$'`): bash reads a token this scanner did not.
            self.lost = True
        # A reference right after it is read next (and refused: see `where`).
        after = self.matches.get(i + 1)
        if after is None:
            return i + 2
        return i + 1 if after.group(0) != ESCAPE else after.end()

    def inside(self, i: int, kind: str) -> int:
        """In $'...', `...`, "..." or bash's own ${...}."""
        stack, c = self.stack, self.text[i]
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
        # bash's own ${...}
        if c == "}":
            stack.pop()
        elif c == '"' or (c == "'" and stack[-1][1] != "dq"):
            stack.append(["dq" if c == '"' else "sq", 0])
        else:
            return self.dollar(i, kind)
        return i + 1

    def arith(self, i: int) -> int:
        """In $((...)), $[...] or ((...)), up to the bracket that closes it."""
        stack, c, two = self.stack, self.text[i], self.text[i : i + 2]
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

    def word(self, i: int, kind: str) -> int:
        """In a word context: top level, $(...), (...), [[ ... ]]."""
        text, stack = self.text, self.stack
        c, two = text[i], text[i : i + 2]
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
        return self.opens(i, kind, alone)

    def opens(self, i: int, kind: str, alone: bool) -> int:
        """What the character at *i* of a word context opens or closes (*alone*: a word of
        its own starts there)."""
        text, stack = self.text, self.stack
        c, two = text[i], text[i : i + 2]
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
