"""opencode's rate, overload and usage limits, and the prices of the models it may run.

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
from little_loops.fsm.facts.pricing import USAGE_KEYS, estimate_cost

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


# US dollars per million (input, output, cached input) tokens of models opencode often
# runs that are not Claude (Claude models are priced by facts.pricing), from the vendors'
# published prices. Used only when opencode reported no cost (a provider without prices in
# its model list). A name also matches its dated snapshots; the longest match wins.
PRICES_PER_MTOK: dict[str, tuple[float, float, float]] = {
    "gpt-5": (1.25, 10.0, 0.125),
    "gpt-5-mini": (0.25, 2.0, 0.025),
    "gpt-5-nano": (0.05, 0.4, 0.005),
    "gpt-4.1": (2.0, 8.0, 0.5),
    "gpt-4.1-mini": (0.4, 1.6, 0.1),
    "gpt-4.1-nano": (0.1, 0.4, 0.025),
    "gpt-4o": (2.5, 10.0, 1.25),
    "gpt-4o-mini": (0.15, 0.6, 0.075),
    "o3": (2.0, 8.0, 0.5),
    "o3-mini": (1.1, 4.4, 0.55),
    "o4-mini": (1.1, 4.4, 0.275),
    "gemini-2.5-pro": (1.25, 10.0, 0.31),
    "gemini-2.5-flash": (0.3, 2.5, 0.075),
}


def priced(model: str, usage: Mapping[str, int]) -> float | None:
    """Dollars for *usage* on *model* (`provider/model` or just the model), or None when
    its price is not known here."""
    name = model.rsplit("/", 1)[-1].strip().lower()
    claude = estimate_cost(name, {key: usage.get(key, 0) for key in USAGE_KEYS})
    if claude is not None:
        return claude
    matches = [key for key in PRICES_PER_MTOK if name == key or name.startswith(key + "-")]
    if not matches:
        return None
    per_in, per_out, per_cached = PRICES_PER_MTOK[max(matches, key=len)]
    dollars = (
        (usage.get("input_tokens", 0) + usage.get("cache_creation_input_tokens", 0)) * per_in
        + usage.get("output_tokens", 0) * per_out
        + usage.get("cache_read_input_tokens", 0) * per_cached
    )
    return dollars / 1_000_000
