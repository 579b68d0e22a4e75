"""Follow a value into the code it is handed to: an alias, a function, a `sh -c` script."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Sequence
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

from little_loops.fsm.values.shellcommands import SHELLS, WRAPPERS, parts

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

# Where a reference at (root, start, end) lands, followed through every call not yet in
# *seen* (so to any depth, each function's use once): shellparse's placement, handed in.
Seen = set[tuple[int, int, int]]
Place = Callable[["Node", int, int, Seen], Any]
ARITH = "arith"  # (shellparse.ARITH)
_NAMES = {"variable_name", "special_variable_name"}


@cache
def bash_parser() -> Parser:
    """The bash parser, made on first use: importing it costs ~15 ms no other command pays."""
    import tree_sitter

    return tree_sitter.Parser(tree_sitter.Language(_bash_grammar()))


def _bash_grammar() -> object:
    """tree-sitter-bash's grammar, from its compiled module alone: the package's `__init__`
    imports importlib.resources (and with it tempfile, random ...) for query files no
    parser reads. The package as it installs is the fallback."""
    import importlib.machinery
    import importlib.util
    import sys

    name = "tree_sitter_bash._binding"
    binding = sys.modules.get(name)
    if binding is None:
        package = importlib.util.find_spec("tree_sitter_bash")
        places = None if package is None else package.submodule_search_locations
        spec = None if places is None else importlib.machinery.PathFinder.find_spec(name, places)
        if spec is None or spec.loader is None:
            import tree_sitter_bash

            return tree_sitter_bash.language()
        binding = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(binding)
        # Not put in sys.modules: the package, imported later, would find it there and never
        # set it as its attribute (`tree_sitter_bash._binding` an AttributeError); it loads
        # the module again (multi-phase init: a new module of the same grammar).
    language: Callable[[], object] = binding.language
    return language()


def _text(node: Node | None) -> str:
    return "" if node is None or node.text is None else node.text.decode(errors="replace")


def nodes(root: Node) -> list[Node]:
    """Every node under *root*, *root* too."""
    found, pending = [], [root]
    while pending:
        node = pending.pop()
        pending += node.children
        found.append(node)
    return found


def calls(root: Node, start: int, commands: Sequence[Node], follow: Seen, place: Place) -> str:
    """Why the value at *start*, handed to an alias, a function the script defines or the
    script of `sh -c` by one of *commands* (those around it, innermost first: a value in
    `f "$(echo ...)"` reaches f too), would run there ("" when it stays data)."""
    for command in commands:
        why = _call(root, command, start, follow, place)
        if why:
            return why
    return ""


def _call(root: Node, node: Node, start: int, follow: Seen, place: Place) -> str:
    """Why the value at *start*, in the words of the command *node*, would run in what
    that command calls ("" when it stays data)."""
    named = node.child_by_field_name("name")
    if named is None or named.start_byte <= start < named.end_byte:
        return ""
    inner = _script_argument(node, start, follow, place)
    assigned = parts(node).assignments
    if inner or any(c.start_byte <= start < c.end_byte for c in assigned):
        return inner  # `V=${...} f`: an environment variable
    name = _text(named)
    if name == "set":  # `set -- ${...}`: the script's own $1, $@ ... from here on
        why = _used(root, root, {"@", "*", "#"}, follow, place)
        return f"as a positional parameter set by set, which the script puts {why}" if why else ""
    if name in _aliases(root):
        return f"in the arguments of alias {name}, which ll-loop cannot follow"
    for body in _bodies(root).get(name, []):
        why = _used(root, body, {"@", "*", "#"}, follow, place)
        if why:
            return f"as an argument of function {name}, which puts it {why}"
    return ""


def _used(root: Node, body: Node, names: set[str], follow: Seen, place: Place) -> str:
    """Where the variables *names* (any positional parameter too, when *names* holds "#")
    land in *body* when one of them is not data there."""
    for node in nodes(body):
        if node.type not in ("simple_expansion", "expansion"):
            continue
        found = [c for c in node.children if c.type in _NAMES or c.type == "number"]
        name = _text(found[0]) if found else ""
        if not (name in names or ("#" in names and name.isdigit())):
            continue
        how = _read_as_code(node)
        if how:
            return how
        if _runs_as_command(node):
            return "as the command it runs (unquoted: its words name a command and arguments)"
        where = place(root, node.start_byte, node.end_byte, follow)
        if where.refused or where.form == ARITH:
            return str(where.refused or "in bash arithmetic")
    return ""


def _read_as_code(expansion: Node) -> str:
    """Why `${!1}`, `${1@P}` ... read the variable's value as a name or as code."""
    kinds = [c.type for c in expansion.children]
    text = _text(expansion)
    if "!" in kinds[:2] or text.startswith("${!"):
        return "as a variable name in ${!...} (bash evaluates its subscript)"
    if text.endswith("@P}"):
        return "in ${...@...}, which may expand it as a prompt (running $(...) in it)"
    return ""


