"""Read `codex exec --json` output: the answer, tokens, cost, thread, tool calls and limits.

Codex 0.171 prints one JSON object per line: `thread.started` (its `thread_id`, the
session to resume), `turn.started`, `item.started` / `item.completed` with an `item` of
type `agent_message` (`text`), `reasoning`, `command_execution` (`command`,
`aggregated_output`, `exit_code`), `file_change`, `error` (a warning) ..., and at the end
`turn.completed` (`usage`: input_tokens, cached_input_tokens, cache_write_input_tokens,
output_tokens, reasoning_output_tokens: the THREAD's totals so far) or `turn.failed`
(`error.message`), with a top-level `error` line before it.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
import time
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from little_loops.fsm.actions.agent_kind import exit_failed
from little_loops.fsm.actions.codex_model import (
    configured_model,
    recorded_model,
    rollout_file,
    session_env,
)
from little_loops.fsm.actions.ratelimit import RATE_LIMIT, USAGE_LIMIT, ClaudeLimit
from little_loops.fsm.actions.request import ActionRequest, ActionResult
from little_loops.fsm.actions.transcript import MAX_TOOL_LINES, RESULT_WIDTH, json_object
from little_loops.fsm.facts.pricing import USAGE_KEYS, estimate_cost
from little_loops.fsm.facts.spend import implausible_tokens

# What Codex says (stderr, exit 1) when asked to resume a thread it has no file for.
NO_THREAD = "no rollout found for thread id"
# "You’ve hit your usage limit. ... try again at 10:15 PM." (local time; a date before it
# when the reset is not today: "try again at Dec 29th, 2025 10:15 PM").
_USAGE_TEXT = re.compile(r"hit your usage limit", re.IGNORECASE)
_TRY_AGAIN = re.compile(
    r"try again at\s+(?:([A-Z][a-z]{2,8}) (\d{1,2})(?:st|nd|rd|th)?,? (\d{4}),? )?"
    r"(\d{1,2}):(\d{2})\s*([AP]M)",
    re.IGNORECASE,
)
# "exceeded retry limit, last status: 429 Too Many Requests", "Rate limit reached for ...".
_RATE_TEXT = re.compile(r"\b429\b|rate limit reached|too many requests", re.IGNORECASE)


def events(lines: Iterable[str]) -> list[dict[str, Any]]:
    """The JSON events among *lines* (other lines are passed over)."""
    found = (json_object(line.strip()) for line in lines)
    return [data for data in found if data is not None and isinstance(data.get("type"), str)]


def usage_of(counts: Mapping[str, Any]) -> dict[str, int]:
    """Codex's `usage` under the USAGE_KEYS names: its input_tokens include the cached ones
    (read and written), which the Anthropic names count apart."""

    def count(key: str) -> int:
        value = counts.get(key)
        return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0

    cached, written = count("cached_input_tokens"), count("cache_write_input_tokens")
    out = {
        "input_tokens": max(0, count("input_tokens") - cached - written),
        "output_tokens": count("output_tokens"),
        "cache_creation_input_tokens": written,
        "cache_read_input_tokens": cached,
    }
    return {key: out[key] for key in USAGE_KEYS}


def earlier_usage(thread: str, env: Mapping[str, str] | None) -> dict[str, int]:
    """The thread's tokens before its latest turn, from its rollout file under
    $CODEX_HOME/sessions (`turn.completed` counts the whole thread; a resumed step costs
    only its own turn). Empty when the file is not found."""
    path = rollout_file(thread, session_env(env))
    if path is None:
        return {}
    last: dict[str, Any] = {}
    before: dict[str, Any] = {}
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            for data in events(handle):
                payload = data.get("payload")
                kind = payload.get("type") if isinstance(payload, dict) else None
                if kind == "task_started":
                    before = last  # what the thread had used when this turn began
                elif kind == "token_count" and isinstance(payload, dict):
                    info = payload.get("info")
                    total = info.get("total_token_usage") if isinstance(info, dict) else None
                    last = total if isinstance(total, dict) else last
    except OSError:
        return {}
    return usage_of(before) if before else {}


def finish(result: ActionResult, request: ActionRequest) -> ActionResult:
    """Codex's answer (its last message), tokens and their cost, thread and tool calls read
    from its JSON lines; a failed turn or exit becomes `error`."""
    lines = result.output.splitlines()
    found = events(lines)
    answer: str | None = None
    failure: str | None = None
    thread: str | None = None
    totals: dict[str, Any] | None = None
    for data in found:
        kind = data["type"]
        item = data.get("item")
        if kind == "thread.started" and isinstance(data.get("thread_id"), str):
            thread = data["thread_id"]
        elif kind == "item.completed" and isinstance(item, dict):
            if item.get("type") == "agent_message" and isinstance(item.get("text"), str):
                answer = item["text"]
        elif kind == "turn.completed" and isinstance(data.get("usage"), dict):
            totals = data["usage"]
        elif kind == "turn.failed":
            error = data.get("error")
            message = error.get("message") if isinstance(error, dict) else None
            failure = str(message or "the turn failed")
    if not found:
        return _failed(result, None)
    implausible = implausible_tokens(totals) if totals is not None else None
    if implausible is not None:  # neither counted nor priced: an error of its output
        failure, totals = failure or f"it {implausible}", None
    usage = usage_of(totals) if totals is not None else None
    if usage is not None and request.resume_session and thread:
        before = earlier_usage(thread, request.env)
        usage = {key: max(0, usage[key] - before.get(key, 0)) for key in usage}
    model = _model(thread, request)
    cost = estimate_cost(model, usage) if usage is not None and model else None
    changes: dict[str, Any] = {
        "output": answer or "",
        "usage": usage,
        "truncated": False,
        "session_id": thread,
        "tool_calls": tool_lines(lines) or None,
        "tools_failed": failed_commands(found),
    }
    if cost is not None:
        changes["cost_usd"] = cost
        changes["model_costs"] = {str(model): cost}
    return _failed(dataclasses.replace(result, **changes), failure)


def _model(thread: str | None, request: ActionRequest) -> str | None:
    """The model the session ran on: as Codex recorded it, else as its options and config
    name it (codex_model)."""
    env = session_env(request.env)
    recorded = recorded_model(thread, env) if thread else None
    return recorded or configured_model(request.options or {}, env)


def _failed(result: ActionResult, failure: str | None) -> ActionResult:
    """*result* with `error` set: the failure Codex reported, else its exit status with the
    last line it printed."""
    if result.error is None and failure is not None:
        code = result.exit_code or 1
        return dataclasses.replace(result, error=f"codex failed: {failure}", exit_code=code)
    said = (result.stderr.strip() or result.output.strip()).splitlines()
    return exit_failed(result, "codex", said[-1] if said else None)


def usage_limit(result: ActionResult, now: float | None = None) -> ClaudeLimit | None:
    """The usage or rate limit a Codex session ended on, with the reset time it said."""
    if result.error is None:
        return None
    text = "\n".join(part for part in (result.error, result.output, result.stderr) if part)
    message = result.error
    if _USAGE_TEXT.search(text):
        return ClaudeLimit(USAGE_LIMIT, reset_time(text, now), message)
    if _RATE_TEXT.search(text):
        return ClaudeLimit(RATE_LIMIT, None, message)
    return None


_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


def reset_time(text: str, now: float | None = None) -> float | None:
    """When Codex's usage-limit *text* says to try again (epoch seconds), or None."""
    found = _TRY_AGAIN.search(text)
    if found is None:
        return None
    month, day, year, hour, minute, half = found.groups()
    hour_24 = int(hour) % 12 + (12 if half.upper() == "PM" else 0)
    if not 1 <= int(hour) <= 12 or int(minute) > 59:
        return None
    base = datetime.fromtimestamp(time.time() if now is None else now)
    try:
        if month is not None:
            number = _MONTHS.index(month[:3].lower()) + 1
            return datetime(int(year), number, int(day), hour_24, int(minute)).timestamp()
        at = base.replace(hour=hour_24, minute=int(minute), second=0, microsecond=0)
    except ValueError:
        return None
    if at <= base:
        at += timedelta(days=1)  # the time has passed today: it means tomorrow
    return at.timestamp()


