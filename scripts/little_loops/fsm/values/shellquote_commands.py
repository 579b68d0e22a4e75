"""Which command a shell-action reference is an argument of: code runners and arithmetic."""

from __future__ import annotations

import os
import re
from typing import Any

# Commands that run (part of) their arguments as code: a reference in their arguments is
# refused. The shells only with `-c`, up to their command string (later words are $0, $1...).
EVALUATORS = {"eval", "trap", "ssh", "su", "runuser", "watch"}
SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "fish"}
# Commands that run the command in their arguments, with their options that take a value.
WRAPPERS = {
    "env": {"-u", "-C", "-S", "--unset", "--chdir", "--split-string"},
    "sudo": {"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "-R"},
    "doas": {"-u", "-C"},
    "timeout": {"-s", "-k", "--signal", "--kill-after"},
    "nice": {"-n", "--adjustment"},
    "ionice": {"-c", "-n", "-p", "-P", "-u"},
    "stdbuf": {"-i", "-o", "-e"},
    "xargs": {"-I", "-L", "-n", "-P", "-s", "-d", "-E", "-a", "--arg-file", "--delimiter"},
    "nohup": set(),
    "setsid": set(),
    "command": set(),
    "builtin": set(),
    "exec": {"-a"},
    "time": set(),
}
FIND_EXEC = {"-exec", "-execdir", "-ok", "-okdir"}
# Builtins that take variable names (`NAME=value`); with -i, integer variables.
DECLARE = {"declare", "local", "typeset", "readonly", "export"}
# Operators in `[[ ... ]]` whose operands bash evaluates as arithmetic expressions.
ARITH_TESTS = {"-eq", "-ne", "-lt", "-le", "-gt", "-ge"}
_KEYWORDS = {"!", "if", "then", "else", "elif", "do", "while", "until", "time", "{"}
_ASSIGNMENT = r"[A-Za-z_]\w*(\[[^\]]*\])?\+?="  # compiled on first use (imports compile no regex)
_QUOTABLE = ("word", "double", "single", "ansi-c")
_PARTS = ("dq", "sq", "ansi")  # frames a reference can sit in inside one word


def refine(scanner: Any, found: dict[int, str]) -> None:
    """Mark the references in *found* (offset: context) that bash runs as code as
    "evaluated" and those it evaluates as arithmetic as ARITH ("arithmetic")."""
    for start, kind in list(found.items()):
        if kind in ("heredoc", "heredoc-literal") and start in scanner.fed:
            chain = scanner.chains[scanner.fed[start]]
            depth = _word_frame(chain)
            if depth is not None and _runs_input(
                _command(scanner, chain, depth, scanner.fed[start])[0]
            ):
                found[start] = "evaluated"
        if kind not in _QUOTABLE or start >= len(scanner.chains):
            continue
        chain = scanner.chains[start]
        for depth in range(len(chain) - 1, -1, -1):  # each command around it, inner first
            if chain[depth][0] not in ("top", "cmd", "group", "cond"):
                continue
            words, at = _command(scanner, chain, depth, start)
            if at == -1 and _runs_input(words) or at is not None and _evaluates(words, at):
                found[start] = "evaluated"
                break
        else:
            if _arithmetic(scanner, chain, start):
                found[start] = "arithmetic"


def _runs_input(words: list[tuple[int, int, str]]) -> bool:
    """Whether the command of *words* may run its input as code (a shell, not given a
    script file)."""
    k = _name(words)
    name = _bare(words[k][2]) if k is not None else ""
    if name == "eval":  # `eval bash <<<...`: the redirection is eval's, bash reads it
        return _runs_input(words[k + 1 :])  # type: ignore[operator]
    if name in ("ssh", "su", "runuser"):
        return True
    if name not in SHELLS:
        return False
    flags, script = _shell_options(words, k + 1)  # type: ignore[operator]
    # Its script (or a -c command string that may start a shell: `bash -c bash`) reads it.
    return "s" in flags or "c" in flags or script == len(words)


def _word_frame(chain: tuple[list[Any], ...]) -> int | None:
    """The depth of the command a position is in, through quotes only."""
    depth = len(chain) - 1
    while depth > 0 and chain[depth][0] in _PARTS:
        depth -= 1
    return depth if chain[depth][0] in ("top", "cmd", "group", "cond") else None


def _command(
    scanner: Any, chain: tuple[list[Any], ...], depth: int, pos: int
) -> tuple[list[tuple[int, int, str]], int | None]:
    """The words (start, end, text) of the simple command at frame *depth* around *pos*,
    redirections left out, and the index of the one holding *pos* (None: not a word,
    -1: the word after `<<<`, the command's input)."""
    frame, chains, text = chain[depth], scanner.chains, scanner.text

    def mine(j: int) -> bool:
        return len(chains[j]) > depth and chains[j][depth] is frame

    lo, hi = pos, pos
    while lo > 0 and mine(lo - 1):
        lo -= 1
    while hi < len(chains) and mine(hi):
        hi += 1
    # Tokens: ("w", start, end) words, ("o", ...) operators, ("c", ...) command breaks.
    tokens: list[list[Any]] = []
    for j in range(lo, hi):
        inner = chains[j][depth + 1] if len(chains[j]) > depth + 1 else None
        if inner is None:
            cls = ("b" if text[j] in " \t" else "o") if j in scanner.seps else "w"
            cls = "c" if cls == "o" and text[j] in "\n()" else cls
        elif inner[0] in ("group", "cond", "comment") or inner[-1] == "((":
            cls = "c"
        else:
            cls = "w"
        if tokens and tokens[-1][0] == cls and cls in "wo":
            tokens[-1][2] = j + 1
        else:
            tokens.append([cls, j, j + 1])
    words: list[tuple[int, int, str]] = []
    at = None
    skip: bool | str = False
    for cls, start, end in tokens:
        op = text[start:end]
        if cls == "c" or (cls == "o" and not re.search("[<>]", op)):
            if start > pos:
                break
            words, at, skip = [], None, False  # a new command
        elif cls == "o":
            skip = (
                "<<<" if op == "<<<" else True
            )  # a redirection: its target word is not an argument
            if words and words[-1][1] == start and re.fullmatch(r"\d+|\{\w+\}", words[-1][2]):
                words.pop()
        elif cls == "w":
            if start <= pos < end:
                at = -1 if skip == "<<<" else None if skip else len(words)
            if not skip:
                words.append((start, end, text[start:end]))
            skip = False
    return words, at


def _bare(word: str) -> str:
    return os.path.basename(re.sub(r"['\"\\]", "", word.replace("\\\n", "")))


def _name(words: list[tuple[int, int, str]]) -> int | None:
    """The index of the command that runs, past assignments, keywords and wrappers."""
    k = 0
    while k < len(words):
        word = _bare(words[k][2]) if not re.match(_ASSIGNMENT, words[k][2]) else "="
        if word == "=" or word in _KEYWORDS:
            k += 1
        elif word == "find":
            k = next((j + 1 for j in range(k, len(words)) if words[j][2] in FIND_EXEC), 0)
            if not k:
                return None
        elif word in WRAPPERS:
            takes = WRAPPERS[word]
            k += 1
            while k < len(words):
                arg = words[k][2]
                if arg == "--":
                    k += 1
                    break
                if not (arg.startswith("-") or (word == "env" and re.match(_ASSIGNMENT, arg))):
                    break
                k += 2 if arg in takes else 1
            if word == "timeout":
                k += 1  # the duration
        else:
            return k
    return None


def _evaluates(words: list[tuple[int, int, str]], at: int) -> bool:
    """Whether the command of *words* runs the word at *at* as code."""
    k = _name(words)
    if k is None or at <= k:
        return False
    name = _bare(words[k][2])
    if name in EVALUATORS:
        return True
    if name not in SHELLS:
        return False
    flags, j = _shell_options(words, k + 1)
    return at < j or ("c" in flags and at == j)


def _shell_options(words: list[tuple[int, int, str]], j: int) -> tuple[str, int]:
    """A shell's one-letter options from word *j* on, and the index of the first word
    past them (its -c command string, or its script)."""
    flags = ""
    while j < len(words):
        arg = words[j][2]
        if arg == "--":
            return flags, j + 1
        if not arg.startswith(("-", "+")) or len(arg) < 2:
            break
        flags += arg[1:] if arg[0] == "-" and not arg.startswith("--") else ""
        j += 2 if arg in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file") else 1
    return flags, j


def _arithmetic(scanner: Any, chain: tuple[list[Any], ...], start: int) -> bool:
    """Whether bash evaluates the word holding the reference at *start* as arithmetic:
    an operand of -eq ... -ge in `[[ ]]`, an array subscript, an argument of `let` or of
    `declare -i` (and the like), a variable name (for `declare` and the like, `unset`,
    `read`, `printf -v`, `-v` in a test), where a subscript would be evaluated."""
    depth = _word_frame(chain)
    if depth is None:
        return False
    words, at = _command(scanner, chain, depth, start)
    if at is None or at < 0:
        return False
    in_test = any(frame[0] == "cond" for frame in chain[: depth + 1])
    if in_test and chain[depth][0] in ("cond", "group"):
        near = [words[j][2] for j in (at - 1, at + 1) if 0 <= j < len(words)]
        if ARITH_TESTS & set(near):
            return True
    word_start, _, word = words[at]
    # The word as bash's `[` and `=` see it, with each reference blanked out.
    masked = word
    for match in scanner.matches.values():
        if word_start <= match.start() < word_start + len(word):
            offset = match.start() - word_start
            masked = (
                masked[:offset] + "x" * len(match.group(0)) + masked[match.end() - word_start :]
            )
    offset = start - word_start
    subscript = re.match(r"[A-Za-z_]\w*\[", masked)
    if subscript and subscript.end() <= offset:
        close = masked.find("]", subscript.end())
        if close < 0 or offset < close:
            return True
    k = _name(words)
    name = _bare(words[k][2]) if k is not None else ""
    before = words[at - 1][2] if at > 0 else ""
    if before in ("-v", "-R") and (in_test or name in ("test", "[")):
        return True  # a variable name, maybe with a subscript
    if k is None or at <= k or word.startswith("-"):
        return False
    if name in ("let", "unset") or (name == "printf" and before == "-v"):
        return True
    if name == "read":  # its variable names, not the values of its options
        return not re.fullmatch(r"-\w*[dinNptu]", before)
    if name in DECLARE:  # -i: integers; -n: names; else the name before `=`
        flags = "".join(w[2] for w in words[k + 1 :] if w[2].startswith("-"))
        return "i" in flags or "n" in flags or "=" not in masked or offset < masked.index("=")
    return False
