"""The fallback rule: which agents are limited or missing, until when, and the next one."""

from __future__ import annotations

import time
from dataclasses import replace

from little_loops.fsm.actions.claude_code import SPEC as CLAUDE
from little_loops.fsm.actions.machine import Machine
from little_loops.fsm.actions.ratelimit import USAGE_LIMIT
from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.engine.records import KEEP_SWITCHES, ExecutorSnapshot
from little_loops.fsm.engine.rules.fallback import (
    NOT_INSTALLED,
    NOT_READY,
    USAGE_LIMITED,
    Fallback,
    Refusal,
    refusal,
    switch_text,
)

# A second agent: Claude Code's reading of limits under another name (as a kind would).
OTHER = replace(CLAUDE, name="other", agent="Other")


def _usage(resets: int | None = None) -> ActionResult:
    said = f"Claude AI usage limit reached|{resets}" if resets else "Claude AI usage limit reached"
    return ActionResult(said, "", 1, 1, error="claude exited 1")


def test_a_usage_limit_is_a_refusal_until_its_reset() -> None:
    resets = int(time.time()) + 3600
    why = refusal(CLAUDE, _usage(resets), ladder_s=30)
    assert why is not None
    assert (why.reason, why.until) == (USAGE_LIMITED, resets)
    assert why.resets is not None


def test_a_usage_limit_without_a_time_lasts_the_ladders_wait() -> None:
    before = time.time()
    why = refusal(CLAUDE, _usage(), ladder_s=30)
    assert why is not None
    assert why.until is not None
    assert before + 30 <= why.until <= time.time() + 30


def test_a_missing_program_is_a_refusal_for_the_rest_of_the_run() -> None:
    missing = ActionResult("", "", 127, 1, error="claude: command not found on PATH")
    assert refusal(CLAUDE, missing, ladder_s=30) == Refusal(NOT_INSTALLED, None)
    by_bash = ActionResult("", "bash: line 1: ./agent: No such file or directory\n", 127, 1)
    assert refusal(CLAUDE, by_bash, ladder_s=30) == Refusal(NOT_INSTALLED, None)


def _installed() -> Machine:
    # Claude Code logged in with a key (its readiness check reads the environment).
    env = {"ANTHROPIC_API_KEY": "sk-ant-test"}
    return Machine(env=env, root=False, which=lambda name: f"/bin/{name}")


def test_a_rate_limit_or_a_failure_is_no_refusal() -> None:
    limited = ActionResult("API Error: 429 rate limited", "", 1, 1, error="claude exited 1")
    assert refusal(CLAUDE, limited, 30, machine=_installed) is None  # waited out on the same one
    assert refusal(CLAUDE, ActionResult("no", "", 1, 1), 30, machine=_installed) is None


def test_limited_agents_are_skipped_until_their_time_then_free_again() -> None:
    rule = Fallback()
    now = time.time()
    rule.mark(CLAUDE, Refusal(USAGE_LIMITED, now + 60, "15:00"))
    assert rule.free([CLAUDE, OTHER], now) == [OTHER]
    assert rule.waiting([CLAUDE, OTHER]) is None  # one is free
    rule.mark(OTHER, Refusal(USAGE_LIMITED, now + 30))
    every = rule.waiting([CLAUDE, OTHER])
    assert every is not None
    assert (every.kind, every.resets_at) == (USAGE_LIMIT, now + 30)  # the earliest
    assert rule.free([CLAUDE, OTHER], now + 45) == [OTHER]
    assert rule.free([CLAUDE, OTHER], now + 61) == [CLAUDE, OTHER]
    assert rule.limited == {}


def test_every_agent_missing_is_no_wait() -> None:
    rule = Fallback()
    rule.mark(CLAUDE, Refusal(NOT_INSTALLED, None))
    rule.mark(OTHER, Refusal(NOT_INSTALLED, None))
    assert rule.free([CLAUDE, OTHER]) == []
    assert rule.waiting([CLAUDE, OTHER]) is None  # none will ever be free: the error routes


def test_a_list_of_one_never_waits_here() -> None:
    rule = Fallback()
    rule.mark(CLAUDE, Refusal(USAGE_LIMITED, time.time() + 60))
    assert rule.waiting([CLAUDE]) is None  # the rate-limit rule waits as before


def test_its_memory_is_dumped_and_restored() -> None:
    rule = Fallback()
    rule.mark(CLAUDE, Refusal(USAGE_LIMITED, 2e9, "15:00"))
    for n in range(KEEP_SWITCHES + 3):
        rule.switched({"state": f"s{n}", "from": "claude", "to": "other", "reason": "x"})
    dumped = rule.dump()
    assert dumped["limited_agents"] == {
        "claude": {"reason": USAGE_LIMITED, "until": 2e9, "resets": "15:00"}
    }
    assert len(dumped["agent_switches"]) == KEEP_SWITCHES
    assert dumped["agent_switches"][-1]["state"] == f"s{KEEP_SWITCHES + 2}"
    again = Fallback()
    again.restore(ExecutorSnapshot("work", 1, **dumped))
    assert again.dump() == dumped


def test_a_switch_as_a_person_reads_it() -> None:
    event = {"from": "claude", "to": "codex", "reason": USAGE_LIMITED, "resets": "15:00"}
    assert switch_text(event) == "claude's usage limit (resets 15:00): on with codex"
    missing = {"from": "codex", "to": "gemini", "reason": NOT_INSTALLED}
    assert switch_text(missing) == "codex is not installed: on with gemini"


def test_a_failed_agent_that_is_not_ready_is_skipped_for_the_rest_of_the_run() -> None:
    machine = _installed

    def ready(here: Machine) -> str | None:
        return None if here.env.get("OTHER_KEY") else "run `other login`, or set OTHER_KEY"

    other = replace(OTHER, ready=ready)
    failed = ActionResult("", "401 unauthorized", 1, 1, error="other exited 1")
    assert refusal(other, failed, ladder_s=30, machine=machine) == Refusal(NOT_READY, None)
    assert refusal(other, ActionResult("ok", "", 0, 1), 30, machine=machine) is None
    assert switch_text({"from": "other", "to": "claude", "reason": NOT_READY}) == (
        "other cannot run here: on with claude"
    )
