"""The retry schedule (Step Functions' Retry) and the rate-limit ladder, and the `retry:` checks."""

from __future__ import annotations

import random
from textwrap import dedent

import pytest

from little_loops.fsm.actions.ratelimit import ClaudeLimit
from little_loops.fsm.definition.model.typed import RateLimitConfig, RetryConfig
from little_loops.fsm.definition.reading.loader import load_text
from little_loops.fsm.engine.attempts import (
    RETRY_WAIT,
    Attempts,
    Wait,
    ladder_delay,
    pending_wait,
    retries_on,
    retry_delay,
)
from little_loops.fsm.validate.loopfile import check_document


def test_the_defaults_are_step_functions_defaults() -> None:
    policy = RetryConfig()
    assert (policy.on, policy.max_attempts, policy.interval, policy.backoff_rate) == (
        ["error"],
        3,
        1.0,
        2.0,
    )
    assert [retry_delay(policy, n) for n in (1, 2, 3)] == [1.0, 2.0, 4.0]


def test_max_interval_caps_the_wait_and_full_jitter_stays_below_it() -> None:
    policy = RetryConfig(interval=2, backoff_rate=3, max_interval=10)
    assert [retry_delay(policy, n) for n in (1, 2, 3)] == [2.0, 6.0, 10.0]
    jittered = RetryConfig(interval=4, jitter="full")
    rng = random.Random(7)
    waits = [retry_delay(jittered, 1, rng) for _ in range(200)]
    assert all(0 <= w <= 4 for w in waits)
    assert min(waits) < 1
    assert max(waits) > 3  # spread over the whole range


def test_a_huge_backoff_never_overflows_and_waits_at_most_a_year() -> None:
    # backoff_rate: 1e308 (valid) made the third wait 1e306 s: an OverflowError ended the run.
    year = 365 * 24 * 3600.0
    assert retry_delay(RetryConfig(interval=0.01, backoff_rate=1e308), 3) == year
    assert retry_delay(RetryConfig(interval=1, backoff_rate=2), 5000) == year
    assert retry_delay(RetryConfig(interval=1, backoff_rate=1e308, max_interval=30), 9) == 30
    assert retry_delay(RetryConfig(interval=0, backoff_rate=1e308), 9) == 0


def test_a_saved_wait_never_lasts_longer_than_planned() -> None:
    # The clock set back a day while the run was stopped (or a saved `until` of 1e300,
    # which ended a resume with an internal OverflowError): the wait is what was planned.
    assert Wait(RETRY_WAIT, until=1000.0 + 86400, seconds=30).left(now=1000.0) == 30
    assert Wait(RETRY_WAIT, until=1e300, seconds=1e300).left(now=0.0) == 365 * 24 * 3600.0
    assert Wait(RETRY_WAIT, until=1010.0, seconds=30).left(now=1000.0) == 10
    assert Wait(RETRY_WAIT, until=990.0, seconds=30).left(now=1000.0) == 0


def test_on_matches_verdicts_and_exit_codes() -> None:
    policy = RetryConfig(on=["failure", 75])
    assert retries_on(policy, "failure", 1)
    assert retries_on(policy, "error", 75)
    assert not retries_on(policy, "error", 1)
    assert not retries_on(policy, "success", 0)


def test_the_ladder_repeats_its_last_step_and_max_wait_bounds_a_step() -> None:
    config = RateLimitConfig(ladder=[1, 5], max_wait=8)
    assert [ladder_delay(config, n) for n in range(4)] == [1.0, 5.0, 5.0, 5.0]
    attempts = Attempts()
    limit = ClaudeLimit("rate_limit")
    planned = [attempts.plan_limit("s", limit, config, rejudge=False) for _ in range(4)]
    assert [w.seconds if w else None for w in planned] == [1.0, 5.0, 2.0, None]


def test_a_reset_time_is_waited_for_and_shown_by_status() -> None:
    attempts = Attempts()
    wait = attempts.plan_limit(
        "fix", ClaudeLimit("usage_limit", resets_at=10_000.0), RateLimitConfig(), rejudge=False
    )
    assert wait is not None
    assert wait.limit == "usage_limit"
    shown = pending_wait(attempts.snapshot(), now=wait.until - 30)
    assert shown == f"for Claude's usage limit in state fix, resets {wait.resets} (30s left)"


