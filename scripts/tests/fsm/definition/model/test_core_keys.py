"""A state's and its `evaluate:` block's keys are rows (model/core_keys.py and the feature
modules): the tables and docs are made of them, and the model's defaults are the rows'."""

from __future__ import annotations

from dataclasses import MISSING, Field, fields
from typing import Any

import pytest

from little_loops.fsm.definition.checks import key_tables
from little_loops.fsm.definition.model import (
    commit_keys,
    core_keys,
    key_rows,
    metadata,
    reuse_keys,
    route_keys,
)
from little_loops.fsm.definition.model import evaluate_keys as evaluate_keys
from little_loops.fsm.definition.model.key_row import EVALUATE, STATE, Key
from little_loops.fsm.definition.model.typed import StateConfig
from little_loops.fsm.definition.reading.loader import load_text
from little_loops.fsm.evaluators.config import EvaluateConfig
from little_loops.fsm.validate import json_schema, key_docs
from little_loops.fsm.validate.loopfile import check_document

# Every row a state's or an `evaluate:` block's key table is made of.
ROWS: tuple[Key, ...] = (
    *key_rows.ROWS,
    *commit_keys.KEYS,
    *metadata.STATE_ROWS,
    *reuse_keys.STATE_ROWS,
)
EVALUATE_LOOP = """\
name: judge
initial: a
states:
  a:
    action: echo hi
    evaluate: {pattern: hi}
    next: done
  done:
    terminal: true
"""
MODELS: dict[str, type] = {STATE: StateConfig, EVALUATE: EvaluateConfig}


def _default(found: Field[Any]) -> Any:
    if found.default_factory is not MISSING:
        return found.default_factory()
    return found.default


def _fielded(place: str) -> list[tuple[Key, Field[Any]]]:
    """The rows standing at *place* that fill a field of its model, with the field."""
    by_name = {f.name: f for f in fields(MODELS[place])}
    return [
        (row, by_name[row.field_name])
        for row in ROWS
        if place in row.where and row.field_name in by_name
    ]


@pytest.mark.parametrize("place", [STATE, EVALUATE])
def test_the_model_s_defaults_are_the_rows_defaults(place: str) -> None:
    checked = _fielded(place)
    assert len(checked) >= (50 if place == STATE else 20)
    for row, found in checked:
        if found.default is MISSING and found.default_factory is MISSING:
            assert row.required, f"{row.name}: the model needs it, the row does not say so"
        elif row.field_name == row.name:  # another spelling's field is its key's (on_yes)
            assert _default(found) == row.default, row.name
            assert not row.required, row.name


def test_the_required_evaluate_key_is_the_row_s_the_checks_and_schema_read() -> None:
    assert evaluate_keys.REQUIRED_KEYS == ("type",)
    schema = json_schema.build()["$defs"]["evaluateConfig"]
    assert schema["required"] == ["type"]
    report = check_document(load_text(EVALUATE_LOOP, "judge.yaml"), "judge.yaml")
    assert [e.message for e in report.errors] == ["missing required key 'type'"]


def test_a_row_that_fills_another_key_s_field_is_that_key_s_other_spelling() -> None:
    spelled = {row.name: row.field for row in route_keys.KEYS if row.field is not None}
    assert spelled == {"on_yes": "on_success", "on_no": "on_failure", "failure": "outcome"}
    assert [row.name for row in core_keys.KEYS if row.field is not None] == ["with"]


def test_every_state_and_evaluate_key_but_the_registries_is_a_row() -> None:
    from_registries = {*key_tables.OPTION_KEYS, "sandbox"}
    for place, table in ((STATE, key_tables.STATE_KEYS), (EVALUATE, key_tables.EVALUATE_KEYS)):
        rows = {row.name: row for row in ROWS if place in row.where}
        assert set(table) - from_registries == set(rows)
        for key, check in table.items():
            if key not in from_registries:
                assert check is rows[key].check_at(place), key


def test_the_docs_are_the_rows_in_the_tables_order() -> None:
    assert list(key_docs.STATE_KEYS) == list(key_tables.STATE_KEYS)
    assert list(key_docs.EVALUATE_KEYS) == list(key_tables.EVALUATE_KEYS)
    for row in (*core_keys.KEYS, *route_keys.KEYS, *metadata.STATE_ROWS, *reuse_keys.STATE_ROWS):
        assert key_docs.STATE_KEYS[row.name] == row.doc
    for row in evaluate_keys.BASE_KEYS:
        assert key_docs.EVALUATE_KEYS[row.name] == row.doc


def test_the_core_rows_stand_in_the_model_s_field_order() -> None:
    order = [f.name for f in fields(StateConfig)]
    for run in (core_keys.ACTION_KEYS, core_keys.SESSION_KEYS, core_keys.SUBLOOP_KEYS):
        at = [order.index(row.field_name) for row in run]
        assert at == sorted(at)
    evaluate = [f.name for f in fields(EvaluateConfig)]
    base = [row.name for row in evaluate_keys.BASE_KEYS]
    assert base == evaluate[: len(base)]


@pytest.mark.parametrize(
    ("key", "value", "problem"),
    [
        ("capture", "a.b", "expected a name of letters, digits, '_' and '-'"),
        ("action_type", "approval", None),
        ("session", "resume", "expected one of fresh, continue"),
        ("outcome", "failure", None),
        ("terminal", "yes", "expected true or false"),
        ("timeout", 0, "expected a number > 0"),
    ],
)
def test_a_core_row_s_check_says_what_is_wrong_with_a_value(
    key: str, value: object, problem: str | None
) -> None:
    row = next(row for row in core_keys.KEYS if row.name == key)
    found = row.check(value)
    if problem is None:
        assert found is None
    else:
        assert found is not None
        assert str(found).startswith(problem), found
