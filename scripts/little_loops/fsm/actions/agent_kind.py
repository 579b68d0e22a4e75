"""What every agent kind does alike: a failed exit said in one line, a key or login found."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from pathlib import Path

from little_loops.fsm.actions.request import ActionResult

NO_OUTPUT = "no output"  # the detail of a failed exit that printed nothing


def said_lines(text: str) -> list[str]:
    """The lines of *text* that say something: stripped, the empty ones left out."""
    return [line.strip() for line in text.splitlines() if line.strip()]


def exit_failed(result: ActionResult, agent: str, detail: str | None) -> ActionResult:
    """*result* with `error` set when *agent*'s program exited non-zero and nothing set one
    yet: `AGENT exited with status N: DETAIL`, *detail* being the line (as the kind picks
    it from what its program printed) that says why (None: it printed nothing)."""
    if result.error is not None or result.exit_code == 0:
        return result
    error = f"{agent} exited with status {result.exit_code}: {detail or NO_OUTPUT}"
    return dataclasses.replace(result, error=error)


def key_given(env: Mapping[str, str], names: Iterable[str]) -> bool:
    """Whether one of the variables *names* holds a key in *env* (a blank one does not)."""
    return any(env.get(name, "").strip() for name in names)


def login_file(paths: Iterable[Path]) -> bool:
    """Whether one of *paths*, the files an agent keeps its login in, is there (a regular
    file only: a FIFO would hang the preflight that reads it)."""
    return any(path.is_file() for path in paths)
