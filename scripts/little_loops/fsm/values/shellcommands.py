"""The commands that run their arguments (or their input) as code, and what they refuse."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tree_sitter import Node

# (`busybox` is a wrapper: `busybox sh -c ...` names the shell after it.)
SHELLS = {"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh"}
SHELLS |= {"yash", "posh", "rbash", "oksh", "pdksh", "loksh"}
# Their arguments are code (or name a file or variables whose contents bash evaluates).
CODE = {"eval", "source", ".", "trap", "coproc", "alias", "bind", "enable", "fc"}
CODE |= {"unset", "read", "getopts", "mapfile", "readarray", "wait", "compgen", "complete"}
CODE |= {"ssh", "watch", "parallel", "su", "runuser", "sg", "script", "flock"}
# Commands that run the command their arguments name: what follows may be a shell.
WRAPPERS = {"env", "sudo", "doas", "nice", "nohup", "timeout", "time", "command", "builtin"}
WRAPPERS |= {"exec", "xargs", "setsid", "stdbuf", "ionice", "chroot", "unshare", "taskset"}
WRAPPERS |= {"chrt", "cgexec", "firejail", "systemd-run", "strace", "ltrace", "caffeinate"}
WRAPPERS |= {"find", "nsenter", "prlimit", "numactl", "faketime", "fakeroot", "unbuffer"}
WRAPPERS |= {"rlwrap", "torsocks", "proxychains", "catchsegv", "valgrind", "gdb", "busybox"}
DECLARE = {"declare", "typeset", "local", "export", "readonly"}
# Variables whose contents bash runs (or that make it load code).
CODE_VARIABLES = {"BASH_ENV", "ENV", "PS0", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND"}
CODE_VARIABLES |= {"SHELLOPTS", "BASHOPTS", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT"}
CODE_VARIABLES |= {"IFS", "PATH", "BASH_LOADABLES_PATH", "EXECIGNORE", "GLOBIGNORE"}
CODE_VARIABLES |= {"BASH_ALIASES", "BASH_CMDS"}  # an alias's text, a command's program
# Variables whose assigned value bash evaluates as arithmetic (bash 5.2 evaluates RANDOM,
# SRANDOM, OPTIND and HISTCMD; the others are dynamic too, refused in case a bash does).
ARITH_VARIABLES = {"RANDOM", "SRANDOM", "OPTIND", "HISTCMD", "SECONDS", "LINENO"}
ARITH_VARIABLES |= {"EPOCHSECONDS", "EPOCHREALTIME", "BASHPID", "BASH_SUBSHELL", "OPTERR"}
# env's option that splits its value into a command line and runs it: -S, -iS, --split-string.
_SPLIT = r"-[^-]*S|--s"
_ENV_OPTION_VALUES = {"-u", "-C", "-a", "--unset", "--chdir", "--argv0"}
_SHELL_OPTION_VALUES = {"-o", "+o", "-O", "+O", "--rcfile", "--init-file"}

# Statements made of statements: each inside reads the input the whole one is given.
_COMPOUND = {"subshell", "compound_statement", "if_statement", "elif_clause", "else_clause"}
_COMPOUND |= {"while_statement", "for_statement", "c_style_for_statement", "do_group"}
_COMPOUND |= {"case_statement", "case_item", "list", "pipeline", "negated_command"}
_STDIN_FILES = {"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"}
ARITH = "arith"  # (shellparse.ARITH) an integer is pasted as digits, else refused
RUNS = "in the arguments of {name}, which bash reads as code"


def _text(node: Any) -> str:
    return "" if node is None or node.text is None else node.text.decode(errors="replace")


def _literal(node: Any) -> str | None:
    """A word's text when bash reads it as it is written, else None."""
    if node.type == "command_name" and node.child_count == 1:
        node = node.children[0]
    if node.type in ("word", "number"):
        text = _text(node)
        return None if any(c in text for c in "$`\\'\"") else text
    return None


def _name(text: str) -> str:
    return text.rsplit("/", 1)[-1]


