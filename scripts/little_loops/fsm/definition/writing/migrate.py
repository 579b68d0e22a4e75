"""Rewrite a loop file into the spelling our docs recommend, editing its text in place."""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, field

import yaml

from little_loops.fsm.definition.model.endings import FAILURE_NAMES
from little_loops.fsm.definition.model.spellings import (
    LOOP,
    ROUTE,
    STATE,
    Level,
    Spelling,
    spellings_at,
)
from little_loops.fsm.definition.reading.loader import compose_text, load_text
from little_loops.fsm.facts.errors import LoopFileError
from little_loops.fsm.facts.verdict_words import FAILURE

# A terminal named so ends the run as a failure unless `outcome:` says otherwise
# (little-loops' rule, now ours); migrate writes the `outcome: failure` it implies.
OUTCOME_KEY = "outcome"
_TRUE = ("true", "True", "TRUE")
BOM = "\ufeff"


@dataclass(frozen=True)
class Change:
    """One edit: the 1-based line it is on and what it does."""

    line: int
    what: str


@dataclass(frozen=True)
class _Edit:
    start: int
    end: int
    text: str


@dataclass
class Migration:
    """A loop file's text before and after, and the changes between them, in file order."""

    before: str
    after: str
    changes: list[Change] = field(default_factory=list)
    notes: list[Change] = field(default_factory=list)  # what was left as it was, and why


class _Rewriter:
    def __init__(self, text: str, source: str) -> None:
        self.text = text
        self.source = source
        self.line_starts = [0]
        for index, char in enumerate(text):
            if char == "\n":
                self.line_starts.append(index + 1)
        self.edits: list[_Edit] = []
        self.changes: list[Change] = []
        self.notes: list[Change] = []  # what it left as it was, and why

    def offset(self, mark: yaml.Mark) -> int:
        # The character index, not line and column: YAML ends a line at a lone \r, a NEL
        # or U+2028 too, where the text's own lines (and the user's editor) do not.
        return int(mark.index)

    def line(self, mark: yaml.Mark) -> int:
        """The 1-based line (counted at \n, as editors and messages count) of *mark*."""
        return bisect_right(self.line_starts, self.offset(mark))

    def mapping(self, level: Level, node: yaml.MappingNode, where: str) -> None:
        """Rename the keys of *node* that have our spelling at *level*."""
        table = spellings_at(level)
        keys = {str(k.value) for k, _ in node.value if isinstance(k, yaml.ScalarNode)}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.value not in table:
                continue
            spelling = table[key_node.value]
            line = self.line(key_node.start_mark)
            if spelling.ours in keys:
                why = f"{spelling.ours} is there too"
                self.notes.append(Change(line, f"left {spelling.theirs}{where}: {why}"))
                continue
            self.rename(spelling, key_node, value_node, where)

    def rename(
        self, spelling: Spelling, key_node: yaml.ScalarNode, value_node: yaml.Node, where: str
    ) -> None:
        start, end = self.offset(key_node.start_mark), self.offset(key_node.end_mark)
        line = self.line(key_node.start_mark)
        if self.text[start:end].strip("'\"") != spelling.theirs:
            raise LoopFileError(self.source, f"cannot find the key {spelling.theirs}", line)
        if not spelling.values:
            self.edits.append(_Edit(start, end, spelling.ours))
            self.changes.append(Change(line, f"{spelling.theirs} -> {spelling.ours}{where}"))
            return
        value = _scalar_value(value_node)
        if value is None or spelling.our_value(value) == value:
            why = "its value has no other spelling"
            self.notes.append(Change(line, f"left {spelling.theirs}{where}: {why}"))
            return
        new = f"{spelling.ours}: {spelling.our_value(value)}"
        self.edits.append(_Edit(start, self.offset(value_node.end_mark), new))
        shown = self.text[start : self.offset(value_node.end_mark)]
        self.changes.append(Change(line, f"{shown} -> {new}{where}"))

    def failure_terminal(self, name: str, node: yaml.MappingNode, shared: bool) -> None:
        """Write the `outcome: failure` a terminal named like a failure implies (not in a
        mapping *shared* through an alias with another state, which it would change too)."""
        keys = {str(k.value): (k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode)}
        if name not in FAILURE_NAMES or "terminal" not in keys:
            return
        if OUTCOME_KEY in keys or any(k in keys for k in spellings_for(OUTCOME_KEY)):
            return
        key_node, value_node = keys["terminal"]
        if _scalar_value(value_node) is not True:
            return
        line = self.line(key_node.start_mark)
        if shared:
            why = "its settings are shared with another state through a YAML alias"
            self.notes.append(Change(line, f"left terminal state '{name}' as it is: {why}"))
            return
        end = self.offset(value_node.end_mark)
        if node.flow_style:
            self.edits.append(_Edit(end, end, f", {OUTCOME_KEY}: {FAILURE}"))
        else:
            found = self.text.find("\n", end)
            at = len(self.text) if found < 0 else found
            eol = "\r\n" if self.text[at - 1 : at + 1] == "\r\n" else "\n"  # the file's kind
            at -= len(eol) - 1
            start = self.offset(key_node.start_mark)
            indent = " " * (start - self.line_starts[self.line(key_node.start_mark) - 1])
            self.edits.append(_Edit(at, at, f"{eol}{indent}{OUTCOME_KEY}: {FAILURE}"))
        self.changes.append(
            Change(line, f"wrote {OUTCOME_KEY}: {FAILURE} in terminal state '{name}' (its name)")
        )

    def result(self) -> str:
        out = self.text
        for edit in sorted(self.edits, key=lambda e: e.start, reverse=True):
            out = out[: edit.start] + edit.text + out[edit.end :]
        return out


