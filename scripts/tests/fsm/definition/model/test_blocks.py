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


def test_the_archive_block_defaults_to_its_keep() -> None:
    assert ArchiveConfig.from_dict({}).to_dict() == {}
    assert ArchiveConfig().keep == DEFAULT_KEEP_RUNS


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