# Words that may stand before the command a here-document or pipe feeds (`coproc { bash`).
_BEFORE_COMMAND = {"coproc", "{", "time", "!", "-p"}


class _Word:
    """One bash word of a command: the nodes tree-sitter gives for it, side by side with
    nothing between (it splits some, as `$"..."` into `$` and a string)."""

    def __init__(self, nodes: list[Node]) -> None:
        self.nodes = nodes
        self.start_byte, self.end_byte = nodes[0].start_byte, nodes[-1].end_byte
        self.type = nodes[0].type if len(nodes) == 1 else "concatenation"
        self.text = b"".join(n.text or b"" for n in nodes)


def _words(command: Node) -> list[Any]:
    """The words of *command* (its name and arguments, not assignments or redirects)."""
    words: list[_Word] = []
    for child in command.children:
        if child.type in ("variable_assignment", "comment") or "redirect" in child.type:
            continue
        if words and words[-1].end_byte == child.start_byte:
            words[-1] = _Word([*words[-1].nodes, child])
        else:
            words.append(_Word([child]))
    return [w.nodes[0] if len(w.nodes) == 1 else w for w in words]


# A word of these names may change what the words after it are (see _words_problem).
_HEADS = SHELLS | CODE | DECLARE | {"let", "printf", "test", "[", "env", "."}


class Parts:
    """A command's words, assignments and inputs, read once per command (not once per
    value in it, so that a command of 10,000 values costs 10,000 steps, not 10,000²)."""

    def __init__(self, command: Node) -> None:
        self.words = _words(command)
        self.starts = [w.start_byte for w in self.words]
        children = command.children
        self.assignments = [c for c in children if c.type == "variable_assignment"]
        self.inputs = [c for c in children if c.type in ("heredoc_redirect", "herestring_redirect")]
        literals = [_literal(w) for w in self.words]
        names = [None if text is None else _name(text) for text in literals]
        self.shells = tuple(i for i, name in enumerate(names) if name in SHELLS)
        # The heads _words_problem must look at: the first word, and any word that is not
        # a plain one or that names something that reads the words after it.
        self.heads = [i for i, name in enumerate(names) if i == 0 or name is None or name in _HEADS]
        self.dash_v = [i for i, w in enumerate(self.words) if _text(w) == "-v"]
        self.programs = [i for i, name in enumerate(names) if _interpreter(name)]

    def position(self, start: int) -> int:
        """The index of the word holding byte *start*, else -1."""
        index = bisect_right(self.starts, start) - 1
        return index if index >= 0 and start < self.words[index].end_byte else -1

    def dash_v_between(self, low: int, high: int) -> bool:
        """True when a word `-v` stands at an index from *low* up to (not) *high*."""
        index = bisect_left(self.dash_v, low)
        return index < len(self.dash_v) and self.dash_v[index] < high


@lru_cache(maxsize=256)
def parts(command: Node) -> Parts:
    """*command*'s Parts (a cached node keeps its tree, so it is never another tree's)."""
    return Parts(command)


def command_problem(command: Node, inner: Node, start: int, root: Node | None = None) -> str:
    """Why the reference at byte *start*, in the part *inner* of *command*, would run
    (*root*: the script it is in)."""
    if command.type == "unset_command":
        return RUNS.format(name="unset")
    if command.type == "declaration_command":
        return _declaration(command, inner, start, root)
    facts = parts(command)
    for child in facts.inputs:
        if child.start_byte <= start < child.end_byte:
            return (
                "in the input of a shell that reads it as its script" if runs_stdin(command) else ""
            )
    words = facts.words
    assigned = _assignment(facts, start, root)
    if assigned:
        return assigned
    if inner.type == "variable_assignment" or not words:
        return ""  # `V=${...} cmd`: an environment variable for cmd
    position = facts.position(start)
    if position == 0 and split_by_bash(words[0], start):
        return SPLIT  # `$(echo ${...}) x`: the value's first word would name the command
    if position <= 0:
        return ""  # the command's name: a program named by the value (one word)
    variable = _text(words[position]).split("=", 1)[0].removesuffix("+")
    integers = frozenset() if root is None else integer_names(root)
    if "=" in _text(words[position]) and _code_variable(variable, integers):
        # `env PS4=... bash -x`, `time -p ! PS4=...`: an assignment all the same
        return _code_variable(variable, integers)
    return _words_problem(facts, position, start)