def _runs_as_command(expansion: Node) -> bool:
    """True when the unquoted *expansion* is the command's name, or follows only wrappers
    (`$1`, `sudo $1`): bash splits it, and its first word names the command to run."""
    word = expansion.parent
    if word is not None and word.type == "command_name":
        return True
    if word is None or word.type != "command":
        return False
    facts = parts(word)
    position = facts.position(expansion.start_byte)
    before = facts.words[:position] if position > 0 else []
    return bool(before) and all(
        (_text(w).rsplit("/", 1)[-1] in WRAPPERS or _text(w).startswith("-")) for w in before
    )


@lru_cache(maxsize=64)
def _aliases(root: Node) -> frozenset[str]:
    """The names of the aliases the script defines (read once per script: a node is kept
    with its tree, so a cached one is never another's)."""
    commands = [n for n in nodes(root) if n.type == "command"]
    defining = [n for n in commands if _text(n.child_by_field_name("name")) == "alias"]
    words = [w for n in defining for w in n.children[1:]]
    return frozenset(re.sub(r"""['"\\]""", "", _text(w)).split("=", 1)[0] for w in words)


@lru_cache(maxsize=64)
def _bodies(root: Node) -> dict[str, list[Node]]:
    """The bodies of the functions the script defines, by name."""
    found: dict[str, list[Node]] = {}
    for node in nodes(root):
        body = node.child_by_field_name("body") if node.type == "function_definition" else None
        if body is not None:
            found.setdefault(_text(node.child_by_field_name("name")), []).append(body)
    return found


def _script_argument(command: Node, start: int, follow: Seen, place: Place) -> str:
    """Why the value at *start* would run in the script of a `sh -c SCRIPT` it is handed
    to: after the script (`$1` ...), or in a variable set for it (`V=... sh -c`)."""
    found = _shell_script(command)
    if found is None:
        return ""
    words, shell, script = found
    names = _names(command, list(words), start, shell, script)
    if not names:
        return ""
    text = _literal_script(words[script])
    if text is None:
        return (
            f"as an argument of the script {_text(words[shell])} -c runs, which ll-loop "
            "cannot read (write it in single quotes)"
        )
    sub = _parsed(text)
    if sub.has_error:
        return f"as an argument of the script {_text(words[shell])} -c runs, unreadable"
    why = _used(sub, sub, names, follow, place)
    return f"as an argument of the script {_text(words[shell])} -c runs, {why}" if why else ""


@lru_cache(maxsize=256)
def _shell_script(command: Node) -> tuple[tuple[Node, ...], int, int] | None:
    """A command's words, where they name a shell and where its `-c` script is (once per
    command, not once per value); None when it runs no `sh -c`."""
    words = [c for c in command.children if c.type not in ("variable_assignment", "comment")]
    words = [w for w in words if "redirect" not in w.type]
    shell = next((i for i, w in enumerate(words) if _text(w).rsplit("/", 1)[-1] in SHELLS), -1)
    script = shell + 1
    while shell >= 0 and script < len(words) and _text(words[script]).startswith(("-", "+")):
        script += 1
    options = "".join(_text(w) for w in words[shell + 1 : script] if not _text(w).startswith("--"))
    if shell < 0 or script >= len(words) or "c" not in options:
        return None
    return tuple(words), shell, script


@lru_cache(maxsize=64)
def _parsed(script: str) -> Node:
    return bash_parser().parse(script.encode()).root_node


def _names(command: Node, words: list[Node], start: int, shell: int, script: int) -> set[str]:
    """The names the script reads the value at *start* by: `$1`, `$@` ... or `$V`."""
    for child in command.children:
        if child.type == "variable_assignment" and child.start_byte <= start < child.end_byte:
            return {_text(child.child_by_field_name("name"))}
    position = _at(words, start)
    if position > script:
        return {str(position - script - 1), "@", "*"}
    assigned = re.match(r"([A-Za-z_]\w*)=", _text(words[position])) if position >= 0 else None
    return {assigned.group(1)} if assigned and position < shell else set()


def _at(words: list[Node], start: int) -> int:
    """The index of the word of *words* holding byte *start*, else -1."""
    index = bisect_right([w.start_byte for w in words], start) - 1
    return index if index >= 0 and start < words[index].end_byte else -1


def _literal_script(word: Node) -> str | None:
    """The text of a script written as a plain word or in single quotes, else None."""
    text = _text(word)
    if word.type == "raw_string":
        return text[1:-1]
    if word.type == "word" and not any(c in text for c in "$`\\'\""):
        return text
    return None