def lost_session(result: ActionResult) -> bool:
    """True when Codex could not resume the thread it was asked to (NO_THREAD)."""
    return result.exit_code != 0 and (NO_THREAD in result.stderr or NO_THREAD in result.output)


def shown_command(command: str) -> str:
    """A command as Codex ran it, without its `/bin/bash -lc '...'` wrapper."""
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    if len(words) == 3 and words[0].endswith("sh") and words[1] in ("-c", "-lc"):
        return words[2]
    return command


def readable(line: str) -> list[str]:
    """The lines a person reads for one line of `codex exec --json` output: its messages,
    each command as `→ $ command` and its output as `← first line (+N lines)`, failures,
    and the tokens at the end. A line that is not Codex JSON is kept as it is."""
    data = json_object(line.strip())
    if data is None or not isinstance(data.get("type"), str):
        return [line.rstrip("\r\n")] if line.strip() else []
    kind = data["type"]
    given = data.get("item")
    item: dict[str, Any] = given if isinstance(given, dict) else {}
    if kind == "thread.started":
        return [f"· session started (thread {data.get('thread_id') or '?'})"]
    if kind == "item.completed":
        return _item_lines(item)
    if kind == "turn.completed":
        usage = usage_of(data.get("usage") or {})
        return [f"tokens: {usage['input_tokens']} in, {usage['output_tokens']} out"]
    if kind == "turn.failed":
        error = data.get("error")
        said = error.get("message") if isinstance(error, dict) else None
        return [f"(codex failed: {said or 'no detail'})"]
    return []


