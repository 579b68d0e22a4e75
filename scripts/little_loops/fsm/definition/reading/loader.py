"""Read loop files: YAML text to plain data plus the line of every key (the only YAML reader)."""

from __future__ import annotations

import gc
import os
import re
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from little_loops.fsm.definition.reading.yaml_hints import explain
from little_loops.fsm.facts.errors import LoopFileError

# PyYAML compiles its patterns as it is imported, most of which this loader never uses: the
# pure-Python reader's check for forbidden characters (a class up to U+10FFFF that `re`
# builds code point by code point, ~57 M instructions, more than the rest of PyYAML
# together; the C parser never reads it), the YAML 1.1 bool, int, float and timestamp
# resolvers this loader replaces. So each is compiled the first time it is used.


class _CompiledWhenUsed:
    """A pattern compiled the first time something of it is asked for (`match` ...)."""

    def __init__(self, pattern: Any, flags: int) -> None:
        self._pattern, self._flags = pattern, flags
        self._compiled: re.Pattern[Any] | None = None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # no pattern has one (and a copy being set up asks)
            raise AttributeError(name)
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self._pattern, self._flags)
        value = getattr(compiled, name)
        self.__dict__[name] = value  # found at once the next time (`match`: every scalar)
        return value


@contextmanager
def _yaml_patterns_compiled_when_used() -> Iterator[None]:
    """While PyYAML is imported, `re.compile` called by its own modules gives a pattern that
    compiles when used; a call from anywhere else (another thread) compiles as always."""
    compile_now = re.compile

    def compile_or_defer(pattern: Any, flags: int = 0) -> Any:
        caller = sys._getframe(1).f_globals.get("__name__", "")
        if caller == "yaml" or caller.startswith("yaml."):
            return _CompiledWhenUsed(pattern, flags)
        return compile_now(pattern, flags)

    setattr(re, "compile", compile_or_defer)  # noqa: B010 (mypy: not re.compile's type)
    try:
        yield
    finally:
        setattr(re, "compile", compile_now)  # noqa: B010


with _yaml_patterns_compiled_when_used():
    import yaml

KeyPath = tuple[str | int, ...]

# The C parser when PyYAML was built with libyaml; the pure-Python one otherwise (both
# have the SafeLoader interface, which is what the type checker is told).
if TYPE_CHECKING:
    _BaseLoader = yaml.SafeLoader
else:
    _BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# Guard against YAML 1.1 booleans: `on`, `off`, `yes`, `no`, `y`, `n` stay strings, so a
# state called `yes` or a key `on` is not silently turned into True. Only true/false are bools.
_BOOL_TAG = "tag:yaml.org,2002:bool"
_BOOL_RE = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")

# Bound on constructed nodes, so alias bombs ("billion laughs") fail fast instead of
# exhausting memory.
_MAX_NODES = 200_000
MAX_FILE_BYTES = 32 * 1024 * 1024  # a loop or context file, read whole before parsing
_COLLECTION_TAGS = ("tag:yaml.org,2002:map", "tag:yaml.org,2002:seq")
# The deepest nesting of mappings and lists (the top level is 1), so that nothing reading
# the data (compile, the writer, interpolation) recurses past Python's limit.
MAX_NESTING = 100
_MERGE_TAG = "tag:yaml.org,2002:merge"
# The key tags flatten_mapping acts on: a `<<:` merge, and `=` (it retags that a string).
_FLATTENED_TAGS = (_MERGE_TAG, "tag:yaml.org,2002:value")


# Numbers as YAML 1.2 writes them, not 1.1: `1e3` is a number, while `010` is ten (not
# octal eight), and `1:30` (not 90), `1_000` and `0b11` stay strings.
_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"
_STR_TAG = "tag:yaml.org,2002:str"
INT_RE = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
FLOAT_RE = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)


_MAX_INT_BITS = 14_000  # about 4200 decimal digits, under Python's limit of 4300