def _words_problem(facts: Parts, position: int, start: int) -> str:
    """Why the word at *position* of a command's words would run: the first names the
    command, and each wrapper (env, sudo, timeout ...) may name another after it."""
    words = facts.words
    for head in facts.heads:
        if head >= position:
            break
        literal = _literal(words[head])
        if literal is None:
            return "in the arguments of a command whose name is not a plain word"
        name = _name(literal)
        if name in SHELLS:
            return _shell_arguments(words, head, position, name)
        # `.` is a path in `find . -exec ...`; after any other word it may be `source`.
        path = name == "." and head > 0 and _literal(words[0]) == "find"
        if name in CODE and not path:
            return RUNS.format(name=name)
        if name == "let":
            return ARITH
        if name in DECLARE and head > 0:  # `time -p declare -i n=...`, read as words
            return f"in the arguments of {name} behind {_text(words[0])} (read as plain words)"
        if name == "printf" and _in_options(words, head, position):
            # `printf -v NAME`, `-vNAME`, or a value that starts with -v: a variable name
            return (
                "where printf reads its options (a name after -v, or a value starting with "
                "-v, is a variable whose subscript bash evaluates; write printf -- or a "
                "format first)"
            )
        if name in ("test", "[") and facts.dash_v_between(head, len(words)):
            return "as the name a -v test reads (bash evaluates its subscript)"
        before = words[position - 1] if position > head + 1 else None
        if name in ("test", "[") and before is not None and _quoted_literal(before) is None:
            # `[ ${a} ${b} ]`: a value -v makes the next one a name whose subscript runs
            return "after a value in a test, which may be the operator -v that reads a name"
        problem = _env_problem(words, head, position) if name == "env" else ""
        if problem:
            return problem
        if name not in WRAPPERS and head == 0:
            return _hidden_shell(facts, position)
        # a wrapper: any later word may name the command it runs
    if split_by_bash(words[position], start):
        return SPLIT  # `env X=$(echo ${...})`: its words would be what the wrapper runs
    return ""


# Programs that run text handed to them as code (beyond bash: a warning, not a refusal):
# the options whose value is program text, and whether their first operand is one (awk).
INTERPRETERS: dict[str, tuple[frozenset[str], bool]] = {
    "python": (frozenset({"-c"}), False),
    "pypy": (frozenset({"-c"}), False),
    "node": (frozenset({"-e", "--eval", "-p", "--print"}), False),
    "nodejs": (frozenset({"-e", "--eval", "-p", "--print"}), False),
    "perl": (frozenset({"-e", "-E"}), False),
    "ruby": (frozenset({"-e"}), False),
    "php": (frozenset({"-r"}), False),
    "lua": (frozenset({"-e"}), False),
    "Rscript": (frozenset({"-e"}), False),
    "osascript": (frozenset({"-e"}), False),
    "awk": (frozenset({"-e", "--source"}), True),
    "sed": (frozenset({"-e", "--expression"}), True),
}
for _alias, _same in {"gawk": "awk", "mawk": "awk", "nawk": "awk", "gsed": "sed"}.items():
    INTERPRETERS[_alias] = INTERPRETERS[_same]
# Their options that take the next word as a value that is not program text.
_PROGRAM_OPTION_VALUES = {"-F", "-v", "-f", "--file", "-i", "-m", "-W", "-r", "-I", "-M"}


def _interpreter(name: str | None) -> str:
    """The INTERPRETERS key *name* stands for ("python3.11" is python), else ""."""
    if not name:
        return ""
    plain = re.sub(r"[0-9.]+$", "", name)
    return plain if plain in INTERPRETERS else ""


