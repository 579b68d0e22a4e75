"""What each loop-file key means (validate/key_docs.py): every checked key documented, once."""

from __future__ import annotations

import pytest

from little_loops.fsm.actions.registry import BY_OPTIONS_KEY
from little_loops.fsm.definition.checks import key_tables
from little_loops.fsm.definition.model import retry_keys as retry_keys
from little_loops.fsm.definition.model.blocks import (
    DEFAULT_RATE_LIMIT_LADDER,
    DEFAULT_RATE_LIMIT_MAX_WAIT,
)
from little_loops.fsm.evaluators.registry import EVALUATE_KEY_NAMES
from little_loops.fsm.validate import key_docs

TABLES = [
    (key_docs.STATE_KEYS, key_tables.STATE_KEYS),
    (key_docs.STALL_KEYS, key_tables.STALL_KEYS),
    (key_docs.ARCHIVE_KEYS, key_tables.ARCHIVE_KEYS),
    (key_docs.NOTIFY_KEYS, key_tables.NOTIFY_KEYS),
    (key_docs.LLM_KEYS, key_tables.LLM_KEYS),
    *((key_docs.OPTION_KEYS[key], table) for key, table in key_tables.OPTION_KEYS.items()),
    (key_docs.RETRY_KEYS, retry_keys.RETRY_KEYS),
    (key_docs.RATE_LIMIT_KEYS, retry_keys.RATE_LIMIT_KEYS),
]


@pytest.mark.parametrize(("docs", "checks"), TABLES)
def test_each_checked_key_has_its_sentence(docs: dict[str, str], checks: dict[str, object]) -> None:
    assert sorted(docs) == sorted(checks)
    for key, text in docs.items():
        assert text.strip(), key
        assert "\n" not in text, key


def test_each_options_block_is_described_where_it_is_a_key() -> None:
    assert set(key_docs.OPTIONS) == set(key_tables.OPTION_KEYS) == set(BY_OPTIONS_KEY)
    assert "claude" in BY_OPTIONS_KEY
    for key, text in key_docs.OPTIONS.items():
        assert text.strip(), key
        assert key_docs.LOOP_KEYS[key].strip(), key
        assert key_docs.STATE_KEYS[key].strip(), key


def test_the_loop_and_evaluate_keys() -> None:
    assert set(key_tables.LOOP_KEYS) <= set(key_docs.LOOP_KEYS)
    assert set(key_docs.EVALUATE_KEYS) == set(EVALUATE_KEY_NAMES)


def test_the_defaults_the_docs_name_are_the_defaults() -> None:
    ladder = ", ".join(f"{step:g}" for step in DEFAULT_RATE_LIMIT_LADDER)
    assert f"Default [{ladder}]." in key_docs.RATE_LIMIT_KEYS["ladder"]
    assert f"Default {DEFAULT_RATE_LIMIT_MAX_WAIT:g} " in key_docs.RATE_LIMIT_KEYS["max_wait"]
    assert "{paradigms}" in key_docs.PARADIGM_FILE