class _LoopYamlLoader(_BaseLoader):
    """Safe loader with YAML 1.2-style booleans and numbers."""

    # It has no path resolvers (a node's tag never depends on where it stands), so the
    # composer's steps down and up have nothing to record: PyYAML's return at once too,
    # after reading the resolvers; these are called twice per node of a big file.
    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        return None

    def ascend_resolver(self) -> None:
        return None

    def resolve(self, kind: type[yaml.Node], value: str | None, implicit: Any) -> str:
        """PyYAML's `BaseResolver.resolve` for a loader with no path resolvers: the tag of a
        node written with none, with the implicit resolvers of each first character (and the
        wildcard ones after them) joined once, in `_IMPLICIT`, not on every scalar."""
        if kind is yaml.ScalarNode:
            if implicit[0] and value is not None:
                for tag, regexp in _IMPLICIT.get(value[:1], _IMPLICIT_ANY):
                    if regexp.match(value):
                        return tag
            return self.DEFAULT_SCALAR_TAG
        if kind is yaml.SequenceNode:
            return self.DEFAULT_SEQUENCE_TAG
        return self.DEFAULT_MAPPING_TAG


# Dates stay strings too (`released: 2001-12-14`): loop data must be plain JSON values.
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
_REPLACED_TAGS = (_BOOL_TAG, _TIMESTAMP_TAG, _INT_TAG, _FLOAT_TAG)
_LoopYamlLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in _REPLACED_TAGS]
    for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
}
_LoopYamlLoader.add_implicit_resolver(_BOOL_TAG, _BOOL_RE, list("tTfF"))
# The int pattern is tried first: `12` is an int, `12.0` and `1e3` are floats.
_LoopYamlLoader.add_implicit_resolver(_INT_TAG, INT_RE, list("-+0123456789"))
_LoopYamlLoader.add_implicit_resolver(_FLOAT_TAG, FLOAT_RE, list("-+0123456789."))
# The resolvers `resolve` tries for a scalar by its first character, in PyYAML's order: that
# character's, then the wildcard ones (first character None).
_Resolvers = tuple[tuple[str, re.Pattern[str]], ...]
_IMPLICIT_ANY: _Resolvers = tuple(_LoopYamlLoader.yaml_implicit_resolvers.get(None, ()))
_IMPLICIT: dict[str, _Resolvers] = {
    first: (*resolvers, *_IMPLICIT_ANY)
    for first, resolvers in _LoopYamlLoader.yaml_implicit_resolvers.items()
    if first is not None
}


def _yaml12_number(tag: str, text: str) -> int | float:
    """The value of a scalar tagged int or float, read the YAML 1.2 way (ValueError if bad)."""
    if not (INT_RE if tag == _INT_TAG else FLOAT_RE).match(text):
        raise ValueError(text)  # `!!int 1_000`: a tag does not bring back YAML 1.1 forms
    if tag == _INT_TAG:
        if text.startswith(("0o", "0x")):
            value = int(text[2:], 8 if text[1] == "o" else 16)
            # Python writes no int of over 4300 digits (json.dumps of the state would fail).
            if value.bit_length() > _MAX_INT_BITS:
                raise ValueError(text)
            return value
        return int(text, 10)
    lowered = text.lower()
    if lowered in (".inf", "+.inf", "-.inf"):
        return float(lowered.replace(".", ""))
    if lowered == ".nan":
        return float("nan")
    return float(text)


@dataclass
class LoadedDocument:
    """A parsed loop file: its data and the 1-based line of each key path.

    *files* names the file of a key path that came from another file than *source* (a
    fragment library, a base loop: see `reuse`); a line is a line of that file.
    """

    data: dict[str, Any]
    source: str
    lines: dict[KeyPath, int] = field(default_factory=dict)
    files: dict[KeyPath, str] = field(default_factory=dict)

    def line_of(self, path: KeyPath) -> int | None:
        """The line of *path*, or of its nearest ancestor that has one."""
        return self.where_of(path)[1]

    def where_of(self, path: KeyPath) -> tuple[str, int | None]:
        """The file and line of *path*, or of its nearest ancestor that has a line."""
        for end in range(len(path), 0, -1):
            line = self.lines.get(path[:end])
            if line is not None:
                return self.files.get(path[:end], self.source), line
        return self.source, None


