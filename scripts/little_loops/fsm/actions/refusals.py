"""What a confined step that hit its sandbox met, said in its output tail.

A write refused, no network, a hidden secret place refusing it, a signal to ll-loop outside
its view."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence

from little_loops.fsm.actions.sandbox import Confinement, home_of
from little_loops.fsm.actions.sandbox_key import Sandbox

# What a refused step prints (stdout or stderr): said in its output tail. A step without
# network has its own loopback, where nothing listens: every connection is refused. Matched
# in any case: zsh says `read-only file system`, `permission denied`, `no such process`.
WRITE_REFUSED = ("Read-only file system",)
NETWORK_REFUSED = (
    "Connection refused",
    "Network is unreachable",
    "Temporary failure in name resolution",
    "Could not resolve host",
    "Name or service not known",
)
# What a step that reaches a masked secret place meets (it is in its output then), and what
# one that signals a process outside its own process ids does.
READ_REFUSED = "Permission denied"
SIGNAL_REFUSED = "No such process"
_KILL = re.compile(r"\bkill\b")  # where a line saying so names what it signalled
NOTE_PREFIX = "ll-loop sandbox: "


def step_note(
    confinement: Confinement, output: str, stderr: str, env: Mapping[str, str]
) -> str | None:
    """What the step confined by *confinement* (run with *env*) met, for its tail."""
    if confinement.sandbox.command is not None:  # the user's wrapper: its own refusals
        return refusal_note(output, stderr, confinement.sandbox)
    hidden = confinement.hidden(env)
    # ll-loop itself, outside the step's process ids (its pid is in $LL_LOOP_RUN, the lock)
    return refusal_note(output, stderr, confinement.sandbox, hidden, env, (os.getpid(),))


def refusal_note(
    output: str,
    stderr: str,
    sandbox: Sandbox,
    hidden: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    outside: Sequence[int] = (),
) -> str | None:
    """What a step that hit its sandbox met, a line each, for its tail: a write refused, no
    network, a secret place it reached (*hidden*: where it sees them; *env*: its environment,
    whose $HOME gives `~/` and relative names) refusing it, a signal to a process outside
    its view (*outside*: the pids of ll-loop's own processes)."""
    said = [(marker, "write refused, read-only here") for marker in WRITE_REFUSED]
    if not sandbox.network:
        said += [(marker, "network off for this step") for marker in NETWORK_REFUSED]
    notes: dict[str, str] = {}  # each refusal met, said once (its first marker)
    printed = (stderr.lower(), output.lower())
    for marker, meaning in said:
        if meaning not in notes and any(marker.lower() in text for text in printed):
            notes[meaning] = f"{NOTE_PREFIX}{meaning} ({marker})"
    lines = [line for text in (stderr, output) for line in text.splitlines()]
    home = home_of(env or {}) if hidden else None
    place = _hidden_in(lines, hidden, "" if home is None else str(home))
    if place is not None:
        meaning = "read refused, a secret place is hidden"
        notes[meaning] = f"{NOTE_PREFIX}{meaning} ({place}: {READ_REFUSED})"
    pid = _signalled(lines, outside)
    if pid is not None:
        meaning = "signal refused, ll-loop's processes are outside this step's view"
        notes[meaning] = f"{NOTE_PREFIX}{meaning} ({pid}: {SIGNAL_REFUSED})"
    return "\n".join(notes.values()) or None


def _hidden_in(lines: Sequence[str], hidden: Sequence[str], home: str) -> str | None:
    """The first of the *hidden* places a line refusing access names (the place itself or
    under it; absolute, as `~/...`, or relative to *home*)."""
    names: list[tuple[str, str]] = []
    for place in hidden:
        names.append((place, re.escape(place)))
        rest = os.path.relpath(place, home) if home.startswith("/") else ".."
        if not rest.startswith(".."):
            names.append((place, f"(?:~/)?{re.escape(rest)}"))
    for line in lines:
        if READ_REFUSED.lower() not in line.lower():
            continue
        for place, name in names:
            if re.search(rf"(?<![\w./-]){name}(?![^/\s'\"`:,)\]])", line):
                return place
    return None


def _signalled(lines: Sequence[str], outside: Sequence[int]) -> int | None:
    """The first of the pids *outside* a line saying a signal found no such process names
    (bash's `kill: (PID) - No such process`, procps' `kill: (PID): No such process`, zsh's
    `kill: kill PID failed: no such process`)."""
    for line in lines:
        if SIGNAL_REFUSED.lower() not in line.lower():
            continue
        # the pid after the line's first `kill`: two searches, each linear in the line (one
        # pattern `kill.*(PID)` backtracks from every `kill` of a hostile line: quadratic)
        first = _KILL.search(line)
        if first is None:
            continue
        for pid in outside:
            if re.compile(rf"\({pid}\)|\bkill {pid} failed\b").search(line, first.end()):
                return pid
    return None
