"""The rows of definition/model/circuit_keys.py: read without the block's dataclasses, which
circuit.py holds (and names these rows too)."""

from __future__ import annotations

from support.row_modules import check_rows_module


def test_its_rows_load_without_the_dataclasses_and_are_the_models_rows() -> None:
    check_rows_module("circuit_keys", "circuit")