class _Builder:
    """Turns a composed YAML node tree into Python data, recording key lines."""

    def __init__(self, loader: _LoopYamlLoader, source: str) -> None:
        self.loader = loader
        self.source = source
        self.lines: dict[KeyPath, int] = {}
        self.count = 0
        self.active: set[int] = set()

    def fail(self, node: yaml.Node, message: str) -> LoopFileError:
        mark = node.start_mark
        return LoopFileError(self.source, message, mark.line + 1, mark.column + 1)

    def build(self, node: yaml.Node, path: KeyPath) -> Any:
        self.count += 1
        if self.count > _MAX_NODES:
            raise self.fail(node, f"document too large (over {_MAX_NODES} nodes after aliases)")
        if type(node) is yaml.ScalarNode:  # most nodes: no alias can recurse through one
            if node.tag == _STR_TAG and type(node.value) is str:
                return node.value  # most scalars: what _value would make of it, in one step
            return self._value(node)
        if id(node) in self.active:
            raise self.fail(node, "recursive YAML alias")
        if isinstance(node, yaml.CollectionNode) and node.tag not in _COLLECTION_TAGS:
            # Only plain maps and lists; never construct objects from tags like !!python/....
            raise self.fail(node, f"unsupported YAML tag '{node.tag}'")
        if isinstance(node, yaml.CollectionNode) and len(path) >= MAX_NESTING:
            raise self.fail(node, f"mappings and lists nested more than {MAX_NESTING} deep")
        if isinstance(node, yaml.MappingNode):
            self.active.add(id(node))
            try:
                return self._mapping(node, path)
            finally:
                self.active.discard(id(node))
        if isinstance(node, yaml.SequenceNode):
            self.active.add(id(node))
            try:
                items = []
                for index, item in enumerate(node.value):
                    self.lines.setdefault((*path, index), item.start_mark.line + 1)
                    items.append(self.build(item, (*path, index)))
                return items
            finally:
                self.active.discard(id(node))
        return self._value(node)

    def _value(self, node: yaml.Node) -> Any:
        value = self._scalar(node)
        if value is not None and not isinstance(value, str | int | float | bool):
            # `!!binary`, `!!timestamp`, ...: not a JSON value, so it could not be saved
            # in the state file or passed to an action.
            tag = node.tag.rsplit(":", 1)[-1]
            raise self.fail(
                node, f"a value tagged !!{tag} is not supported here; write it as a string"
            )
        return value

    def _key(self, key_node: yaml.Node) -> str:
        if not isinstance(key_node, yaml.ScalarNode):
            raise self.fail(key_node, "a mapping key must be a plain value, not a list or map")
        # A key is its text: `1e3:`, `010:` and `true:` name `1e3`, `010` and `true`, as in
        # the JSON state file (whose keys are strings) and in `${context.1e3}`.
        return str(key_node.value)

    def _scalar(self, node: yaml.Node) -> Any:
        if node.tag == _STR_TAG and isinstance(node.value, str):
            return node.value  # what the constructor makes of it, without its bookkeeping
        if node.tag in (_INT_TAG, _FLOAT_TAG) and isinstance(node.value, str):
            try:
                return _yaml12_number(node.tag, node.value)
            except ValueError:
                kind = "an integer" if node.tag == _INT_TAG else "a number"
                shown = node.value if len(node.value) <= 40 else node.value[:40] + "…"
                if INT_RE.match(node.value):  # digits past Python's limit on int() input
                    raise self.fail(node, f"'{shown}' has too many digits") from None
                raise self.fail(node, f"'{shown}' is not {kind}") from None
        return self.loader.construct_object(node, deep=True)

    def _mapping(self, node: yaml.MappingNode, path: KeyPath) -> dict[str, Any]:
        # A key written twice is an error; a key that overrides one brought in by a
        # `<<:` merge is not, so duplicates are looked for before merging.
        written: dict[str, None] = {}  # the keys, in order
        merges = 0
        flatten = False  # whether flatten_mapping has anything to do
        for key_node, _ in node.value:
            tag = key_node.tag
            if tag == _STR_TAG and type(key_node) is yaml.ScalarNode:
                key = str(key_node.value)  # most keys: what _key gives, in one step
            elif tag in _FLATTENED_TAGS:
                flatten = True
                if tag == _MERGE_TAG:
                    merges += 1
                    if merges > 1:  # a key written twice, as any other; one `<<:` takes a list
                        raise self.fail(
                            key_node, f"duplicate key '<<' in {_where(path)} (write <<: [*a, *b])"
                        )
                    continue
                key = self._key(key_node)
            else:
                key = self._key(key_node)
            if key in written:
                raise self.fail(key_node, f"duplicate key '{key}' in {_where(path)}")
            written[key] = None
        keys = iter(written)
        if flatten:
            self.loader.flatten_mapping(node)  # resolves `<<:` merges; later keys win
            keys = (self._key(key_node) for key_node, _ in node.value)
        out: dict[str, Any] = {}
        lines, build = self.lines, self.build
        for (key_node, value_node), key in zip(node.value, keys, strict=True):
            key_path = (*path, key)
            lines[key_path] = key_node.start_mark.line + 1
            out[key] = build(value_node, key_path)
        return out


