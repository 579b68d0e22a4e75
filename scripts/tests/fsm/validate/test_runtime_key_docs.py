"""The docs of little-loops' runtime keys: each documented key is a key of its level."""

from __future__ import annotations

from little_loops.fsm.definition import key_tables
from little_loops.fsm.validate import key_docs, runtime_key_docs


def test_each_documented_key_is_checked_and_spliced() -> None:
    pairs = [
        (runtime_key_docs.LOOP_RUNTIME_KEYS, key_tables.LOOP_KEYS, key_docs.LOOP_KEYS),
        (runtime_key_docs.STATE_RUNTIME_KEYS, key_tables.STATE_KEYS, key_docs.STATE_KEYS),
        (runtime_key_docs.EVALUATE_EXTRA_KEYS, key_tables.EVALUATE_KEYS, key_docs.EVALUATE_KEYS),
    ]
    for documented, checked, docs in pairs:
        assert set(documented) <= set(checked)
        assert documented.items() <= docs.items()