def _item_lines(item: Mapping[str, Any]) -> list[str]:
    kind = item.get("type")
    if kind == "agent_message":
        return str(item.get("text") or "").strip().splitlines()
    if kind == "command_execution":
        said = [t for t in str(item.get("aggregated_output") or "").splitlines() if t.strip()]
        first = said[0].strip() if said else "(no output)"
        first = first[: RESULT_WIDTH - 1] + "…" if len(first) > RESULT_WIDTH else first
        more = f" (+{len(said) - 1} lines)" if len(said) > 1 else ""
        code = item.get("exit_code")
        mark = f"← exit {code}: " if isinstance(code, int) and code != 0 else "← "
        return [f"→ $ {shown_command(str(item.get('command') or ''))}", f"{mark}{first}{more}"]
    if kind == "file_change":
        changes = item.get("changes")
        listed = changes if isinstance(changes, list) else []
        paths = [str(c.get("path")) for c in listed if isinstance(c, dict)]
        return [f"→ edit {', '.join(paths) or '(files)'}"]
    if kind == "error":
        return [f"· {item.get('message') or 'warning'}"]
    return []


_TOOL_ITEMS = ("command_execution", "file_change")
# A command's status when it did not succeed (Codex 0.171: a non-zero exit, a timeout, a
# command it declined to run).
_FAILED_STATUSES = ("failed", "declined")


def failed_commands(found: Iterable[dict[str, Any]]) -> int:
    """How many of a session's commands failed: a completed `command_execution` whose
    status is failed or declined, or whose exit code is not 0."""
    count = 0
    for data in found:
        item = data.get("item")
        if data["type"] != "item.completed" or not isinstance(item, dict):
            continue
        if item.get("type") != "command_execution":
            continue
        code = item.get("exit_code")
        bad_code = isinstance(code, int) and not isinstance(code, bool) and code != 0
        if item.get("status") in _FAILED_STATUSES or bad_code:
            count += 1
    return count


def tool_lines(lines: Iterable[str]) -> list[str]:
    """The commands of a session and their results as `readable` shows them, at most
    MAX_TOOL_LINES of them, then how many more there were."""
    kept: list[str] = []
    for data in events(lines):
        item = data.get("item")
        wanted = isinstance(item, dict) and item.get("type") in _TOOL_ITEMS
        if data["type"] == "item.completed" and isinstance(item, dict) and wanted:
            kept += _item_lines(item)
    if len(kept) > MAX_TOOL_LINES:
        return [*kept[:MAX_TOOL_LINES], f"(and {len(kept) - MAX_TOOL_LINES} more lines)"]
    return kept


def describe_step(line: str) -> str | None:
    """One line about a Codex JSON line for the live display: `shell: pytest -q` for a
    command started, the first line of a message; None for other lines."""
    data = json_object(line.strip())
    item = data.get("item") if data is not None else None
    if data is None or not isinstance(item, dict):
        return None
    if item.get("type") == "command_execution" and data.get("type") == "item.started":
        return "shell: " + " ".join(shown_command(str(item.get("command") or "")).split())
    if item.get("type") == "agent_message" and data.get("type") == "item.completed":
        words = str(item.get("text") or "").strip().splitlines()
        return words[0].strip() if words else None
    return None
