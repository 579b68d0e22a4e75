"""The key tables: one list per level, which the checker, the docs and the schema read."""

from __future__ import annotations

from little_loops.fsm.definition.checks import key_checks, key_tables
from little_loops.fsm.validate import key_docs


def test_the_checker_reads_the_tables_it_is_given() -> None:
    assert key_checks.LOOP_KEYS is key_tables.LOOP_KEYS
    assert key_checks.STATE_KEYS is key_tables.STATE_KEYS


def test_every_key_of_a_level_is_documented() -> None:
    assert set(key_tables.LOOP_KEYS) == set(key_docs.LOOP_KEYS)
    assert set(key_tables.STATE_KEYS) == set(key_docs.STATE_KEYS)


def test_both_spellings_of_a_route_are_keys_of_a_state() -> None:
    for ours, theirs in (("on_success", "on_yes"), ("on_failure", "on_no")):
        assert ours in key_tables.STATE_KEYS
        assert theirs in key_tables.STATE_KEYS
