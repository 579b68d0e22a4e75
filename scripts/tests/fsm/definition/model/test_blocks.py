"""The settings blocks of a loop as dataclasses (definition/model/blocks.py)."""

from __future__ import annotations

from support import llproc
from support.project import LoopProject

from little_loops.fsm.definition.model.blocks import (
    DEFAULT_KEEP_RUNS,
    DEFAULT_RATE_LIMIT_LADDER,
    ArchiveConfig,
    RateLimitConfig,
)
from little_loops.fsm.definition.model.policy_blocks import NotifyConfig, RetryConfig, StallConfig


def test_a_block_reads_its_known_keys_and_writes_what_differs() -> None:
    stall = StallConfig.from_dict({"max_visits": 5, "on_stall": "done", "unknown": 1})
    assert (stall.max_visits, stall.on_stall, stall.same_result) == (5, "done", None)
    assert stall.to_dict() == {"max_visits": 5, "on_stall": "done"}
    assert ArchiveConfig.from_dict({}).to_dict() == {}
    assert ArchiveConfig().keep == DEFAULT_KEEP_RUNS
    assert NotifyConfig.from_dict({"command": "say hi"}).to_dict() == {"command": "say hi"}


def test_retry_on_takes_one_verdict_or_a_list() -> None:
    assert RetryConfig.from_dict({"on": "failure"}).on == ["failure"]
    assert RetryConfig.from_dict({"on": ["error", 3]}).on == ["error", 3]
    assert RetryConfig.from_dict({}).on == ["error"]
    assert RetryConfig.from_dict({"max_attempts": 5}).to_dict() == {"max_attempts": 5}


def test_rate_limit_defaults_to_its_ladder() -> None:
    config = RateLimitConfig()
    assert config.ladder == list(DEFAULT_RATE_LIMIT_LADDER)
    config.ladder.append(1)
    assert RateLimitConfig().ladder == list(DEFAULT_RATE_LIMIT_LADDER)  # not shared
    assert RateLimitConfig.from_dict({"max_wait": 10}).to_dict() == {"max_wait": 10}


def test_a_null_rate_limit_block_runs_as_no_block(loop_project: LoopProject) -> None:
    # validate takes `rate_limit: null` as the block left out; the run reads it so too.
    loop_project.write(
        "nulled",
        """\
        name: nulled
        initial: a
        rate_limit: null
        states:
          a:
            action: echo hi
            next: done
          done:
            terminal: true
        """,
    )
    assert llproc.ll_loop(loop_project.root, "validate", "nulled").returncode == 0
    for argv in (("run", "--dry-run", "nulled"), ("run", "nulled")):
        done = llproc.ll_loop(loop_project.root, *argv)
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr
    assert "ladder" not in llproc.ll_loop(loop_project.root, "run", "--dry-run", "nulled").stdout
