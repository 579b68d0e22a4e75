"""opencode's limits (from its `error` events and messages)."""

from __future__ import annotations

from typing import Any

from little_loops.fsm.actions.opencode_events import Session
from little_loops.fsm.actions.opencode_limits import (
    error_limit,
    message_limit,
    session_limit,
)
from little_loops.fsm.actions.ratelimit import OVERLOADED, RATE_LIMIT, USAGE_LIMIT

NOW = 1_800_000_000.0


def api_error(status: int, message: str, body: str = "", **headers: str) -> dict[str, Any]:
    data = {"message": message, "statusCode": status, "responseBody": body,
            "responseHeaders": headers}  # fmt: skip
    return {"name": "APIError", "data": data}


def test_a_429_is_a_rate_limit_and_retry_after_says_when() -> None:
    limit = error_limit(api_error(429, "Rate limit reached", **{"retry-after": "30"}), NOW)
    assert limit is not None
    assert (limit.kind, limit.resets_at) == (RATE_LIMIT, NOW + 30)
    assert limit.message == "APIError: Rate limit reached (HTTP 429)"
    ms = error_limit(api_error(429, "slow down", **{"Retry-After-Ms": "1500"}), NOW)
    assert ms is not None
    assert ms.resets_at == NOW + 1.5


def test_a_quota_or_usage_limit_is_a_usage_limit_with_its_reset() -> None:
    body = '{"error": {"code": "insufficient_quota"}}'
    quota = error_limit(api_error(429, "You exceeded your current quota", body), NOW)
    assert quota is not None
    assert (quota.kind, quota.resets_at) == (USAGE_LIMIT, None)
    go = error_limit(
        api_error(429, "Usage limit reached. It will reset in 2 hours 5 minutes. To continue"),
        NOW,
    )
    assert go is not None
    assert (go.kind, go.resets_at) == (USAGE_LIMIT, NOW + 2 * 3600 + 5 * 60)
    dated = error_limit(
        api_error(429, "quota exceeded", **{"retry-after": "Wed, 21 Oct 2026 07:28:00 GMT"}), NOW
    )
    assert dated is not None
    assert dated.resets_at == 1792567680.0


def test_overload_and_other_errors() -> None:
    for status, message in ((503, "Service Unavailable"), (500, "Provider is overloaded")):
        found = error_limit(api_error(status, message), NOW)
        assert found is not None
        assert (found.kind, found.resets_at) == (OVERLOADED, None)
    assert error_limit(api_error(401, "Invalid API key"), NOW) is None
    assert error_limit({"name": "UnknownError", "data": {"message": "boom"}}, NOW) is None


def test_the_last_limit_of_a_session_counts() -> None:
    session = Session(errors=[api_error(429, "Rate limit"), {"name": "Other"}])
    found = session_limit(session, NOW)
    assert found is not None
    assert found.kind == RATE_LIMIT
    assert session_limit(Session(), NOW) is None


def test_a_message_alone_still_tells_the_limit() -> None:
    said = "opencode reported an error: APIError: Rate limit reached for requests (HTTP 429)"
    found = message_limit(said, NOW)
    assert found is not None
    assert (found.kind, found.message) == (RATE_LIMIT, said)
    assert message_limit("opencode reported an error: UnknownError: boom", NOW) is None
