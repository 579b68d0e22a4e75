"""Every row is read: its key is checked, documented, and filled into the model."""

from __future__ import annotations

from dataclasses import fields

from little_loops.fsm.definition.checks.key_tables import EVALUATE_KEYS, LOOP_KEYS, STATE_KEYS
from little_loops.fsm.definition.model import commit_keys
from little_loops.fsm.definition.model.key_row import EVALUATE, LOOP, STATE
from little_loops.fsm.definition.model.key_rows import ENV_ROWS, ROUTE_ROWS, ROWS
from little_loops.fsm.definition.model.lint_flags import CHECKS
from little_loops.fsm.definition.model.typed import FSMLoop, StateConfig
from little_loops.fsm.evaluators.config import EvaluateConfig
from little_loops.fsm.validate import key_docs


def test_each_row_is_in_the_table_and_the_docs_of_each_place_it_stands() -> None:
    tables = {
        LOOP: (LOOP_KEYS, key_docs.LOOP_KEYS, FSMLoop),
        STATE: (STATE_KEYS, key_docs.STATE_KEYS, StateConfig),
        EVALUATE: (EVALUATE_KEYS, key_docs.EVALUATE_KEYS, EvaluateConfig),
    }
    for row in (*ROWS, *commit_keys.KEYS):
        for place in row.where:
            checks, docs, model = tables[place]
            assert checks[row.name] is row.check_at(place)
            assert docs[row.name] == row.doc_at(place)
            assert row.field_name in {f.name for f in fields(model)}


def test_the_names_are_one_each_and_each_lint_flag_is_a_flag() -> None:
    for place in (LOOP, STATE, EVALUATE):
        named = [row.name for row in ROWS if place in row.where]
        assert len(named) == len(set(named))
    assert {row.lint_flag for row in ROWS if row.lint_flag} <= set(CHECKS)


def test_route_and_env_rows_say_where_and_what() -> None:
    assert [row.name for row in ROUTE_ROWS] == ["on_rate_limit_exhausted", "on_throttle_hard"]
    assert [row.name for row in ENV_ROWS] == ["pruning_profile"]
    state = StateConfig.from_dict({"action": "/x", "pruning_profile": {"name": "p"}})
    assert state.env_of(agent=True) == {"LL_AUTOMATION": "1", "LL_AUTOMATION_PROFILE": "p"}
    assert state.env_of(agent=False) == {}
