"""Where each `${...}` of a shell action lands in bash, read with the tree-sitter bash parser."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING

from little_loops.fsm.values.shellcalls import Seen, bash_parser, calls, nodes
from little_loops.fsm.values.shellcommands import (
    assigned,
    command_problem,
    feeds_shell,
    pipeline_problem,
    program_text,
    runs_stdin,
    stdin_program,
)

if TYPE_CHECKING:
    from tree_sitter import Node

# Where a reference lands. The first five are quoted as data (see shellquote.FORMS);
# ARITH takes an integer only; a reference anywhere else is refused with a reason.
WORD, DOUBLE, SINGLE, ANSI, HEREDOC = "word", "double", "single", "ansi", "heredoc"
HEREDOC_QUOTED, COMMENT, ARITH = "heredoc-quoted", "comment", "arith"

UNKNOWN = "where ll-loop cannot tell how bash reads it"
ON_A_DESCRIPTOR = "in a script with a coproc or exec N> >(shell), whose input may run it"
# Nodes whose text bash evaluates as arithmetic.
ARITH_NODES = {"arithmetic_expansion", "c_style_for_statement", "subscript"}
# Nodes a value may sit in as data (its own text is never read as code there).
_DATA = {
    "program", "list", "pipeline", "redirected_statement", "command", "string",
    "string_content", "raw_string", "ansi_c_string", "word", "concatenation",
    "variable_assignment", "variable_assignments", "file_redirect", "heredoc_redirect",
    "heredoc_body", "heredoc_content", "command_substitution", "process_substitution",
    "subshell", "compound_statement", "if_statement", "elif_clause", "else_clause",
    "while_statement", "for_statement", "do_group", "case_statement", "case_item",
    "function_definition", "negated_command", "herestring_redirect", "comment",
    "command_name", "test_command", "binary_expression", "unary_expression",
    "parenthesized_expression", "expansion", "simple_expansion", "array",
    "declaration_command", "translated_string", "brace_expression", "extglob_pattern",
    "regex", "number", "variable_name", "unset_command",
}  # fmt: skip
# Operators of `${name OP word}` whose word is data (a default, a pattern, a replacement).
_DATA_OPERATORS = {":-", "-", ":=", "=", ":+", "+", ":?", "?", "#", "##", "%", "%%"}
_DATA_OPERATORS |= {"/", "//", "/#", "/%", "^", "^^", ",", ",,", "@"}
_ARITH_TESTS = {"-eq", "-ne", "-lt", "-le", "-gt", "-ge"}


@dataclass(frozen=True)
class Placement:
    """Where one reference lands: *form* (WORD ...), else *refused* says why; for a
    reference in a quoted here-document, *start*/*end* are its delimiter's bytes."""

    form: str = ""
    refused: str = ""
    words: bool = False  # a whole argument word, where a list may become many words
    heredoc: tuple[int, int, int, int] | None = None  # start, end, body start, body end
    program: str = ""  # the interpreter (python3, awk ...) that gets it as program text
    # The commands around it, innermost first (a value in `f "$(echo ${...})"` reaches f).
    commands: tuple[Node, ...] = field(default=(), compare=False, repr=False)


def unreadable(script: bytes) -> bool:
    """Whether ll-loop cannot tell how bash reads *script* (each reference is refused)."""
    root = bash_parser().parse(script).root_node
    return root.has_error or _misread(root)


def placements(script: bytes, spans: list[tuple[int, int]]) -> list[Placement]:
    """Where each of *spans* (byte ranges of placeholder words in *script*) lands."""
    root = bash_parser().parse(script).root_node
    if root.has_error:  # bash may read it differently from any guess
        return [Placement(refused=UNKNOWN) for _ in spans]
    if _shell_on_a_descriptor(root):
        return [Placement(refused=ON_A_DESCRIPTOR) for _ in spans]
    if _misread(root):
        return [Placement(refused=UNKNOWN) for _ in spans]
    return [_place(root, start, end) for start, end in spans]


def _misread(root: Node) -> bool:
    """True when the tree has a word bash cannot have read as one: an unquoted blank or
    newline not escaped by a backslash inside it (tree-sitter sometimes swallows the next
    line into a redirect's word), or a reserved word read as a command (`! while ...` and
    `time -p if ...` come out as commands named `while`, `do`, with `if` an argument)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "word" and node.text is not None and re.search(_BLANK, node.text):
            return True
        if node.type == "command" and _reserved_as_command(node):
            return True
        if node.type not in _NO_WORDS:
            stack.extend(node.children)
    return False


_RESERVED = {b"if", b"then", b"else", b"elif", b"fi", b"do", b"done", b"while", b"until"}
_RESERVED |= {b"for", b"case", b"esac", b"select", b"function", b"in", b"{", b"}", b"[[", b"]]"}
# Words after which bash still reads a reserved word as one (`time -p if ...`).
_BEFORE_RESERVED = {b"time", b"-p", b"!", b"coproc", b"--"}


def _reserved_as_command(command: Node) -> bool:
    """True when *command*'s name is a reserved word, or one follows `time`, `-p`, `!` ...
    at its start: bash reads a compound command there, tree-sitter did not."""
    for child in command.children:
        if child.type in ("variable_assignment", "comment") or "redirect" in child.type:
            continue
        text = child.text or b""
        if text in _RESERVED:
            return True
        if text not in _BEFORE_RESERVED:
            return False
    return False


# A blank or newline not escaped by a backslash; nodes whose words may hold such text.
_BLANK = rb"(?<!\\)[ \t\n]"
_NO_WORDS = {"raw_string", "string", "ansi_c_string", "heredoc_body", "comment", "regex"}
_NO_WORDS |= {"translated_string", "string_content", "heredoc_content"}


def _shell_on_a_descriptor(root: Node) -> bool:
    """True when the script keeps a shell's input open for its later commands to write
    to: `coproc ...` (its `>&${COPROC[1]}`) or `exec N> >(bash)`."""
    for node in nodes(root):
        name = _text(node.child_by_field_name("name")) if node.type == "command" else ""
        if name == "coproc":
            return True
        body = node.child_by_field_name("body") if node.type == "redirected_statement" else None
        opened = body is not None and _text(body.child_by_field_name("name")) == "exec"
        if opened and _shell_output(node):
            return True
    return False


def _place(root: Node, start: int, end: int, seen: Seen | None = None) -> Placement:
    """Where the bytes *start*..*end* land; an argument of an alias or a function the script
    defines is placed where the alias or the function puts it, to any depth (a use already
    *seen* on the way is not followed again: its other uses decide)."""
    seen = set() if seen is None else seen
    key = (root.id, start, end)
    if key in seen:
        return Placement(form=WORD)
    seen.add(key)
    placed = _where(root, start, end)
    commands = placed.commands
    called = calls(root, start, commands, seen, _place) if not placed.refused else ""
    return Placement(refused=called) if called else replace(placed, commands=())


def _where(root: Node, start: int, end: int) -> Placement:
    node = root.descendant_for_byte_range(start, end)
    if node is None:
        return Placement(refused=UNKNOWN)
    chain: list[Node] = []
    walk: Node | None = node
    while walk is not None:
        if walk.is_error or walk.is_missing or walk.type not in _DATA:
            if walk.type in ARITH_NODES or _arith_statement(walk):
                return Placement(form=ARITH)
            return Placement(refused=UNKNOWN)
        chain.append(walk)
        if walk.type == "list":
            walk = _list_top(root, walk)  # `a && b && ...`: the lists between say nothing
            if walk.id != chain[-1].id:
                continue
        walk = walk.parent
    evaluated = _evaluated(chain, start) or _fed_to_shell(chain, start)
    if evaluated:
        return Placement(form=ARITH) if evaluated == ARITH else Placement(refused=evaluated)
    placed = _form(chain)
    if placed.words and (node.start_byte, node.end_byte) != (start, end):
        placed = replace(placed, words=False)  # part of a word: `a${words:...}` is one word
    commands = tuple(n for n in chain if n.type == "command")
    return replace(placed, program=_program(chain, start), commands=commands)


def _program(chain: list[Node], start: int) -> str:
    """The interpreter that gets the value at *start* as program text, in its words or in
    a here-document or here-string it reads its program from ("" when none)."""
    for inner, node in zip(chain, chain[1:], strict=False):
        if node.type == "command":
            fed = inner.type in ("heredoc_redirect", "herestring_redirect")
            return stdin_program(node) if fed else program_text(node, start)
        if node.type == "redirected_statement" and "redirect" in inner.type:
            body = node.child_by_field_name("body")
            if body is not None and body.type == "command":
                return stdin_program(body)
        if node.type in ("command_substitution", "process_substitution", "subshell"):
            return ""
    return ""


@lru_cache(maxsize=8)
def _list_tops(root: Node) -> dict[int, Node]:
    """For each `list` node of *root*'s tree met so far, the outermost `list` of the run of
    lists it is in (filled as they are met: tree-sitter nests `a && b && c` one list per
    operator, and each value walking them all would cost the square of their number)."""
    return {}


def _list_top(root: Node, node: Node) -> Node:
    """The outermost of the `list` nodes that hold *node* (a list) one inside the next."""
    tops = _list_tops(root)
    path: list[Node] = []
    walk = node
    while walk.id not in tops:
        parent = walk.parent
        if parent is None or parent.type != "list":
            tops[walk.id] = walk
            break
        path.append(walk)
        walk = parent
    top = tops[walk.id]
    for inner in path:
        tops[inner.id] = top
    return top


def _text(node: Node | None) -> str:
    return "" if node is None or node.text is None else node.text.decode(errors="replace")


def _arith_statement(node: Node) -> bool:
    """`((...))`, which tree-sitter reads as a compound statement opened by `((`."""
    if node.type != "compound_statement" or node.child_count == 0:
        return False
    first = node.child(0)
    return first is not None and first.type == "(("


def _evaluated(chain: list[Node], start: int) -> str:
    """ARITH, or why the value would run, when some node of *chain* (innermost first)
    reads the text of a variable as code; "" when none does."""
    for inner, node in zip(chain, chain[1:], strict=False):
        kind = node.type
        if _arith_statement(node) or _misread_arithmetic(node):
            return ARITH
        if kind == "expansion":
            found = _in_expansion(node, inner)
            if found:
                return found
        elif kind in ("binary_expression", "unary_expression") and _in_test(chain):
            op = node.child_by_field_name("operator")
            text = op.text.decode() if op is not None and op.text is not None else ""
            if text in _ARITH_TESTS and _in_double_brackets(chain):
                return ARITH  # `[ x -gt 2 ]` and `test` read a plain integer; `[[` evaluates
            if text == "-v":
                return "as the name a -v test reads (bash evaluates its subscript)"
        elif kind == "variable_assignment":  # `PS4=...; set -x`, or inside one's value
            problem = assigned(node, start, chain[-1])
            if problem and problem != ARITH:  # `a[0]=${...}`: only the subscript is
                return problem
        elif kind == "array" and b"[" in (inner.text or b""):
            return "in a compound array assignment, whose [subscripts] bash evaluates"
        elif kind in ("command", "declaration_command", "unset_command"):
            problem = command_problem(node, inner, start, chain[-1])
            if problem:
                return problem
        elif kind == "file_redirect" and any(c.type in (">&", "<&") for c in node.children):
            return "in the word after >& or <&, which bash expands twice (redirect with > instead)"
        elif kind == "pipeline":
            problem = pipeline_problem(node, inner)
            if problem:
                return problem
        elif kind == "redirected_statement":
            problem = _shell_input(node, start)
            if problem:
                return problem
    return ""


def _fed_to_shell(chain: list[Node], start: int) -> str:
    """Why the value reaches a shell through a process substitution: `bash < <(echo ...)`
    reads it as its script, and so does `>(bash)` fed by the command's output."""
    fed = "in the input of a shell that reads it as its script"
    for inner, node in zip(chain, chain[1:], strict=False):
        if node.type == "redirected_statement" and inner.type == "file_redirect":
            body = node.child_by_field_name("body")
            if body is not None and runs_stdin(body) and _reads(inner, start):
                return fed
        if node.type in ("command", "redirected_statement", "pipeline") and _shell_output(node):
            return fed
    return ""


def _reads(redirect: Node, start: int) -> bool:
    """True when *redirect* is `< <(...)` and the value at *start* is inside it."""
    return any(c.type == "<" for c in redirect.children) and any(
        c.type == "process_substitution" and c.start_byte <= start < c.end_byte
        for c in redirect.children
    )


@lru_cache(maxsize=4096)
def _shell_output(node: Node) -> bool:
    """True when some `>(...)` under *node* runs a shell that reads its input."""
    for child in node.children:
        if child.type == "process_substitution" and child.children[0].type == ">(":
            if _any_shell(child):
                return True
        elif child.type != "command_substitution" and _shell_output(child):
            return True
    return False


def _any_shell(node: Node) -> bool:
    """True when a command anywhere under *node* is a shell that may read its input."""
    return any(runs_stdin(c) or _any_shell(c) for c in node.children)


def _misread_arithmetic(node: Node) -> bool:
    """`$((...))` that tree-sitter reads as `$( (...) )` (in a here-document's text):
    bash reads it as arithmetic."""
    return node.type == "command_substitution" and (node.text or b"").startswith(b"$((")


def _in_test(chain: list[Node]) -> bool:
    return any(node.type == "test_command" for node in chain)


def _in_double_brackets(chain: list[Node]) -> bool:
    """True when the innermost test of *chain* is `[[ ... ]]`."""
    test = next((node for node in chain if node.type == "test_command"), None)
    return test is not None and test.child_count > 0 and test.children[0].type == "[["


def _in_expansion(node: Node, inner: Node) -> str:
    """How `${...}` reads the part *inner* of it: "" for data."""
    operator = ""
    for child in node.children:
        if child.id == inner.id:
            break
        if child.type not in ("${", "variable_name", "subscript", "special_variable_name"):
            operator = child.type
    if inner.type == "subscript":
        return ARITH
    if operator == "!" or (operator == "" and inner.type == "variable_name"):
        return "as a variable name in ${...} (bash reads ${!name} and subscripts as code)"
    if operator == ":":
        return ARITH
    return "" if operator in _DATA_OPERATORS else UNKNOWN


def _shell_input(node: Node, start: int) -> str:
    """Why a here-document or here-string that feeds a shell would run the value."""
    body = node.child_by_field_name("body")
    for child in node.children:
        inside = child.start_byte <= start < child.end_byte
        fed = inside and ((body is not None and runs_stdin(body)) or feeds_shell(child))
        if fed and child.type in ("heredoc_redirect", "herestring_redirect"):
            return "in a here-document a shell reads as its script"
    return ""


def _form(chain: list[Node]) -> Placement:
    """How the value is quoted where *chain* (innermost first) puts it."""
    for node in chain:
        kind = node.type
        if kind == "comment":
            return Placement(form=COMMENT)
        if kind in ("raw_string",):
            return Placement(form=SINGLE)
        if kind == "ansi_c_string":
            return Placement(form=ANSI)
        if kind in ("string", "translated_string"):
            return Placement(form=DOUBLE)
        if kind == "heredoc_body":
            return _heredoc(node)
        if kind in ("command_substitution", "process_substitution", "expansion", "array"):
            break
        if kind in ("word", "concatenation", "variable_assignment", "number", "variable_name"):
            continue
    for node in chain:
        if node.type in ("string", "translated_string"):
            return Placement(form=DOUBLE)  # a word inside "$(...)" is still a word
        if node.type in ("command_substitution", "process_substitution"):
            break
    return Placement(form=WORD, words=_whole_argument(chain))


def _whole_argument(chain: list[Node]) -> bool:
    """True when the innermost node is a whole word of a command's arguments or of a
    `for` list, where more words are more arguments."""
    leaf, parent = chain[0], chain[1] if len(chain) > 1 else None
    if leaf.type != "word" or parent is None:
        return False
    if parent.type == "command":
        return parent.child_by_field_name("name") is not None and leaf.type == "word"
    return parent.type == "for_statement"


def _heredoc(body: Node) -> Placement:
    redirect = body.parent
    if redirect is None:
        return Placement(refused=UNKNOWN)
    start = next((c for c in redirect.children if c.type == "heredoc_start"), None)
    if start is None or start.text is None:
        return Placement(refused=UNKNOWN)
    if not any(quote in start.text for quote in (b"'", b'"', b"\\")):
        return Placement(form=HEREDOC)
    if not re.fullmatch(rb"""['"\\]*[\w.-]+['"]?""", start.text):
        # Made unquoted (so the value can be expanded), `"E O"` would be two words.
        return Placement(refused="in a here-document whose quoted delimiter is not a plain word")
    where = (start.start_byte, start.end_byte, body.start_byte, body.end_byte)
    return Placement(form=HEREDOC_QUOTED, heredoc=where)