def _where(path: KeyPath) -> str:
    return " > ".join(str(p) for p in path) or "the top level"


def _syntax_error(source: str, exc: yaml.YAMLError, text: str) -> LoopFileError:
    """A one-line error for a YAML exception, with line and column when it has a mark, and
    the likely cause when it is a common one (a tab, bad indentation, an unclosed quote)."""
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        hint = explain(text, exc)
        if hint is not None:
            cause, line, column = hint
            return LoopFileError(source, f"YAML syntax error: {cause}", line, column)
        if mark is not None:
            return LoopFileError(
                source, f"YAML syntax error: {problem}", mark.line + 1, mark.column + 1
            )
        return LoopFileError(source, f"YAML syntax error: {problem}")
    detail = str(exc).splitlines()[0] if str(exc) else "invalid YAML"
    return LoopFileError(source, f"YAML error: {detail}")


_EMPTY = "the file is empty; a loop needs at least 'name', 'initial' and 'states'"


def load_text(text: str, source: str = "<string>") -> LoadedDocument:
    """Parse loop YAML *text*; *source* names it in messages.

    Raises LoopFileError (a LoopDefinitionError) for syntax errors (with line and
    column), an empty document, several documents, or a top level that is not a mapping.
    """
    loader = _LoopYamlLoader(text)
    with no_cycle_collection():
        return _load(loader, text, source)


def _load(loader: _LoopYamlLoader, text: str, source: str) -> LoadedDocument:
    try:
        try:
            node = loader.get_single_node()
            if node is None:
                raise LoopFileError(source, _EMPTY)
            builder = _Builder(loader, source)
            data = builder.build(node, ())
        except yaml.YAMLError as exc:
            raise _syntax_error(source, exc, text) from None
        except RecursionError:
            raise LoopFileError(source, "YAML nesting is too deep") from None
    finally:
        loader.dispose()
    if data is None:
        raise LoopFileError(source, _EMPTY)
    if not isinstance(data, dict):
        kind = {list: "a list", str: "a string", bool: "true/false"}.get(type(data), "a scalar")
        if isinstance(data, int | float) and not isinstance(data, bool):
            kind = "a number"
        raise LoopFileError(source, f"the top level must be a mapping of loop settings, got {kind}")
    return LoadedDocument(data=data, source=source, lines=builder.lines)


