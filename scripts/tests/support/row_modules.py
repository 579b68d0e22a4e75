"""A feature's rows module (`model/*_keys.py`), checked against its dataclass module: the rows
load without the dataclasses, and both name the same rows, which key_rows gathers."""

from __future__ import annotations

import importlib
import subprocess
import sys

MODEL = "little_loops.fsm.definition.model"
PROBE = "import importlib, sys; importlib.import_module(sys.argv[1]); print(sorted(sys.modules))"


def check_rows_module(rows: str, model: str) -> None:
    """*rows* (say `circuit_keys`) loads in a fresh process without *model* (`circuit`), and
    *model* names the very rows of *rows*, each gathered by key_rows."""
    loaded = subprocess.run(
        [sys.executable, "-c", PROBE, f"{MODEL}.{rows}"], capture_output=True, text=True, check=True
    ).stdout
    assert f"'{MODEL}.{rows}'" in loaded
    assert f"'{MODEL}.{model}'" not in loaded
    rows_module = importlib.import_module(f"{MODEL}.{rows}")
    model_module = importlib.import_module(f"{MODEL}.{model}")
    gathered = importlib.import_module(f"{MODEL}.key_rows").ROWS
    assert model_module.KEYS is rows_module.KEYS
    assert rows_module.KEYS
    assert all(row in gathered for row in rows_module.KEYS)