def spellings_for(ours: str) -> list[str]:
    """The state keys that are other spellings of our state key *ours*."""
    return [s.theirs for s in spellings_at(STATE).values() if s.ours == ours]


def _scalar_value(node: yaml.Node) -> object:
    """True/False for a plain boolean scalar, its text for another scalar, else None."""
    if not isinstance(node, yaml.ScalarNode):
        return None
    if node.tag == "tag:yaml.org,2002:bool":
        return node.value in _TRUE
    return str(node.value)


# The top-level mappings whose values are states, or parts of states (a fragment), and how
# a change there is named; a terminal's name ends the run only where it names a state.
_STATE_MAPPINGS = {"states": "state", "state_defs": "state", "fragments": "fragment"}


def _states(root: yaml.MappingNode) -> list[tuple[str, str, yaml.MappingNode]]:
    """(what, name, mapping) of each state, state_defs entry and fragment of the file."""
    found: list[tuple[str, str, yaml.MappingNode]] = []
    for key_node, value_node in root.value:
        what = _STATE_MAPPINGS.get(str(key_node.value))
        if what is None or not isinstance(value_node, yaml.MappingNode):
            continue
        found.extend(
            (what, str(k.value), v)
            for k, v in value_node.value
            if isinstance(k, yaml.ScalarNode) and isinstance(v, yaml.MappingNode)
        )
    return found


def migrate_text(text: str, source: str = "<string>") -> Migration:
    """*text* (a loop file named *source* in messages) in our spelling, with the changes.

    Only keys are rewritten, at their place in the text: comments, quoting and layout
    stay. Raises LoopFileError when the text is not a loop file's YAML.
    """
    load_text(text, source)  # the same checks (and messages) as any read of a loop file
    # A byte-order mark is left out of the YAML reader's character index (libyaml's): the
    # text is edited without it, and it is put back in front.
    bom = BOM if text.startswith(BOM) else ""
    text = text[len(bom) :]
    root = compose_text(text)
    rewriter = _Rewriter(text, source)
    if not isinstance(root, yaml.MappingNode):
        return Migration(bom + text, bom + text)
    rewriter.mapping(LOOP, root, "")
    found = _states(root)
    uses = Counter(id(node) for _, _, node in found)
    seen: set[int] = set()
    for what, name, node in found:
        if id(node) in seen:  # an alias (`y: *x`) is the same text: rewritten once, where it is
            continue
        seen.add(id(node))
        rewriter.mapping(STATE, node, f" in {what} '{name}'")
        for key_node, value_node in node.value:
            if key_node.value == "route" and isinstance(value_node, yaml.MappingNode):
                rewriter.mapping(ROUTE, value_node, f" in the route of {what} '{name}'")
        if what == "state":
            rewriter.failure_terminal(name, node, uses[id(node)] > 1)
    after = bom + rewriter.result()
    load_text(after, source)  # never hand back a file that no longer reads
    by_line = sorted(rewriter.changes, key=lambda c: c.line)
    return Migration(bom + text, after, by_line, sorted(rewriter.notes, key=lambda c: c.line))


__all__ = ["Change", "Migration", "migrate_text"]
