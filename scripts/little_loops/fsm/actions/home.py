"""What an agent needs of $HOME in a sandbox: its places, what it writes, what it is told."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class AgentHome:
    """An agent kind's files under $HOME, as a sandbox that hides the rest of $HOME shows
    them (actions/sandbox.py), and what bubblewrap's confinement tells it."""

    # What it needs under $HOME to run and log in (`.claude`, made when missing; a `.json`
    # file; `$VAR`: the folder a variable names): shown read-only, so a step cannot plant
    # settings, hooks or plugins there that run unconfined the next time the agent runs
    # outside. What a step adds in such a folder is its own, gone after it.
    paths: tuple[str, ...] = ()
    # Of those, what it writes while it runs, and only that: its sessions (`session:
    # continue`), logs and login refresh; writable. A folder ends with `/` (made when
    # missing); a file is writable when it is there. Never a file or folder it reads code or
    # settings from.
    writes: tuple[str, ...] = ()
    # In those, what it runs code from all the same (Gemini CLI's tmp/bin): read-only.
    code: tuple[str, ...] = ()
    # What it is told when bubblewrap confines it (Claude Code: it may skip permissions as root).
    env: Mapping[str, str] = field(default_factory=dict)
