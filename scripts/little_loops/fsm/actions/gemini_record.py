"""Gemini CLI's own record of a session (`~/.gemini/tmp/*/chats/`): which of its tool calls failed.

As the model was told: stream-json does not say so for a shell command that printed
something, then exited non-zero. The record's `resultDisplay` (the command's output, as
stream-json's `output`) tells the command's words from the tool's own lines after them.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO

from little_loops.fsm.actions.transcript import json_object
from little_loops.fsm.facts.runfile import NotOurFile, open_run_stream

# What the shell tool tells the model of a command that exited non-zero: a line of its
# response (`Output: ...`, `Exit Code: 3`, `Process Group PGID: ...`).
_EXIT_LINE = re.compile(r"^Exit Code: (-?\d+)\s*$", re.M)
# How 0.61 wraps a tool's response to the model (its wrapUntrusted).
_UNTRUSTED = ("<untrusted_context>\n", "\n</untrusted_context>")
# A record bigger than this is not read (a session's record is a few hundred kB at most).
MAX_RECORD_BYTES = 64 * 1024 * 1024


def gemini_home(env: Mapping[str, str] | None) -> Path | None:
    """The folder Gemini CLI keeps `.gemini` in: $GEMINI_CLI_HOME, else $HOME."""
    given = {**os.environ, **(env or {})}
    home = given.get("GEMINI_CLI_HOME") or given.get("HOME")
    return Path(home) if home else None


def record_file(session_id: str, env: Mapping[str, str] | None) -> Path | None:
    """The record of *session_id* (`session-<time>-<its first 8 characters>.jsonl`, whose
    first line names the session), or None when there is none to be found."""
    home = gemini_home(env)
    if home is None or not re.fullmatch(r"[\w-]{8,}", session_id):
        return None
    pattern = f"tmp/*/chats/session-*-{session_id[:8]}.jsonl"
    for path in sorted((home / ".gemini").glob(pattern)):
        with _opened(path) as handle:
            first = json_object(handle.readline().strip()) if handle is not None else None
        if first is not None and first.get("sessionId") == session_id:
            return path
    return None


@contextlib.contextmanager
def _opened(path: Path) -> Iterator[TextIO | None]:
    """*path* opened for reading when it is a regular file of a plausible size (never a
    link, a FIFO or a device a step may have put in its place), else None."""
    try:
        handle = io.TextIOWrapper(open_run_stream(path), encoding="utf-8", errors="replace")
    except (OSError, NotOurFile):
        yield None
        return
    with handle:
        try:
            big = os.fstat(handle.fileno()).st_size > MAX_RECORD_BYTES
        except OSError:
            big = True
        yield None if big else handle


def failed_calls(session_id: str | None, env: Mapping[str, str] | None) -> set[str]:
    """The ids of the tool calls the session's record says failed: status `error`, or a
    response whose `Exit Code:` line is not 0. Empty when there is no record."""
    path = record_file(session_id, env) if session_id else None
    if path is None:
        return set()
    try:
        with _opened(path) as handle:
            return _failed(json_object(line.strip()) for line in handle) if handle else set()
    except OSError:
        return set()


def _failed(records: Iterable[dict[str, Any] | None]) -> set[str]:
    failed: set[str] = set()
    for record in records:
        calls = record.get("toolCalls") if record is not None else None
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, dict) and isinstance(call.get("id"), str) and _is_failed(call):
                failed.add(call["id"])
    return failed


def _is_failed(call: Mapping[str, Any]) -> bool:
    if call.get("status") == "error":
        return True
    results = call.get("result")
    for part in results if isinstance(results, list) else []:
        given = part.get("functionResponse") if isinstance(part, dict) else None
        response = given.get("response") if isinstance(given, dict) else None
        output = response.get("output") if isinstance(response, dict) else None
        trailer = _trailer(output, call.get("resultDisplay")) if isinstance(output, str) else ""
        codes = _EXIT_LINE.findall(trailer)
        if codes and codes[-1].lstrip("-").strip("0"):  # not 0 (no int(): any length)
            return True
    return False


def _trailer(response: str, shown: object) -> str:
    """What the shell tool added after the command's own output in *response* (`Output:
    <output>`, then its `Exit Code: N`, `Process Group PGID: N`, ... lines): the record's
    `resultDisplay` is that output as printed, so a command that prints `Exit Code: 1`
    itself is not read as failed. The whole response when they do not line up."""
    inner = response.removeprefix(_UNTRUSTED[0]).removesuffix(_UNTRUSTED[1])
    head = f"Output: {shown}\n" if isinstance(shown, str) and shown else None
    return inner[len(head) - 1 :] if head is not None and inner.startswith(head) else inner