def problems(text: str) -> list[str]:
    report = check_document(load_text(dedent(text), "loop.yaml"))
    return [str(p) for p in report.problems()]


@pytest.mark.parametrize(
    ("retry", "message"),
    [
        ("{intervl: 1}", "retry > intervl: unknown key (did you mean interval?)"),
        ("{on: [sucess]}", "retry > on: 'sucess' is not a verdict of this state (did you mean"),
        ("{on: [1.5]}", "retry > on: expected verdicts, `error` or exit codes"),
        ("{on: [256]}", "retry > on: an exit code is a whole number from 0 to 255, got 256"),
        ("{on: [-1]}", "retry > on: an exit code is a whole number from 0 to 255, got -1"),
        ("{jitter: half}", "retry > jitter: expected one of none, full, got 'half'"),
        (
            "{max_attempts: 0}",
            "retry > max_attempts: expected a whole number from 1 to 10000, got 0",
        ),
    ],
)
def test_a_wrong_retry_is_named(retry: str, message: str) -> None:
    found = problems(f"""
        name: bad
        initial: work
        states:
          work:
            action: exit 1
            retry: {retry}
            on_success: done
          done:
            terminal: true
        """)
    assert any(message in p for p in found), found


def test_on_retry_exhausted_must_name_a_state() -> None:
    found = problems("""
        name: bad
        initial: work
        rate_limit: {ladder: [1, 2], max_wait: 60}
        states:
          work:
            action: exit 1
            retry: {on: [failure, 3]}
            on_retry_exhausted: nowhere
            on_success: done
          done:
            terminal: true
        """)
    assert found == [
        "loop 'bad' > states > work > on_retry_exhausted: 'nowhere' is not a state"
        " (states: work, done)"
    ]


def test_retry_and_rate_limit_survive_writing_the_loop_back() -> None:
    from little_loops.fsm.definition.model.typed import FSMLoop
    from little_loops.fsm.definition.writing.writer import dump_fsm_yaml

    text = """
        name: kept
        initial: work
        retry: {on: [7], max_attempts: 2, interval: 0.1}
        rate_limit: {ladder: [5, 10], max_wait: 60}
        states:
          work:
            action: exit 7
            retry: {on: [failure, 3], jitter: full, max_interval: 5}
            on_retry_exhausted: done
            on_success: done
            on_failure: done
          done:
            terminal: true
        """
    fsm = FSMLoop.from_dict(load_text(dedent(text), "kept.yaml").data)
    written = dump_fsm_yaml(fsm)
    assert "'on':" in written  # quoted: a YAML 1.1 reader would take on for true
    assert FSMLoop.from_dict(load_text(written, "again.yaml").data) == fsm
    assert fsm.states["work"].retry == RetryConfig(on=["failure", 3], jitter="full", max_interval=5)
    assert fsm.rate_limit == RateLimitConfig(ladder=[5, 10], max_wait=60)


def test_a_limit_wait_names_its_agent_and_an_older_record_claude() -> None:
    from little_loops.fsm.engine.attempts import pending_wait, waiting_text

    codex = {"state": "fix", "seconds": 30, "limit": "usage_limit", "agent": "Codex"}
    assert waiting_text(codex) == "waiting for Codex's usage limit (30s)"
    assert waiting_text({**codex, "agent": "every agent", "resets": "15:00"}) == (
        "waiting for every agent's usage limit (resets 15:00)"
    )
    older = {"state": "fix", "seconds": 30, "limit": "rate_limit"}
    assert waiting_text(older) == "waiting for Claude's rate limit (30s)"
    assert waiting_text({**codex, "judge": True}) == "waiting for the judge's usage limit (30s)"
    wait = {"kind": "rate_limit", "until": 0, "seconds": 60, "limit": "usage_limit"}
    saved = {"state": "fix", "wait": {**wait, "agent": "Gemini"}}
    assert pending_wait(saved, now=0).startswith("for Gemini's usage limit in state fix")
    assert pending_wait({"state": "fix", "wait": wait}, now=0).startswith("for Claude's usage")
