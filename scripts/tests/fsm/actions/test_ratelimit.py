"""Claude's limits as the real Claude Code (2.1.x) and the LLM judge report them."""

from __future__ import annotations

from datetime import datetime

from little_loops.fsm.actions.ratelimit import judge_limit, limit_in

NOW = datetime(2026, 1, 15, 10, 30).timestamp()


def test_api_errors_after_claude_codes_retries() -> None:
    rejected = limit_in("API Error: Request rejected (429) · fake 429", now=NOW)
    assert rejected is not None
    assert (rejected.kind, rejected.resets_at) == ("rate_limit", None)
    overloaded = limit_in("API Error: 529 fake 529. This is a server-side issue", now=NOW)
    assert overloaded is not None
    assert overloaded.kind == "overloaded"
    assert limit_in("API Error: 400 bad request", now=NOW) is None
    assert limit_in("I fixed 429 bugs", now=NOW) is None


def test_usage_limits_with_their_reset_time() -> None:
    epoch = limit_in("API Error: Request rejected (429) · Claude AI usage limit reached|1768500000")
    assert epoch is not None
    assert (epoch.kind, epoch.resets_at) == ("usage_limit", 1768500000.0)
    at_three = limit_in("5-hour limit reached ∙ resets 3pm", now=NOW)
    assert at_three is not None
    assert at_three.resets_at == datetime(2026, 1, 15, 15, 0).timestamp()
    tomorrow = limit_in("You've hit your limit · resets 9:15am", now=NOW)
    assert tomorrow is not None
    assert tomorrow.resets_at == datetime(2026, 1, 16, 9, 15).timestamp()
    assert tomorrow.resets_text() == "09:15"


def test_the_judges_refusals() -> None:
    limit = judge_limit({"error": "API error 529: Overloaded"})
    assert limit is not None
    assert limit.kind == "overloaded"
    assert judge_limit({"error": "API error 400: bad"}) is None
    assert judge_limit({"error": "API call timed out after 30s"}) is None


def test_the_limit_has_the_agents_name_and_keeps_its_old_one() -> None:
    from little_loops.fsm.actions.ratelimit import AgentLimit, ClaudeLimit

    assert ClaudeLimit is AgentLimit
    assert AgentLimit("usage_limit").resets_text() is None