@contextmanager
def no_cycle_collection() -> Iterator[None]:
    """The cyclic collector off (as it was after): for reading and checking a loop file.

    The YAML nodes, the data and the model all live until the end and hold no reference
    cycles (a recursive alias is refused), yet the collector would walk them again and again
    as they grow: half the time of validating a 20,000-state file. Reference counting still
    frees what is dropped; what is left for the collector is collected after."""
    enabled = gc.isenabled()
    try:
        gc.disable()  # in the `try`: a Ctrl-C handled as it returns still turns it on again
        yield
    finally:
        if enabled:
            gc.enable()


def compose_text(text: str) -> yaml.Node | None:
    """The YAML node tree of *text*, with the start and end of every key and value: for
    editing a loop file in place (`ll-loop migrate`). Check the text with load_text first."""
    loader = _LoopYamlLoader(text)
    try:
        return loader.get_single_node()
    finally:
        loader.dispose()


def load_file(path: str | Path) -> LoadedDocument:
    """Read and parse the loop file at *path*; any failure is a LoopFileError."""
    return load_text(read_file(path), source=str(path))


def read_file(path: str | Path, *, pipe_ok: bool = False) -> str:
    """The UTF-8 text of the loop (or context) file at *path*; LoopFileError when it is
    missing, not a regular file, larger than MAX_FILE_BYTES or not UTF-8.

    With *pipe_ok* a pipe is read too (a FIFO, bash's `<(...)`: a context file), until its
    writer ends, by `pipe.read_deadline()` (`pipe.spool`): the time allowed is read (and
    LL_LOOP_READ_SECONDS checked) only when there is a pipe to read."""
    p = Path(path)
    raw = _read_regular(p, pipe_ok)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LoopFileError(str(p), f"not UTF-8 text (bad byte at offset {exc.start})") from None


def _read_regular(path: Path, pipe_ok: bool) -> bytes:
    """At most MAX_FILE_BYTES + 1 bytes of the regular file at *path* (a link to one is
    fine), or of the pipe there when *pipe_ok*; LoopFileError when it is
    missing, cannot be read or is anything else. A device or a folder is never read
    (`/dev/zero` never ends) nor even opened, a FIFO only when *pipe_ok*, with a deadline
    (one nobody writes to would hang the command)."""

    def readable(mode: int) -> bool:
        return stat.S_ISREG(mode) or (pipe_ok and stat.S_ISFIFO(mode))

    try:
        mode = os.stat(path).st_mode
        # (no controlling terminal even if a tty is swapped into the path's place meanwhile)
        flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
        fd = os.open(path, flags) if readable(mode) else -1
        if fd >= 0:
            try:
                mode = os.fstat(fd).st_mode  # what was opened: the path may have changed since
            except OSError:
                os.close(fd)
                raise
            if not readable(mode):
                os.close(fd)
        if not readable(mode):
            from little_loops.fsm.facts.runfile import kind_of

            raise LoopFileError(str(path), f"is {kind_of(mode)}, not a loop file")
        with os.fdopen(fd, "rb") as handle:  # capped: a file of gigabytes is not read whole
            if stat.S_ISFIFO(mode):
                raw = _from_pipe(path, fd)
            else:
                os.set_blocking(fd, True)
                raw = handle.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise LoopFileError(str(path), "no such file") from None
    except OSError as exc:
        raise LoopFileError(str(path), f"cannot read: {exc.strerror or exc}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise LoopFileError(str(path), f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
    return raw


def _from_pipe(path: Path, fd: int) -> bytes:
    """What the pipe *fd* at *path* gives (`pipe.spool`), by the read deadline from now;
    LoopFileError past it or past MAX_FILE_BYTES."""
    from little_loops.fsm.facts.pipe import NoTempFile, PipeRefused, read_deadline, spool

    try:
        with spool(fd, read_deadline(), MAX_FILE_BYTES) as copy:
            return copy.read()
    except PipeRefused as exc:
        why = str(exc) if exc.late else f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB"
        raise LoopFileError(str(path), why) from None
    except NoTempFile as exc:  # (an OSError would say "no such file": the pipe is there)
        raise LoopFileError(str(path), str(exc)) from None