def program_text(command: Node, start: int) -> str:
    """The interpreter (python3, node, awk ...) that gets the value at byte *start* of
    *command* as its program text ("" when none does)."""
    facts = parts(command)
    position = facts.position(start)
    words = facts.words
    for index in facts.programs:
        if index >= position:
            break
        name = _name(_literal(words[index]) or "")
        options, operand = INTERPRETERS[_interpreter(name)]
        before = _text(words[position - 1]) if position - 1 > index else ""
        text = _text(words[position])
        if before in options or any(len(o) == 2 and text.startswith(o) for o in options):
            return name
        if operand and position == _first_operand(words, index, options):
            return name
    return ""


def stdin_program(command: Node) -> str:
    """The interpreter that *command* runs with no program text in its words, so that it
    reads its program from its input (`python3 - <<EOF`, `node <<EOF`), else ""."""
    facts = parts(command)
    for index in facts.programs[:1]:
        name = _name(_literal(facts.words[index]) or "")
        options, operand = INTERPRETERS[_interpreter(name)]
        rest = [_text(w) for w in facts.words[index + 1 :]]
        if operand or any(w in options or w.startswith(tuple(options)) for w in rest):
            return ""
        script = next((w for w in rest if not w.startswith("-") or w == "-"), "-")
        return name if script in ("-", *_STDIN_FILES) else ""
    return ""


def _first_operand(words: list[Any], index: int, options: frozenset[str]) -> int:
    """Where awk's (sed's) program operand is: the first word after its options; -1 when
    an option gives the program (`-f FILE`, `-e TEXT`)."""
    at = index + 1
    while at < len(words):
        text = _text(words[at])
        if text in options or text in ("-f", "--file") or text.startswith("--file="):
            return -1
        if text == "--":
            return at + 1
        if text in _PROGRAM_OPTION_VALUES:
            at += 2
        elif text.startswith("-") and text != "-":
            at += 1
        else:
            return at
    return -1


def _in_options(words: list[Any], head: int, position: int) -> bool:
    """True when the word at *position* is where the command at *head* still reads options:
    every word between is an option (`--` ends them; a value there may start with `-`)."""
    for index in range(head + 1, position):
        text = _quoted_literal(words[index])
        if text is None:
            return True  # a value or an expansion: it may be an option
        if text == "--" or not text.startswith("-"):
            return False
    return True


_DOUBLE_QUOTED_ESCAPE = r'\\([$`"\\\n])'  # compiled on first use (re's cache)


def _unescaped(found: re.Match[str]) -> str:
    return "" if found.group(1) == "\n" else found.group(1)


def _quoted_literal(word: Any) -> str | None:
    """A word's text as bash reads it when that is fixed: a plain word, '...', or "..."
    with no expansion in it; else None."""
    if word.type == "raw_string":
        return _text(word)[1:-1]
    if word.type == "string" and all(c.type in ('"', "string_content") for c in word.children):
        # In double quotes a backslash escapes only $ ` " \ and a newline; elsewhere it stays.
        return re.sub(_DOUBLE_QUOTED_ESCAPE, _unescaped, _text(word)[1:-1])
    return _literal(word)


SPLIT = "in an unquoted $(...) where bash splits its output into the command to run"


def split_by_bash(word: Any, start: int) -> bool:
    """True when the value at byte *start* of *word* comes out of a command substitution
    (or backticks) that no double quotes enclose, so bash splits it into words."""
    nodes = list(word.nodes) if isinstance(word, _Word) else [word]
    while nodes:
        node = next((n for n in nodes if n.start_byte <= start < n.end_byte), None)
        if node is None or node.type in ("string", "raw_string", "translated_string"):
            return False
        if node.type == "command_substitution":
            return True
        nodes = list(node.children)
    return False


