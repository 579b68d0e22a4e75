"""The loop's keys are rows: its table, its docs and the model's defaults are read from them."""

from __future__ import annotations

from dataclasses import MISSING, fields
from typing import Any

import pytest

from little_loops.fsm.definition.checks import key_tables
from little_loops.fsm.definition.model import loop_keys
from little_loops.fsm.definition.model.key_row import LOOP
from little_loops.fsm.definition.model.key_rows import ROWS
from little_loops.fsm.definition.model.lint_flags import LINT_FLAG_KEYS
from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.validate import key_docs

_FIELDS = {f.name: f for f in fields(FSMLoop)}
FIELDED = [row for row in key_tables.LOOP_ROWS if row.field_name in _FIELDS]


def _model_default(name: str) -> Any:
    """FSMLoop's value of field *name* when a file leaves its key out (MISSING: required)."""
    found = _FIELDS[name]
    if found.default_factory is not MISSING:
        return found.default_factory()
    return found.default


@pytest.mark.parametrize("row", FIELDED, ids=lambda row: row.name)
def test_the_model_s_default_is_the_row_s(row: Any) -> None:
    default = _model_default(row.field_name)
    if default is MISSING:
        assert row.required, f"FSMLoop.{row.field_name} has no default: its row is required"
    else:
        assert not row.required
        assert row.default_at(LOOP) == default


def test_a_loop_made_of_its_required_keys_alone_holds_each_row_s_default() -> None:
    fsm = FSMLoop.from_dict({"name": "n", "initial": "a", "states": {"a": {"terminal": True}}})
    for row in FIELDED:
        if not row.required:
            assert fsm.value(row) == row.default_at(LOOP), row.name


def test_the_loop_s_table_and_docs_are_its_rows_in_one_order() -> None:
    options = list(key_tables.OPTION_KEYS)
    rows = [row.name for row in key_tables.LOOP_ROWS]
    stall = rows.index("stall") + 1
    assert list(key_tables.LOOP_KEYS) == [*rows[:stall], *options, *rows[stall:], *LINT_FLAG_KEYS]
    assert list(key_docs.LOOP_KEYS) == list(key_tables.LOOP_KEYS)
    for row in key_tables.LOOP_ROWS:
        assert key_tables.LOOP_KEYS[row.name] is row.check_at(LOOP)
        assert key_docs.LOOP_KEYS[row.name] == row.doc_at(LOOP)
        assert "\n" not in row.doc_at(LOOP)
        assert row.doc_at(LOOP).strip()
    assert key_tables.REQUIRED_LOOP_KEYS == ("name", "initial", "states")
    assert all(row.name in _FIELDS for row in loop_keys.HEAD)


def test_a_loop_setting_is_a_setting_of_a_paradigm_spec_too() -> None:
    settings = [*key_tables.SETTING_ROWS, *key_tables.LATER_SETTING_ROWS]
    named = [row.name for row in settings if LOOP in row.where]
    assert [key for key in key_tables.LOOP_SETTING_KEYS if key not in key_tables.OPTION_KEYS] == (
        named
    )


def test_what_only_the_gathered_rows_can_say_is_said_by_none_of_the_others() -> None:
    # Spellings, lint flags, routes, env and --dry-run read key_rows.ROWS alone: a loop row
    # outside it that said one would be silently ignored.
    for row in key_tables.LOOP_ROWS:
        if row in ROWS:
            continue
        said = (row.theirs, row.lint_flag, row.route, row.env, row.shown, row.block)
        assert said == ((), None, None, None, None, None), row.name
