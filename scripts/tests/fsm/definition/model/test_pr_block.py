"""A pull-request state's `pr:` block as a dataclass (definition/model/pr_block.py)."""

from __future__ import annotations

from little_loops.fsm.definition.model.pr_block import PullRequestConfig
from little_loops.fsm.definition.model.pr_keys import (
    BLOCK_KEYS,
    PR_CHECKS,
    PR_DOCS,
    PR_KEY,
    REQUIRED_PR_KEYS,
)


def test_each_key_is_a_row_and_a_field_whose_default_is_the_rows() -> None:
    fields = list(PullRequestConfig.__dataclass_fields__)
    assert [row.name for row in BLOCK_KEYS] == fields
    assert all(row.where == (PR_KEY,) for row in BLOCK_KEYS)
    assert list(PR_CHECKS) == list(PR_DOCS) == fields
    assert {row.name: row.check for row in BLOCK_KEYS} == PR_CHECKS
    assert REQUIRED_PR_KEYS == ("title",)
    defaults = PullRequestConfig()
    assert {row.name: row.default for row in BLOCK_KEYS} == {
        key: getattr(defaults, key) for key in fields
    }
