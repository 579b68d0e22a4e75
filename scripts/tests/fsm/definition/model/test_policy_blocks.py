"""The `stall:`, `retry:` and `notify:` blocks as dataclasses (model/policy_blocks.py)."""

from __future__ import annotations

from little_loops.fsm.definition.model.policy_blocks import NotifyConfig, RetryConfig, StallConfig


def test_a_block_reads_its_known_keys_and_writes_what_differs() -> None:
    stall = StallConfig.from_dict({"max_visits": 5, "on_stall": "done", "unknown": 1})
    assert (stall.max_visits, stall.on_stall, stall.same_result) == (5, "done", None)
    assert stall.to_dict() == {"max_visits": 5, "on_stall": "done"}
    assert NotifyConfig.from_dict({"command": "say hi"}).to_dict() == {"command": "say hi"}


def test_retry_on_takes_one_verdict_or_a_list() -> None:
    assert RetryConfig.from_dict({"on": "failure"}).on == ["failure"]
    assert RetryConfig.from_dict({"on": ["error", 3]}).on == ["error", 3]
    assert RetryConfig.from_dict({}).on == ["error"]
    assert RetryConfig.from_dict({"max_attempts": 5}).to_dict() == {"max_attempts": 5}
