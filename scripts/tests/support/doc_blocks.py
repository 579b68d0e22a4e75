"""The fenced blocks of the user docs (README.md, docs/**/*.md but architecture.md), by kind."""

from __future__ import annotations

import re
from dataclasses import dataclass

from support.paths import REPO

USER_DOCS = [
    REPO / "README.md",
    *sorted(p for p in (REPO / "docs").glob("*.md") if p.name != "architecture.md"),
    *sorted((REPO / "docs" / "agents").glob("*.md")),  # one page per agent
]
FENCE = re.compile(r"^```(\S*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
SYNOPSIS = re.compile(r"NAME|PATH|INPUT|\[|\.\.\.")


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its info string and its text."""

    doc: str
    line: int
    info: str
    text: str

    @property
    def where(self) -> str:
        """`doc:line`, for messages and test ids."""
        return f"{self.doc}:{self.line}"

    def starts(self, doc: str, prefix: str) -> bool:
        """Whether this is the block of *doc* whose text starts with *prefix*."""
        return self.doc == doc and self.text.startswith(prefix)


def all_blocks() -> list[Block]:
    """Every fenced block of the user docs, in order."""
    found = []
    for path in USER_DOCS:
        text = path.read_text(encoding="utf-8")
        name = str(path.relative_to(REPO))
        for match in FENCE.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append(Block(name, line, match.group(1), match.group(2)))
    return found


def command_lines(text: str) -> list[str]:
    """The lines of a command block, without comments and blank lines."""
    lines: list[str] = []
    session = text.startswith("$ ")
    for raw in text.splitlines():
        line = raw.removeprefix("$ ").strip()
        # An indented line goes on the command before it; in a session (`$ ...`) it is the
        # command's output (a sub-loop's progress is indented).
        if raw.startswith(" ") and lines and not session:
            lines[-1] += " " + line
        elif line and not line.startswith("#"):
            lines.append(line)
    return lines


def is_command(line: str) -> bool:
    """Whether *line* is a shell command a user types (ll-loop, scripts/dev, eval ...)."""
    return line.startswith(("ll-loop ", "scripts/dev ", "eval ", "pip "))


def kind(block: Block) -> str:
    """python, loop, fragment, json, mermaid, commands, session or output."""
    if block.info in ("python", "json", "mermaid"):
        return block.info
    if block.info == "yaml":
        top = re.search(r"^(initial|paradigm):", block.text, re.MULTILINE)
        return "loop" if top else "fragment"
    lines = command_lines(block.text)
    if lines and all(is_command(line) for line in lines):
        return "commands"
    if block.text.startswith("$ "):
        return "session"
    return "output"


def ll_loop_call(line: str) -> str | None:
    """The `ll-loop ...` call in a shell *line* (up to a pipe, `)`, `&` or `;`), or None."""
    match = re.search(r"(?:^|\$\()(ll-loop\b[^|)&;]*)", line)
    return None if match is None else match.group(1).split(" #")[0].strip()


def is_synopsis(line: str) -> bool:
    """Whether *line* is a usage synopsis (placeholders, [optional] parts) rather than a call."""
    return bool(SYNOPSIS.search(line.split("#")[0]))


def synopsis_flags(line: str) -> list[str]:
    """The options a synopsis line names (not those it says are not taken: `except ...`)."""
    line = re.sub(r"except[^\]]*", "", line.split("#")[0])
    return re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", line)


DURATION = re.compile(r"(?<!@)\b\d+(\.\d+)?(ms|s)\b")  # not a run id: fix@12ms
PID = re.compile(r"\b(pid )\d+")
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT[\d:.]+\+00:00|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")
RUN_ID = re.compile(r"\b\d{8}-\d{6}(-\d+)?\b")  # an archived run's id (`ll-loop runs`)


def normalise(text: str) -> str:
    """*text* with times, durations, pids and column widths made comparable."""
    text = TIMESTAMP.sub("<TIME>", text)
    text = RUN_ID.sub("<RUN>", text)
    text = DURATION.sub("<T>", text)
    text = PID.sub(r"\1<PID>", text)
    lines = (re.sub(r"(?<=\S) {2,}", "  ", line.rstrip()) for line in text.strip("\n").splitlines())
    return "\n".join(lines)