def _env_problem(words: list[Node], head: int, position: int) -> str:
    """Why the word at *position* would run, where env (at *head*) reads it: its options
    (-S makes the rest a command line) and its NAME=VALUE words come before its command."""
    index = head + 1
    while index <= position and index < len(words):
        text = _text(words[index])
        if re.match(_SPLIT, text):
            return "in the command line env -S (--split-string) splits and runs"
        if index == position:
            named = re.match(r"([A-Za-z_][A-Za-z0-9_]*)=", text)
            if named is None:
                return "before env's command, where env reads it as an option or NAME=VALUE"
            return _code_variable(named.group(1))
        if text in _ENV_OPTION_VALUES:
            index += 2
        elif text.startswith("-") or "=" in text:
            index += 1
        else:
            return ""  # the command env runs: what follows is its own
    return ""


def _hidden_shell(facts: Parts, position: int) -> str:
    """Why the word at *position* is the script of a shell's `-c` named by a later word of
    a command ll-loop does not know (`setpriv sh -c ...`, `docker run img sh -c ...`)."""
    words = facts.words
    for index in facts.shells:
        name = _name(_literal(words[index]) or "")
        if 0 < index < position:
            problem = _shell_arguments(words, index, position, name)
            if problem == f"as the script {name} runs":
                return problem
    return ""


def _shell_arguments(words: list[Node], head: int, position: int, name: str) -> str:
    """A shell's script is code (`bash -c SCRIPT`, `bash FILE`); its later arguments are
    data (`bash -c '...' _ ${...}`)."""
    index = head + 1
    command_string = False
    while index < len(words):
        text = _text(words[index])
        if text in _SHELL_OPTION_VALUES:
            index += 2
            continue
        if text in ("-", "--"):
            if index == position:
                return f"in the options of {name}"
            index += 1  # the end of its options: the next word is its script
            break
        if not text.startswith(("-", "+")):
            break
        if text.startswith("-") and not text.startswith("--") and "c" in text:
            command_string = True
        if index == position:
            return f"in the options of {name}"
        index += 1
    if position == index or (position > head and words[position].type == "process_substitution"):
        what = "script" if command_string else "script file"
        return f"as the {what} {name} runs"
    if position < index:
        return f"in the options of {name}"
    return ""


def _assignment(facts: Parts, start: int, root: Node | None) -> str:
    for child in facts.assignments:
        if child.start_byte <= start < child.end_byte:
            return assigned(child, start, root)
    return ""


def assigned(assignment: Node, start: int, root: Node | None = None) -> str:
    """Why a value at byte *start* of *assignment* would run ("" when it is data); *root*:
    the script, whose `declare -i` names are evaluated as arithmetic."""
    named = assignment.child_by_field_name("name")
    if named is not None and named.start_byte <= start < named.end_byte:
        return "in the name of a variable bash assigns (it evaluates subscripts there)"
    name = _text(named)
    problem = _code_variable(name, frozenset() if root is None else integer_names(root))
    if problem:
        return problem
    value = assignment.child_by_field_name("value")
    if value is not None and value.type == "array" and "[" in _text(value):
        return "in a compound array assignment, whose [subscripts] bash evaluates"
    if "[" in name:
        return ARITH
    return ""


def _code_variable(name: str, integers: frozenset[str] = frozenset()) -> str:
    """Why a value assigned to the variable *name* would run ("" for most names); the
    script declares the variables *integers* with -i (all of them when it holds "*")."""
    if name.split("[", 1)[0] in CODE_VARIABLES or name.startswith("BASH_FUNC_"):
        return f"as the value of {name}, which bash or the programs it starts read as code"
    if name in ARITH_VARIABLES or name in integers or "*" in integers:
        return f"as the value of {name}, which bash evaluates as arithmetic (subscripts run)"
    return ""


