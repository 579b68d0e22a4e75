"""Recognise an agent's rate, overload and usage limits (Claude Code's words, a judge's error)."""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from datetime import datetime, timedelta

from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.actions.spec import AgentLimit as AgentLimit  # its home: the kind

RATE_LIMIT = "rate_limit"  # HTTP 429: too many requests or tokens for now
OVERLOADED = "overloaded"  # HTTP 529: the API is overloaded
USAGE_LIMIT = "usage_limit"  # a plan's usage limit, with the time it resets

# What each kind is called where a person reads it ("waiting for Claude's usage limit").
KIND_WORDS: dict[str, str] = {
    RATE_LIMIT: "rate limit",
    OVERLOADED: "overload",
    USAGE_LIMIT: "usage limit",
}

# Claude Code (2.1.x) ends a session the API refused, after its own retries, with
# `is_error: true`, `api_error_status: 429|529` and a result such as
# "API Error: Request rejected (429) · <message>" or "API Error: 529 <message>. ...".
# The patterns are compiled the first time one is used (by re's cache): a run whose agents
# hit no limit, and every run of shell steps, compiles none.
_API_ERROR = r"API Error:\s*(?:Request rejected\s*\()?(429|529)\b"
_OVERLOADED_TEXT = r"\boverloaded_error\b|\bOverloaded\b"
# "Claude AI usage limit reached|1732600000": the time it resets, in epoch seconds.
_USAGE_EPOCH = r"(?i)usage limit reached\|(\d{9,11})"
# "5-hour limit reached ∙ resets 3pm", "You've hit your limit · resets 15:00",
# "usage limit reached … resets at 3:30pm": a clock time today or tomorrow.
_RESETS_AT = (
    r"(?is)(?:limit reached|hit your [\w -]*limit).*?\bresets(?: at)?\s+"
    r"(\d{1,2})(?::(\d{2}))?(?::(\d{2}))?\s*([ap]m)?"
)
_USAGE_TEXT = r"(?i)usage limit reached|limit reached\s*[∙·•]\s*resets"
# The LLM judge's reason for a refused call (evaluators/llm_structured.py).
_JUDGE_ERROR = r"^API error (429|529)\b"


def claude_limit(result: ActionResult, now: float | None = None) -> AgentLimit | None:
    """The limit a Claude Code session ended on, or None when it did not end on one."""
    if result.error is None:
        return None  # a session that finished is never read as a limit
    text = "\n".join(part for part in (result.output, result.error, result.stderr) if part)
    status: int | None = None
    if result.output_path:
        from little_loops.fsm.actions.claude import report_from_file  # a Claude session's

        report = report_from_file(result.output_path)
        code = report.get("api_error_status") if report else None
        if isinstance(code, int) and not isinstance(code, bool):
            status = code
    return limit_in(text, status, now)


def judge_limit(details: Mapping[str, object], now: float | None = None) -> AgentLimit | None:
    """The limit an LLM judge's `error` verdict (its *details*) stands for, or None."""
    error = details.get("error")
    if not isinstance(error, str):
        return None
    kind, resets = details.get("limit"), details.get("resets_at")
    if isinstance(kind, str) and kind in KIND_WORDS:  # a judge through an agent's CLI
        at = (
            float(resets)
            if isinstance(resets, int | float) and not isinstance(resets, bool)
            else None
        )
        return AgentLimit(kind, at, error)
    found = re.match(_JUDGE_ERROR, error)
    if found is None:
        return None
    return limit_in(error, int(found.group(1)), now)


def limit_in(text: str, status: int | None = None, now: float | None = None) -> AgentLimit | None:
    """The limit *text* (and the HTTP *status*, when known) tell of, or None."""
    if status is None:
        found = re.search(_API_ERROR, text)
        status = int(found.group(1)) if found else None
    message = _first_line(text)
    resets = reset_time(text, time.time() if now is None else now)
    if resets is not None or re.search(_USAGE_TEXT, text):
        return AgentLimit(USAGE_LIMIT, resets, message)
    overloaded = status is None and re.search(_OVERLOADED_TEXT, text) and "API Error" in text
    if status == 529 or overloaded:
        return AgentLimit(OVERLOADED, None, message)
    if status == 429:
        return AgentLimit(RATE_LIMIT, None, message)
    return None


def reset_time(text: str, now: float) -> float | None:
    """When a usage limit *text* says it resets (epoch seconds), or None."""
    epoch = re.search(_USAGE_EPOCH, text)
    if epoch is not None:
        return float(epoch.group(1))
    clock = re.search(_RESETS_AT, text)
    if clock is None:
        return None
    hour, minute, second = int(clock.group(1)), int(clock.group(2) or 0), int(clock.group(3) or 0)
    half = (clock.group(4) or "").lower()
    if half:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if half == "pm" else 0)
    if hour > 23 or minute > 59 or second > 59:
        return None
    base = datetime.fromtimestamp(now)
    at = base.replace(hour=hour, minute=minute, second=second, microsecond=0)
    if at.timestamp() <= now:
        at += timedelta(days=1)  # the time has passed today: it means tomorrow
    return at.timestamp()


# The name this class had when Claude Code was the only agent.
ClaudeLimit = AgentLimit


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:200]
    return ""
