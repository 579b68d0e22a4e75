"""opencode's rate, overload and usage limits.

opencode retries a refused request itself (5 times, waiting as `retry-after` says, else
2 s doubling); when it gives up it prints an `error` event whose `data` has the HTTP
`statusCode`, the `responseHeaders` and the `responseBody`, and exits 1. OpenAI says
`insufficient_quota` for a plan's limit; opencode's own Go plan says
"Usage limit reached. It will reset in 2 hours 5 minutes".
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from typing import Any

from little_loops.fsm.actions.opencode_events import Session, error_text, mapping_of
from little_loops.fsm.actions.ratelimit import (
    OVERLOADED,
    RATE_LIMIT,
    USAGE_LIMIT,
    ClaudeLimit,
    reset_time,
)
from little_loops.fsm.actions.spec import GAVE_WAY

_USAGE_WORDS = re.compile(
    r"insufficient_quota|exceeded your current quota|quota exceeded|usage limit|UsageLimitError",
    re.IGNORECASE,
)
_RATE_WORDS = re.compile(r"rate.?limit|too many requests", re.IGNORECASE)
_OVERLOAD_WORDS = re.compile(r"overloaded|service unavailable|at capacity", re.IGNORECASE)
# "It will reset in 2 hours 5 minutes", "resets in 3 days 1 hour".
_RESET_IN = re.compile(r"resets? in ((?:\d+\s*(?:days?|hours?|minutes?|seconds?)[\s,and]*)+)")
_SPAN = re.compile(r"(\d+)\s*(day|hour|minute|second)")
_HTTP_STATUS = re.compile(r"\(HTTP (\d{3})\)$")
_SECONDS = {"day": 86400, "hour": 3600, "minute": 60, "second": 1}


def session_limit(session: Session, now: float | None = None) -> ClaudeLimit | None:
    """The limit the last API error of *session* stands for, or None."""
    now = time.time() if now is None else now
    for error in reversed(session.errors):
        found = error_limit(error, now)
        if found is not None:
            return found
    return None


def message_limit(message: str, now: float | None = None) -> ClaudeLimit | None:
    """The limit an action's `error` message (`opencode reported an error: APIError: ...
    (HTTP 429)`, see opencode_events.error_text) stands for: for a result whose events
    are gone (no output file)."""
    status = _HTTP_STATUS.search(message)
    data = {"message": message, "statusCode": int(status.group(1)) if status else None}
    found = error_limit({"data": data}, time.time() if now is None else now, message)
    if found is None and message.startswith(GAVE_WAY):
        # A refusal it was retrying, whose words name no limit (its log line has no
        # status: a 429 from a proxy, a 5xx): waited out on the same agent, a rate limit.
        return ClaudeLimit(RATE_LIMIT, None, message[:200])
    return found


def error_limit(
    error: Mapping[str, Any], now: float, message: str | None = None
) -> ClaudeLimit | None:
    """The limit one `error` event's error stands for (*message* says it, default: the
    error on one line), or None."""
    data = mapping_of(error.get("data"))
    status = data.get("statusCode") if isinstance(data.get("statusCode"), int) else None
    said = " ".join(str(data.get(key) or "") for key in ("message", "responseBody"))
    message = (message or error_text(dict(error)))[:200]
    headers = mapping_of(data.get("responseHeaders"))
    resets = _retry_after(headers, now) or _reset_in(said, now) or reset_time(said, now)
    if _USAGE_WORDS.search(said):
        return ClaudeLimit(USAGE_LIMIT, resets, message)
    if status in (503, 529) or _OVERLOAD_WORDS.search(said):
        return ClaudeLimit(OVERLOADED, None, message)
    if status == 429 or _RATE_WORDS.search(said):
        return ClaudeLimit(RATE_LIMIT, resets, message)
    return None


def _retry_after(headers: Mapping[str, Any], now: float) -> float | None:
    """When `retry-after-ms` / `retry-after` (seconds or an HTTP date) says to try again."""
    lower = {str(k).lower(): str(v) for k, v in headers.items()}
    try:
        if "retry-after-ms" in lower:
            seconds = float(lower["retry-after-ms"]) / 1000
        elif "retry-after" in lower:
            value = lower["retry-after"].strip()
            try:
                seconds = float(value)
            except ValueError:
                return parsedate_to_datetime(value).timestamp()
        else:
            return None
    except (ValueError, TypeError, OverflowError):
        return None
    return now + seconds if seconds > 0 and seconds < 366 * 86400 else None


def _reset_in(text: str, now: float) -> float | None:
    found = _RESET_IN.search(text)
    if found is None:
        return None
    seconds = sum(int(n) * _SECONDS[unit] for n, unit in _SPAN.findall(found.group(1)))
    return now + seconds if seconds > 0 else None