@lru_cache(maxsize=64)
def integer_names(root: Node) -> frozenset[str]:
    """The variables a script declares with -i (declare, typeset, local ... in any spelling
    of the flags); "*" when it declares one whose name ll-loop cannot read."""
    found: set[str] = set()
    pending = [root]
    while pending:
        node = pending.pop()
        pending += node.children
        if node.type != "declaration_command":
            continue
        words = [_text(c) for c in node.children[1:]]
        if not any(w.startswith(("-", "+")) and "i" in w for w in words):
            continue
        for child in node.children[1:]:
            text = _text(child)
            if text.startswith(("-", "+")):
                continue
            assigns = child.type == "variable_assignment"
            name = child.child_by_field_name("name") if assigns else child
            plain = None if name is None else _literal(name)
            if name is not None and name.type == "variable_name":
                plain = _text(name)
            found.add(plain if plain and re.fullmatch(r"\w+", plain) else "*")
    return frozenset(found)


def _declaration(command: Node, inner: Node, start: int, root: Node | None) -> str:
    flags = "".join(_text(c) for c in command.children if _text(c).startswith(("-", "+")))
    if any(flag in flags for flag in "inaA"):
        return "in a declare/local/export with -i, -n, -a or -A, which evaluate values"
    if inner.type != "variable_assignment":
        return "as a name declare/local/export reads (bash evaluates subscripts and =(...))"
    return assigned(inner, start, root) or (
        "in a compound assignment =(...)" if _text(inner).find("=(") >= 0 else ""
    )


def runs_stdin(command: Node) -> bool:
    """True when *command* (maybe behind wrappers) is a shell or `source` reading its
    script from stdin (no script argument, or `-s`), or may be (`bash -c`, `"$SHELL"`)."""
    if command.type == "redirected_statement":
        body = command.child_by_field_name("body")
        return body is not None and runs_stdin(body)
    if command.type in ("list", "pipeline", "negated_command") or command.type in _COMPOUND:
        # `a && bash <<EOF` (tree-sitter hangs the here-document on the whole list),
        # `| { bash; }`, `| while read l; do eval "$l"; done`
        return any(runs_stdin(child) for child in command.named_children)
    if command.type != "command":
        return False
    words = parts(command).words
    for index, word in enumerate(words):
        literal = _literal(word)
        if literal is None:
            return True  # `"$SHELL" <<EOF`: cannot tell, so assume the worst
        name = _name(literal)
        if name in ("eval", "source", "."):
            return index == 0 or name != "."  # what it runs may read its input as code
        if name in SHELLS:
            return _shell_reads_stdin(words[index + 1 :])
        if index == 0 and name not in WRAPPERS | _BEFORE_COMMAND:
            return False
    return False


def _shell_reads_stdin(rest: list[Node]) -> bool:
    """True unless a shell's arguments *rest* name a script file other than its input
    (`bash -O extglob script`: `extglob` is the option's value; `bash /dev/stdin` reads it);
    `bash -c '...'` or `-s` may read its input as code too."""
    index = 0
    while index < len(rest):
        text = _text(rest[index])
        if text in _SHELL_OPTION_VALUES:
            index += 2
        elif text == "--":
            index += 1
            break
        elif text.startswith(("-", "+")):
            if "c" in text or "s" in text:
                return True
            index += 1
        else:
            break
    if index >= len(rest):
        return True
    script = _literal(rest[index])
    return script is None or script in _STDIN_FILES


def feeds_shell(redirect: Node) -> bool:
    """True when a here-document's text goes on through a pipe to a shell reading it
    (`cat <<EOF | bash`: tree-sitter keeps that pipe inside the redirect)."""
    for child in redirect.children:
        if child.type == "pipeline" and any(runs_stdin(c) for c in child.children):
            return True
    return False


def pipeline_problem(pipeline: Node, inner: Node) -> str:
    """Why a value in *inner*, a part of *pipeline*, reaches a shell reading stdin."""
    if inner.start_byte < _last_shell(pipeline):
        return "in the input of a shell that reads it as its script"
    return ""


@lru_cache(maxsize=256)
def _last_shell(pipeline: Node) -> int:
    """Where the last part of *pipeline* that is a shell reading its input starts (-1:
    none is), read once per pipeline."""
    shells = [child.start_byte for child in pipeline.children if runs_stdin(child)]
    return shells[-1] if shells else -1
