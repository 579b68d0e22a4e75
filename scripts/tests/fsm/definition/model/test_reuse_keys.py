"""The reuse keys are known to the key tables: a typo of one gets did-you-mean."""

from __future__ import annotations

from little_loops.fsm.definition.checks.key_checks import check_definition
from little_loops.fsm.definition.checks.key_tables import LOOP_KEYS, STATE_KEYS
from little_loops.fsm.definition.model.reuse_keys import REUSE_LOOP_CHECKS
from little_loops.fsm.definition.reading.loopdoc import REUSE_LOOP_KEYS


def test_the_reuse_keys_are_in_the_tables_and_are_those_resolved_while_reading() -> None:
    assert set(REUSE_LOOP_CHECKS) <= set(LOOP_KEYS)
    assert tuple(REUSE_LOOP_CHECKS) == REUSE_LOOP_KEYS
    assert "fragment" in STATE_KEYS


def test_a_misspelt_reuse_key_gets_did_you_mean() -> None:
    data = {
        "name": "x",
        "initial": "a",
        "imports": ["l.yaml"],
        "states": {"a": {"terminal": True, "fragmnet": "f"}},
    }
    messages = [str(p) for p in check_definition(data)]
    assert "loop 'x' > imports: unknown key (did you mean import?)" in messages
    assert "loop 'x' > states > a > fragmnet: unknown key (did you mean fragment?)" in messages
