"""The runtime keys little-loops adds, spliced into the key tables once each."""

from __future__ import annotations

from little_loops.fsm.definition import key_tables, runtime_keys


def test_each_table_is_spliced_into_its_level() -> None:
    assert runtime_keys.LOOP_RUNTIME_KEYS.items() <= key_tables.LOOP_KEYS.items()
    assert runtime_keys.STATE_RUNTIME_KEYS.items() <= key_tables.STATE_KEYS.items()
    assert runtime_keys.EVALUATE_RUNTIME_KEYS.items() <= key_tables.EVALUATE_KEYS.items()
